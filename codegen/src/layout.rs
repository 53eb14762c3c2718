//! client-go's layout under `--output-dir`: what spans types.
//!
//! ```text
//! mod.rs                                          pub mod clientset, informers, listers
//! clientset/versioned/mod.rs                      Clientset: one accessor per group-version
//! clientset/versioned/typed/<group>/<version>/    <Group><Version>Client + one file per type
//! clientset/versioned/fake/mod.rs                 (--with-fake) Clientset over an in-process server
//! listers/<group>/<version>/                      one file per type
//! informers/externalversions/mod.rs               SharedInformerFactory: factory.<group>().<version>().<plural>()
//! informers/externalversions/<group>/<version>/   one file per type
//! ```
//!
//! The per-type files hold exactly what the derive emits next to a type (the same
//! emitters), with `use` lines for the types they name. A type that derives
//! `kubegen::Resource` already has its client, lister and informer beside it: its
//! per-type files re-export them instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::expand::{self, names};
use crate::gates::Gates;
use crate::model::{Package, ResourceDef, Scope, TypeDef};
use crate::source::VersionDir;

/// One group-version of the tree, with the names the layout uses.
struct GroupVersion<'a> {
    /// The group's directory (`samplecontroller`): module name in every tree.
    group_mod: Ident,
    /// `+groupName` (`samplecontroller.k8s.io`).
    group: String,
    version_mod: Ident,
    version: String,
    /// Accessor stem (`samplecontroller`, or `+groupGoName` in snake case).
    accessor: String,
    package: &'a Package,
}

impl GroupVersion<'_> {
    fn resources(&self) -> impl Iterator<Item = (&TypeDef, &ResourceDef)> {
        self.package.resources()
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `SamplecontrollerV1alpha1Client`.
    fn client_name(&self) -> Ident {
        format_ident!(
            "{}{}Client",
            names::upper_first(&camel(&self.accessor)),
            names::upper_first(&self.version)
        )
    }
}

fn camel(snake: &str) -> String {
    snake.split('_').map(names::upper_first).collect()
}

/// What the layout needs from the configuration.
pub struct LayoutConfig<'a> {
    /// Rust path of the output directory (`crate::client`).
    pub output_module: &'a syn::Path,
    /// Rust path of the apis root (`crate::apis`).
    pub input_module: &'a syn::Path,
    /// Generate `clientset/versioned/fake`.
    pub with_fake: bool,
    /// Generate `applyconfiguration/`.
    pub with_applyconfig: bool,
    /// Put each group behind a cargo feature of this crate (`--group-features`).
    pub group_features: Option<&'a str>,
}

impl LayoutConfig<'_> {
    fn gates(&self) -> Option<Gates<'_>> {
        self.group_features.map(|krate| Gates { krate })
    }

    /// A group's accessor method, behind the group's feature when there are features.
    fn accessor(&self, group_mod: &Ident, method: &Ident, accessor: TokenStream) -> TokenStream {
        match self.gates() {
            Some(gates) => gates.accessor(self.output_module, group_mod, method, accessor),
            None => accessor,
        }
    }
}

/// A file to render: path below the output directory and its tokens.
pub type LayoutFile = (PathBuf, TokenStream);

/// Every file of the output tree; empty when no package has `+genclient` types.
pub fn files(packages: &[(VersionDir, Package)], config: &LayoutConfig<'_>) -> Vec<LayoutFile> {
    let gvs: Vec<GroupVersion<'_>> = packages
        .iter()
        .filter(|(_, p)| p.resources().next().is_some())
        .filter_map(|(dir, p)| {
            let group_dir = dir.relative.components().next()?;
            let group_dir = group_dir.as_os_str().to_string_lossy().into_owned();
            let accessor = p
                .group_go_name
                .as_deref()
                .map_or_else(|| names::snake(&group_dir), names::snake);
            Some(GroupVersion {
                group_mod: names::ident(&names::snake(&group_dir)),
                group: p.group.clone().unwrap_or_default(),
                version_mod: names::ident(&dir.version),
                version: dir.version.clone(),
                accessor,
                package: p,
            })
        })
        .collect();
    if gvs.is_empty() {
        return Vec::new();
    }
    let mut by_group: BTreeMap<String, Vec<&GroupVersion<'_>>> = BTreeMap::new();
    for gv in &gvs {
        by_group
            .entry(gv.group_mod.to_string())
            .or_default()
            .push(gv);
    }
    let gates = config.gates();
    let applyconfig = if config.with_applyconfig {
        let cx = crate::ctxt::Ctxt::new();
        let gated: Vec<String> = match gates {
            Some(_) => by_group.keys().cloned().collect(),
            None => Vec::new(),
        };
        let files = crate::applyconfig::files::files(
            packages,
            config.output_module,
            config.input_module,
            gates,
            &gated,
            &cx,
        );
        // Malformed serde attributes were reported when the types were read.
        cx.discard();
        files
    } else {
        Vec::new()
    };
    let applyconfig_mod = (!applyconfig.is_empty()).then(|| {
        let gate = gates.map(|g| g.applyconfig());
        quote! {
            /// Apply configurations: typed server-side apply.
            #gate
            pub mod applyconfiguration;
        }
    });
    let features_mod = gates.map(|_| {
        quote! {
            /// The cargo features of the API groups.
            pub mod features;
        }
    });
    let mut out = vec![(
        PathBuf::from("mod.rs"),
        quote! {
            //! Generated clientset, listers and informers (client-go's layout).
            #applyconfig_mod
            /// Every resource of the tree (`catalog::RESOURCES`).
            pub mod catalog;
            /// Typed clients.
            pub mod clientset;
            #features_mod
            /// Typed informers and their factory.
            pub mod informers;
            /// Typed listers.
            pub mod listers;
        },
    )];
    if let Some(gates) = gates {
        let groups = by_group.values().map(|gvs| &gvs[0].group_mod);
        out.push((PathBuf::from("features.rs"), gates.file(groups)));
    }
    out.extend(applyconfig);
    out.push((
        PathBuf::from("catalog.rs"),
        expand::catalog(
            gvs.iter().flat_map(|gv| {
                gv.resources()
                    .map(|(ty, r)| (type_path(config, gv, &ty.ident), r))
            }),
            &expand::types_macro_name(config.output_module),
        ),
    ));
    out.extend(clientset(&gvs, &by_group, config));
    // As lister-gen and informer-gen, only group-versions with a lister / an informer get
    // a listers / informers package (create-only review groups get neither).
    let (lister_gvs, lister_groups) = with_resources(&gvs, ResourceDef::has_lister);
    out.extend(listers(&lister_gvs, &lister_groups, config));
    let (informer_gvs, informer_groups) = with_resources(&gvs, ResourceDef::has_informer);
    out.extend(informers(&informer_gvs, &informer_groups, config));
    out
}

/// Group-versions with at least one resource passing `keep`, and the same by group.
type Subset<'g, 'a> = (
    Vec<&'g GroupVersion<'a>>,
    BTreeMap<String, Vec<&'g GroupVersion<'a>>>,
);

fn with_resources<'g, 'a>(
    gvs: &'g [GroupVersion<'a>],
    keep: fn(&ResourceDef) -> bool,
) -> Subset<'g, 'a> {
    let kept: Vec<&GroupVersion<'_>> = gvs
        .iter()
        .filter(|gv| gv.resources().any(|(_, r)| keep(r)))
        .collect();
    let mut by_group: BTreeMap<String, Vec<&GroupVersion<'_>>> = BTreeMap::new();
    for gv in &kept {
        by_group
            .entry(gv.group_mod.to_string())
            .or_default()
            .push(gv);
    }
    (kept, by_group)
}

fn type_path(config: &LayoutConfig<'_>, gv: &GroupVersion<'_>, ident: &Ident) -> TokenStream {
    let input = config.input_module;
    let (g, v) = (&gv.group_mod, &gv.version_mod);
    quote!(#input::#g::#v::#ident)
}

/// `use` lines for a per-type file: the type, and single-segment input/result types of
/// its extension methods (they live in the same version module).
fn type_imports(
    config: &LayoutConfig<'_>,
    gv: &GroupVersion<'_>,
    ty: &TypeDef,
    with_extensions: bool,
) -> TokenStream {
    let mut idents = vec![ty.ident.clone()];
    if let Some(r) = ty.resource.as_ref().filter(|_| with_extensions) {
        for e in &r.extensions {
            for path in [&e.input, &e.result].into_iter().flatten() {
                if let Some(ident) = path.get_ident().filter(|i| !idents.contains(i)) {
                    idents.push(ident.clone());
                }
            }
        }
    }
    idents
        .iter()
        .map(|i| {
            let path = type_path(config, gv, i);
            quote!(use #path;)
        })
        .collect()
}

fn file_name(ty: &TypeDef) -> String {
    format!("{}.rs", names::snake(&ty.ident.to_string()))
}

fn module_ident(ty: &TypeDef) -> Ident {
    names::ident(&names::snake(&ty.ident.to_string()))
}

/// What goes into one per-type file.
struct PerType<'a> {
    doc: String,
    /// The items it defines (re-exported instead when the type derives them).
    items: &'a [Ident],
    extra_imports: TokenStream,
    /// Whether it names the extension methods' input and result types (the client).
    with_extensions: bool,
    emitted: TokenStream,
}

/// A per-type file: the emitted items, or a re-export of what the type's derive emitted.
fn per_type_file(
    config: &LayoutConfig<'_>,
    gv: &GroupVersion<'_>,
    ty: &TypeDef,
    file: PerType<'_>,
) -> TokenStream {
    let doc = &file.doc;
    if ty.derived.resource {
        let paths = file.items.iter().map(|i| type_path(config, gv, i));
        return quote! {
            #![doc = #doc]
            #(pub use #paths;)*
        };
    }
    let imports = type_imports(config, gv, ty, file.with_extensions);
    let (extra_imports, emitted) = (&file.extra_imports, &file.emitted);
    quote! {
        #![doc = #doc]
        #imports
        #extra_imports
        #emitted
    }
}

fn mod_list<'a>(mods: impl Iterator<Item = (&'a Ident, String)>) -> TokenStream {
    mods.map(|(m, doc)| quote!(#[doc = #doc] pub mod #m;))
        .collect()
}

/// `pub mod <version>;` for each version of one group.
fn version_mods(gvs: &[&GroupVersion<'_>]) -> TokenStream {
    mod_list(
        gvs.iter()
            .map(|gv| (&gv.version_mod, format!(" {}.", gv.api_version()))),
    )
}

/// `pub mod <group>;` for each group (behind its feature with `--group-features`).
fn group_mods(
    by_group: &BTreeMap<String, Vec<&GroupVersion<'_>>>,
    config: &LayoutConfig<'_>,
) -> TokenStream {
    by_group
        .values()
        .map(|gvs| {
            let m = &gvs[0].group_mod;
            let doc = format!(" The {} group.", group_name(&gvs[0].group));
            let gate = config.gates().map(|g| g.group(m));
            quote!(#[doc = #doc] #gate pub mod #m;)
        })
        .collect()
}

/// `apps`, `networking.k8s.io`, or `core` for the legacy group's empty name.
fn group_name(group: &str) -> &str {
    if group.is_empty() { "core" } else { group }
}

/// `<dir>/mod.rs` declaring every group, and `<dir>/<group>/mod.rs` declaring its
/// versions (the clientset's `typed/` and `listers/` trees).
fn group_tree(
    dir: &Path,
    root_doc: &str,
    group_doc: &str,
    by_group: &BTreeMap<String, Vec<&GroupVersion<'_>>>,
    config: &LayoutConfig<'_>,
) -> Vec<LayoutFile> {
    let groups = group_mods(by_group, config);
    let root_doc = format!(" {root_doc}");
    let mut out = vec![(
        dir.join("mod.rs"),
        quote! {
            #![doc = #root_doc]
            #groups
        },
    )];
    for gvs in by_group.values() {
        let g = &gvs[0].group_mod;
        let mods = version_mods(gvs);
        let doc = format!(" {group_doc} {} group.", group_name(&gvs[0].group));
        out.push((
            dir.join(format!("{g}/mod.rs")),
            quote! {
                #![doc = #doc]
                #mods
            },
        ));
    }
    out
}

fn clientset(
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
        out.push((root.join("fake/mod.rs"), fake(gvs, config)));
    }
    out
}

fn fake(gvs: &[GroupVersion<'_>], config: &LayoutConfig<'_>) -> TokenStream {
    let fake = quote!(::kubegen_testserver::fake);
    let registrations = gvs.iter().flat_map(|gv| {
        gv.resources().map(move |(ty, r)| {
            let path = type_path(config, gv, &ty.ident);
            let status = r.has_status_field;
            quote!(fake.register::<#path>(#status);)
        })
    });
    quote! {
        //! A [`Clientset`] served by an in-process fake API server (client-go's
        //! `fake.NewSimpleClientset`): requests are recorded as actions, reactors can
        //! answer them, and objects can be seeded with `Clientset::add`. Needs the
        //! `kubegen-testserver` crate.

        /// The clientset over an in-process server; dereferences to the real
        /// [`super::Clientset`].
        #[derive(Clone, Debug)]
        pub struct Clientset {
            clientset: super::Clientset,
            fake: #fake::Fake,
        }

        impl Clientset {
            /// An empty fake server that serves every generated resource.
            pub fn new() -> Self {
                let fake = #fake::Fake::new();
                #(#registrations)*
                Self {
                    clientset: super::Clientset::new(fake.client()),
                    fake,
                }
            }

            /// Seeds `obj` without recording an action (client-go's tracker `Add`).
            pub fn add<K: ::kubegen::Object>(&self, obj: &K) -> Result<(), #fake::FakeError> {
                self.fake.add(obj)
            }

            /// The fake server: its action log and reactors.
            pub fn fake(&self) -> &#fake::Fake {
                &self.fake
            }
        }

        impl Default for Clientset {
            fn default() -> Self {
                Self::new()
            }
        }

        impl ::std::ops::Deref for Clientset {
            type Target = super::Clientset;

            fn deref(&self) -> &super::Clientset {
                &self.clientset
            }
        }

        /// An empty fake clientset (client-go's `NewSimpleClientset`).
        pub fn new_simple_clientset() -> Clientset {
            Clientset::new()
        }
    }
}

fn listers(
    gvs: &[&GroupVersion<'_>],
    by_group: &BTreeMap<String, Vec<&GroupVersion<'_>>>,
    config: &LayoutConfig<'_>,
) -> Vec<LayoutFile> {
    let mut out = Vec::new();
    out.extend(group_tree(
        Path::new("listers"),
        "Typed listers per group and version.",
        "Listers of the",
        by_group,
        config,
    ));
    for gv in gvs {
        let dir = PathBuf::from(format!("listers/{}/{}", gv.group_mod, gv.version_mod));
        let mut mods = Vec::new();
        for (ty, r) in gv.resources().filter(|(_, r)| r.has_lister()) {
            let m = module_ident(ty);
            let mut exported = vec![names::lister(&ty.ident)];
            if r.scope == Scope::Namespaced {
                exported.push(names::namespace_lister(&ty.ident));
            }
            let doc = format!(" The {} lister.", r.kind);
            out.push((
                dir.join(file_name(ty)),
                per_type_file(
                    config,
                    gv,
                    ty,
                    PerType {
                        doc,
                        items: &exported,
                        extra_imports: TokenStream::new(),
                        with_extensions: false,
                        emitted: expand::lister(ty, r),
                    },
                ),
            ));
            mods.push(quote!(mod #m; pub use #m::{#(#exported),*};));
        }
        let doc = format!(" Listers of {}.", gv.api_version());
        out.push((
            dir.join("mod.rs"),
            quote! {
                #![doc = #doc]
                #(#mods)*
            },
        ));
    }
    out
}

fn informers(
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
