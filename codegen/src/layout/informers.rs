//! The informers tree under `--output-dir`: `informers/externalversions/` with the typed
//! `SharedInformerFactory` (`factory.<group>().<version>().<resource>()`), one
//! `GroupInformers` per group, one `VersionInformers` per group-version and one file per
//! type that can be listed and watched.
//!
//! code-generator counterpart: informer-gen (`informers/externalversions/factory.go`,
//! `generic.go`, `<group>/interface.go`, `<group>/<version>/interface.go` and
//! `<type>.go`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quote::quote;

use super::{
    GroupVersion, LayoutConfig, LayoutFile, PerType, file_name, group_mods, group_name,
    module_ident, per_type_file, type_path, version_mods,
};
use crate::expand::{self, names};

/// Every file of `informers/`: `informers/mod.rs`, the `SharedInformerFactory` in
/// `externalversions/mod.rs`, per group a `mod.rs` with its `GroupInformers`, per
/// group-version a `mod.rs` with its `VersionInformers` and one file per type with an
/// informer (`gvs` and `by_group` hold only the group-versions that have one).
pub(super) fn files(
    gvs: &[&GroupVersion<'_>],
    by_group: &BTreeMap<String, Vec<&GroupVersion<'_>>>,
    config: &LayoutConfig<'_>,
) -> Vec<LayoutFile> {
    let root = Path::new("informers/externalversions");
    let generic = quote!(::kubegen::informers::SharedInformerFactory);
    let mut out = vec![(
        PathBuf::from("informers/mod.rs"),
        quote! {
            //! Typed informers.
            /// Informers and their factory.
            pub mod externalversions;
        },
    )];
    let group_mods = group_mods(by_group, config);
    let group_accessors = by_group.values().map(|gvs| {
        let g = &gvs[0].group_mod;
        let method = names::ident(&gvs[0].accessor);
        let doc = format!(" Informers of the {} group.", group_name(&gvs[0].group));
        let accessor = quote! {
            #[doc = #doc]
            pub fn #method(&self) -> #g::GroupInformers {
                #g::GroupInformers::new(self.inner.clone())
            }
        };
        config.accessor(g, &method, accessor)
    });
    let known = gvs.iter().flat_map(|gv| {
        gv.resources()
            .filter(|(_, r)| r.has_informer())
            .map(move |(ty, r)| {
                let path = type_path(config, gv, &ty.ident);
                let (group, version, plural) = (&r.group, &r.version, &r.plural);
                // Each arm instantiates the whole informer machinery for its type: only
                // the groups turned on pay for it.
                let gate = config.gates().map(|g| g.group(&gv.group_mod));
                quote! {
                    #gate
                    if requested == (#group, #version, #plural) {
                        self.inner.informer_for::<#path>();
                    }
                }
            })
    });
    // With every group's feature off, no arm reads `requested`.
    let unused_without_groups = config.gates().map(|_| quote!(#[allow(unused_variables)]));
    out.push((
        root.join("mod.rs"),
        quote! {
            //! The typed `SharedInformerFactory`:
            //! `factory.<group>().<version>().<resource>()`.
            #group_mods

            /// One shared informer per type, reached by group, version and resource
            /// (client-go's generated `SharedInformerFactory`). A thin view of the runtime's
            /// generic factory, which it dereferences to for `start`,
            /// `wait_for_cache_sync` and `shutdown`; cheap to clone. Several typed factories
            /// (this one and kubegen's built-in one) can share one generic factory.
            #[derive(Clone, Debug)]
            pub struct SharedInformerFactory {
                inner: #generic,
            }

            impl SharedInformerFactory {
                /// A factory over `client` resyncing every `default_resync` (zero: never).
                pub fn new(client: ::kubegen::client::Client, default_resync: ::std::time::Duration) -> Self {
                    Self { inner: #generic::new(client, default_resync) }
                }

                /// A view of an existing generic factory (built with its builder for
                /// namespace, tweak-list-params, per-type resync and transform options).
                pub fn from_generic(inner: #generic) -> Self {
                    Self { inner }
                }

                /// The generic factory.
                pub fn generic(&self) -> &#generic {
                    &self.inner
                }

                /// The informer for `gvr`, created on demand for the generated resources
                /// (client-go's `ForResource`); an error for any other resource not requested
                /// before.
                pub fn for_resource(
                    &self,
                    gvr: &::kubegen::__private::kube_core::GroupVersionResource,
                ) -> Result<::kubegen::informers::GenericInformer, ::kubegen::informers::FactoryError> {
                    #unused_without_groups
                    let requested = (gvr.group.as_str(), gvr.version.as_str(), gvr.resource.as_str());
                    #(#known)*
                    self.inner.for_resource(gvr)
                }

                #(#group_accessors)*
            }

            impl From<#generic> for SharedInformerFactory {
                fn from(inner: #generic) -> Self {
                    Self { inner }
                }
            }

            impl ::std::ops::Deref for SharedInformerFactory {
                type Target = #generic;

                fn deref(&self) -> &#generic {
                    &self.inner
                }
            }
        },
    ));
    for gvs in by_group.values() {
        let g = &gvs[0].group_mod;
        let mods = version_mods(gvs);
        let versions = gvs.iter().map(|gv| {
            let v = &gv.version_mod;
            let doc = format!(" Informers of {}.", gv.api_version());
            quote! {
                #[doc = #doc]
                pub fn #v(&self) -> #v::VersionInformers {
                    #v::VersionInformers::new(self.factory.clone())
                }
            }
        });
        let doc = format!(" Informers of the {} group.", group_name(&gvs[0].group));
        out.push((
            root.join(format!("{g}/mod.rs")),
            quote! {
                #![doc = #doc]
                #mods

                #[doc = #doc]
                #[derive(Clone, Debug)]
                pub struct GroupInformers {
                    factory: #generic,
                }

                impl GroupInformers {
                    /// The group's informers in `factory`.
                    pub fn new(factory: #generic) -> Self {
                        Self { factory }
                    }

                    #(#versions)*
                }
            },
        ));
    }
    let output = config.output_module;
    for gv in gvs {
        let dir = root.join(format!("{}/{}", gv.group_mod, gv.version_mod));
        let mut mods = Vec::new();
        let mut accessors = Vec::new();
        for (ty, r) in gv.resources().filter(|(_, r)| r.has_informer()) {
            let m = module_ident(ty);
            let informer_ty = names::informer(&ty.ident);
            let (new_fn, filtered_fn) = names::informer_constructors(&ty.ident);
            let exported = [informer_ty.clone(), new_fn, filtered_fn];
            let lister_import = r.has_lister().then(|| {
                let lister = names::lister(&ty.ident);
                let (g, v) = (&gv.group_mod, &gv.version_mod);
                quote!(use #output::listers::#g::#v::#lister;)
            });
            let doc = format!(" The {} informer.", r.kind);
            out.push((
                dir.join(file_name(ty)),
                per_type_file(
                    config,
                    gv,
                    ty,
                    PerType {
                        doc,
                        items: &exported,
                        extra_imports: quote!(#lister_import),
                        with_extensions: false,
                        emitted: expand::informer(ty, r),
                    },
                ),
            ));
            mods.push(quote!(mod #m; pub use #m::{#(#exported),*};));
            let accessor = names::accessor(r);
            let adoc = format!(" The `{}` informer.", r.plural);
            accessors.push(quote! {
                #[doc = #adoc]
                pub fn #accessor(&self) -> #informer_ty {
                    #informer_ty::new(self.factory.clone())
                }
            });
        }
        let doc = format!(" Informers of {}.", gv.api_version());
        out.push((
            dir.join("mod.rs"),
            quote! {
                #![doc = #doc]
                #(#mods)*

                #[doc = #doc]
                #[derive(Clone, Debug)]
                pub struct VersionInformers {
                    factory: #generic,
                }

                impl VersionInformers {
                    /// The version's informers in `factory`.
                    pub fn new(factory: #generic) -> Self {
                        Self { factory }
                    }

                    #(#accessors)*
                }
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Input, paths_under};

    #[test]
    fn the_factory_then_one_file_per_informable_type() {
        let input = Input::sample();
        let files = input.files(|_| {});
        let informers = paths_under(&files, "informers/");
        assert_eq!(
            informers,
            [
                "informers/externalversions/example/mod.rs",
                "informers/externalversions/example/v1/gadget.rs",
                "informers/externalversions/example/v1/mod.rs",
                "informers/externalversions/example/v1/widget.rs",
                "informers/externalversions/example/v2/mod.rs",
                "informers/externalversions/example/v2/widget.rs",
                "informers/externalversions/mod.rs",
                "informers/mod.rs",
            ]
        );
        let factory = input.text(&files, "informers/externalversions/mod.rs");
        assert!(factory.contains("pub fn example (& self)"), "{factory}");
        assert!(!factory.contains("pub fn review"), "{factory}");
        let widget = input.text(&files, "informers/externalversions/example/v1/widget.rs");
        assert!(
            widget.contains("use crate :: client :: listers :: example :: v1 :: WidgetLister"),
            "{widget}"
        );
    }
}
