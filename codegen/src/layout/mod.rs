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
//! One file per output tree: [`root`] (`mod.rs`, `catalog.rs`, `features.rs`),
//! [`clientset`] (client-gen's `clientset/versioned`), [`fake`] (client-gen's
//! `clientset/versioned/fake`), [`listers`] (lister-gen), [`informers`] (informer-gen);
//! `applyconfiguration/` (applyconfiguration-gen) is [`crate::applyconfig::files`]. This
//! module holds what they share: the group-versions and their names, the per-type file,
//! the `mod.rs` files declaring groups and versions.
//!
//! The per-type files hold exactly what the derive emits next to a type (the same
//! emitters), with `use` lines for the types they name. A type that derives
//! `kubegen::Resource` already has its client, lister and informer beside it: its
//! per-type files re-export them instead.

mod clientset;
mod fake;
mod informers;
mod listers;
mod root;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::expand::names;
use crate::gates::Gates;
use crate::model::{Package, ResourceDef, TypeDef};
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
    let mut out = vec![root::module(config, !applyconfig.is_empty())];
    if let Some(gates) = gates {
        out.push(root::features(gates, &by_group));
    }
    out.extend(applyconfig);
    out.push(root::catalog(&gvs, config));
    out.extend(clientset::files(&gvs, &by_group, config));
    // As lister-gen and informer-gen, only group-versions with a lister / an informer get
    // a listers / informers package (create-only review groups get neither).
    let (lister_gvs, lister_groups) = with_resources(&gvs, ResourceDef::has_lister);
    out.extend(listers::files(&lister_gvs, &lister_groups, config));
    let (informer_gvs, informer_groups) = with_resources(&gvs, ResourceDef::has_informer);
    out.extend(informers::files(&informer_gvs, &informer_groups, config));
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

#[cfg(test)]
pub(super) mod tests {
    //! A small API tree for the layout tests: `example/v1` (a namespaced `Widget`, a
    //! cluster-scoped `Gadget`), `example/v2` (`Widget`), `review/v1` (a create-only
    //! `TokenReview`: no lister, no informer).

    use super::*;
    use crate::ctxt::Ctxt;
    use crate::lower::{self, Mode, PackageContext};
    use crate::model::SourceUses;
    use crate::plural::PluralExceptions;

    /// Packages and the module paths a [`LayoutConfig`] borrows.
    pub(in crate::layout) struct Input {
        packages: Vec<(VersionDir, Package)>,
        output_module: syn::Path,
        input_module: syn::Path,
    }

    fn package(relative: &str, group: &str, source: &str) -> (VersionDir, Package) {
        let file: syn::File = syn::parse_str(source).expect("test source parses");
        let relative = PathBuf::from(relative);
        let version = relative
            .file_name()
            .map(|v| v.to_string_lossy().into_owned())
            .unwrap_or_default();
        let exceptions = PluralExceptions::default();
        let ctx = PackageContext {
            mode: Mode::Cli,
            group: Some(group.to_owned()),
            version: Some(version.clone()),
            deep_copy: None,
            group_go_name: None,
            plural_exceptions: &exceptions,
        };
        let cx = Ctxt::new();
        let types = lower::lower_items(&file.items, &[], &ctx, &cx);
        cx.check().expect("test source lowers");
        let package = Package {
            group: Some(group.to_owned()),
            version: version.clone(),
            deep_copy: None,
            group_go_name: None,
            types,
            uses: vec![SourceUses::of(Vec::new(), &file.items)],
        };
        let dir = VersionDir {
            dir: Path::new("apis").join(&relative),
            relative,
            version,
        };
        (dir, package)
    }

    const WIDGET: &str = "
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
        /// +genclient
        pub struct Widget { pub metadata: ObjectMeta, pub spec: WidgetSpec }
        pub struct WidgetSpec { pub size: i32 }
    ";

    impl Input {
        /// The sample tree.
        pub(in crate::layout) fn sample() -> Self {
            let v1 = format!(
                "{WIDGET}
                /// +genclient
                /// +genclient:nonNamespaced
                pub struct Gadget {{ pub metadata: ObjectMeta }}"
            );
            let review = "
                use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
                /// +genclient
                /// +genclient:nonNamespaced
                /// +genclient:onlyVerbs=create
                pub struct TokenReview { pub metadata: ObjectMeta }
            ";
            Self::of(vec![
                package("example/v1", "example.com", &v1),
                package("example/v2", "example.com", WIDGET),
                package("review/v1", "review.example.com", review),
            ])
        }

        fn of(packages: Vec<(VersionDir, Package)>) -> Self {
            Self {
                packages,
                output_module: syn::parse_quote!(crate::client),
                input_module: syn::parse_quote!(crate::apis),
            }
        }

        /// Calls `f` with the default configuration (no fake, no apply configurations,
        /// no group features).
        pub(in crate::layout) fn with_config<T>(
            &self,
            f: impl FnOnce(&LayoutConfig<'_>) -> T,
        ) -> T {
            let config = LayoutConfig {
                output_module: &self.output_module,
                input_module: &self.input_module,
                with_fake: false,
                with_applyconfig: false,
                group_features: None,
            };
            f(&config)
        }

        /// The tree's files, with the default configuration changed by `change`.
        pub(in crate::layout) fn files(
            &self,
            change: impl FnOnce(&mut LayoutConfig<'_>),
        ) -> Vec<LayoutFile> {
            self.with_config(|config| {
                let mut config = LayoutConfig { ..*config };
                change(&mut config);
                files(&self.packages, &config)
            })
        }

        /// The tokens of `path` among `files`, as text.
        pub(in crate::layout) fn text(&self, files: &[LayoutFile], path: &str) -> String {
            files
                .iter()
                .find(|(p, _)| p == Path::new(path))
                .map(|(_, tokens)| tokens.to_string())
                .unwrap_or_else(|| panic!("no {path} among {:?}", paths(files)))
        }
    }

    /// The paths of `files`, sorted.
    pub(in crate::layout) fn paths(files: &[LayoutFile]) -> Vec<String> {
        let mut out: Vec<String> = files
            .iter()
            .map(|(p, _)| p.to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    /// The paths of `files` under the folder `prefix` (such as `"listers/"`), sorted.
    pub(in crate::layout) fn paths_under(files: &[LayoutFile], prefix: &str) -> Vec<String> {
        paths(files)
            .into_iter()
            .filter(|p| p.starts_with(prefix))
            .collect()
    }

    #[test]
    fn no_client_types_no_tree() {
        let input = Input::of(vec![package(
            "example/v1",
            "example.com",
            "pub struct Plain { pub size: i32 }",
        )]);
        assert!(input.files(|_| {}).is_empty());
    }

    #[test]
    fn every_file_is_laid_out_once_and_every_tree_declares_its_groups() {
        let input = Input::sample();
        let files = input.files(|c| c.with_fake = true);
        let all = paths(&files);
        let mut unique = all.clone();
        unique.dedup();
        assert_eq!(all, unique);
        assert_eq!(all.len(), 1 + 1 + 12 + 1 + 7 + 8, "{all:?}");
        let typed = input.text(&files, "clientset/versioned/typed/mod.rs");
        assert!(typed.contains("pub mod example ;"), "{typed}");
        assert!(typed.contains("pub mod review ;"), "{typed}");
        let listers = input.text(&files, "listers/mod.rs");
        assert!(!listers.contains("pub mod review ;"), "{listers}");
        let example = input.text(&files, "listers/example/mod.rs");
        assert!(example.contains("pub mod v1 ;"), "{example}");
        assert!(example.contains("pub mod v2 ;"), "{example}");
    }

    #[test]
    fn subsets_keep_the_group_versions_with_a_kept_resource() {
        let input = Input::sample();
        let gvs: Vec<GroupVersion<'_>> = input
            .packages
            .iter()
            .map(|(dir, p)| GroupVersion {
                group_mod: names::ident(&names::snake(
                    &dir.relative
                        .components()
                        .next()
                        .map_or_else(String::new, |c| {
                            c.as_os_str().to_string_lossy().into_owned()
                        }),
                )),
                group: p.group.clone().unwrap_or_default(),
                version_mod: names::ident(&dir.version),
                version: dir.version.clone(),
                accessor: String::new(),
                package: p,
            })
            .collect();
        let (kept, by_group) = with_resources(&gvs, ResourceDef::has_lister);
        assert_eq!(kept.len(), 2);
        assert_eq!(by_group.keys().collect::<Vec<_>>(), ["example"]);
        assert_eq!(gvs[2].api_version(), "review.example.com/v1");
    }
}
