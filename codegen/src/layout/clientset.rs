//! The clientset tree under `--output-dir`: `clientset/versioned/` with the `Clientset`
//! (one accessor per group-version), `typed/<group>/<version>/` with the group-version's
//! client (one accessor per resource) and one file per type.
//!
//! code-generator counterpart: client-gen (`clientset/versioned/clientset.go`,
//! `typed/<group>/<version>/<group>_client.go` and `<type>.go`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{
    GroupVersion, LayoutConfig, LayoutFile, PerType, file_name, group_tree, module_ident,
    per_type_file,
};
use crate::expand::{self, names};
use crate::model::Scope;

/// Every file of `clientset/`: `clientset/mod.rs`, the `Clientset` in
/// `clientset/versioned/mod.rs`, `typed/` with one client per group-version and one file per
/// type, and `fake/` with `--with-fake`.
pub(super) fn files(
    gvs: &[GroupVersion<'_>],
    by_group: &BTreeMap<String, Vec<&GroupVersion<'_>>>,
    config: &LayoutConfig<'_>,
) -> Vec<LayoutFile> {
    let root = Path::new("clientset/versioned");
    let client = quote!(::kubegen::client::Client);
    let mut out = vec![(
        PathBuf::from("clientset/mod.rs"),
        quote! {
            //! Typed clientsets.
            /// The versioned clientset.
            pub mod versioned;
        },
    )];
    let accessors = gvs.iter().map(|gv| {
        let (g, v) = (&gv.group_mod, &gv.version_mod);
        let name = gv.client_name();
        let method = format_ident!("{}_{}", gv.accessor, gv.version);
        let doc = format!(" The {} client.", gv.api_version());
        let accessor = quote! {
            #[doc = #doc]
            pub fn #method(&self) -> typed::#g::#v::#name {
                typed::#g::#v::#name::new(self.client.clone())
            }
        };
        config.accessor(g, &method, accessor)
    });
    let fake_mod = config.with_fake.then(|| {
        quote! {
            /// The clientset over an in-process fake server.
            pub mod fake;
        }
    });
    out.push((
        root.join("mod.rs"),
        quote! {
            //! The clientset: one typed client per group-version.
            #fake_mod
            /// Typed clients per group and version.
            pub mod typed;

            /// Typed clients for every group-version (client-go's `Clientset`); cheap to clone.
            #[derive(Clone, Debug)]
            pub struct Clientset {
                client: #client,
            }

            impl Clientset {
                /// A clientset over `client`.
                pub fn new(client: #client) -> Self {
                    Self { client }
                }

                /// The underlying client.
                pub fn client(&self) -> &#client {
                    &self.client
                }

                #(#accessors)*
            }
        },
    ));
    out.extend(group_tree(
        &root.join("typed"),
        "Typed clients per group and version.",
        "Typed clients of the",
        by_group,
        config,
    ));
    for gv in gvs {
        let dir = root.join(format!("typed/{}/{}", gv.group_mod, gv.version_mod));
        let name = gv.client_name();
        let mut mods = Vec::new();
        let mut accessors = Vec::new();
        for (ty, r) in gv.resources() {
            let m = module_ident(ty);
            let client_ty = names::client(&ty.ident);
            let doc = format!(" The typed client for {}.", r.kind);
            out.push((
                dir.join(file_name(ty)),
                per_type_file(
                    config,
                    gv,
                    ty,
                    PerType {
                        doc,
                        items: std::slice::from_ref(&client_ty),
                        extra_imports: TokenStream::new(),
                        with_extensions: true,
                        emitted: expand::typed_client(ty, r),
                    },
                ),
            ));
            mods.push(quote!(mod #m; pub use #m::#client_ty;));
            let accessor = names::accessor(r);
            let adoc = format!(" The `{}` client.", r.plural);
            accessors.push(match r.scope {
                Scope::Namespaced => quote! {
                    #[doc = #adoc]
                    /// `namespace` `""` means every namespace.
                    pub fn #accessor(&self, namespace: &str) -> #client_ty {
                        #client_ty::new(self.client.clone(), namespace)
                    }
                },
                Scope::Cluster => quote! {
                    #[doc = #adoc]
                    pub fn #accessor(&self) -> #client_ty {
                        #client_ty::new(self.client.clone())
                    }
                },
            });
        }
        let doc = format!(" Typed clients of {}.", gv.api_version());
        let sdoc = format!(
            " The {} client: one accessor per resource.",
            gv.api_version()
        );
        out.push((
            dir.join("mod.rs"),
            quote! {
                #![doc = #doc]
                #(#mods)*

                #[doc = #sdoc]
                #[derive(Clone, Debug)]
                pub struct #name {
                    client: #client,
                }

                impl #name {
                    /// A client over `client`.
                    pub fn new(client: #client) -> Self {
                        Self { client }
                    }

                    #(#accessors)*
                }
            },
        ));
    }
    if config.with_fake {
        out.push(super::fake::file(root, gvs, config));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Input, paths_under};

    #[test]
    fn one_client_per_group_version_and_one_file_per_type() {
        let input = Input::sample();
        let files = input.files(|_| {});
        let clientset = paths_under(&files, "clientset/");
        assert_eq!(
            clientset,
            [
                "clientset/mod.rs",
                "clientset/versioned/mod.rs",
                "clientset/versioned/typed/example/mod.rs",
                "clientset/versioned/typed/example/v1/gadget.rs",
                "clientset/versioned/typed/example/v1/mod.rs",
                "clientset/versioned/typed/example/v1/widget.rs",
                "clientset/versioned/typed/example/v2/mod.rs",
                "clientset/versioned/typed/example/v2/widget.rs",
                "clientset/versioned/typed/mod.rs",
                "clientset/versioned/typed/review/mod.rs",
                "clientset/versioned/typed/review/v1/mod.rs",
                "clientset/versioned/typed/review/v1/token_review.rs",
            ]
        );
        let versioned = input.text(&files, "clientset/versioned/mod.rs");
        assert!(versioned.contains("pub fn example_v1"), "{versioned}");
        assert!(versioned.contains("pub fn review_v1"), "{versioned}");
        assert!(!versioned.contains("pub mod fake"), "{versioned}");
        let v1 = input.text(&files, "clientset/versioned/typed/example/v1/mod.rs");
        assert!(v1.contains("pub struct ExampleV1Client"), "{v1}");
        assert!(v1.contains("namespace : & str"), "{v1}");
    }
}
