//! The CLI's `applyconfiguration/` tree, in client-go's layout: `<group>/<version>/<type>.rs`
//! per configuration, each version's `mod.rs` re-exporting them.
//!
//! A Rust type's configuration names field types as its source does, so its file repeats
//! the `use` items of the type's source file (paths relative to the API tree made
//! absolute) after a glob import of the version module. A type deriving
//! `ApplyConfiguration` is re-exported instead. Aliases of k8s-openapi types (the
//! runtime's built-in tree) are generated from Kubernetes' definitions
//! ([`super::from_definitions`]) — only kubegen itself may implement the runtime's trait for
//! k8s-openapi types, so only its tree has such aliases.

use std::collections::BTreeMap;
use std::path::PathBuf;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::emit;
use super::from_definitions::{self, Builder};
use super::from_rust::{self, Generated};
use super::model::Root;
use crate::crd::k8s;
use crate::ctxt::Ctxt;
use crate::expand::names;
use crate::gates::Gates;
use crate::model::{Body, Package, SourceUses, TypeDef};
use crate::source::VersionDir;

/// A file below the output directory and its tokens.
pub type File = (PathBuf, TokenStream);

/// One version directory of the tree being assembled.
#[derive(Default)]
struct Version {
    /// File stem → tokens.
    files: BTreeMap<String, TokenStream>,
    /// `HasApplyConfiguration` impls of types applied whole, and their imports.
    whole: TokenStream,
    doc: String,
}

/// Every file of `applyconfiguration/` for `packages` (empty when none has resources).
/// With `gates` (`--group-features`), the module of each group named in `gated` is
/// compiled only with that group's feature. A group whose configurations other groups
/// only embed (`meta`: `ObjectMeta` is in every object) has no feature and stays ungated.
pub fn files(
    packages: &[(VersionDir, Package)],
    output_module: &syn::Path,
    input_module: &syn::Path,
    gates: Option<Gates<'_>>,
    gated: &[String],
    cx: &Ctxt,
) -> Vec<File> {
    let mut tree: BTreeMap<(String, String), Version> = BTreeMap::new();
    let mut roots: Vec<(String, Root)> = Vec::new();
    for (dir, pkg) in packages {
        if pkg.resources().next().is_none() {
            continue;
        }
        let Some(group_dir) = dir.relative.components().next() else {
            continue;
        };
        let group = names::snake(&group_dir.as_os_str().to_string_lossy());
        let (g, v) = (names::ident(&group), names::ident(&dir.version));
        let base = quote!(#input_module::#g::#v);
        let version = tree
            .entry((group.clone(), dir.version.clone()))
            .or_default();
        version.doc = format!(
            " Apply configurations of {}/{}.",
            pkg.group.as_deref().unwrap_or("core"),
            dir.version
        );
        for ty in &pkg.types {
            if let (Body::Alias(target), Some(r)) = (&ty.body, &ty.resource) {
                if let Some(def) = alias_definition(target) {
                    let ident = &ty.ident;
                    roots.push((
                        def,
                        Root {
                            api_version: r.api_version(),
                            kind: r.kind.clone(),
                            object: quote!(#base::#ident),
                            namespaced: r.namespaced(),
                            status: r.has_status(),
                            add_type_meta: false,
                            metadata: true,
                        },
                    ));
                }
                continue;
            }
            let Some(path) = public_path(pkg, ty, &base) else {
                // A private type cannot be named from the output tree.
                continue;
            };
            match from_rust::generated(ty, cx) {
                Some(Generated::Config(mut t)) => {
                    t.of = path.clone();
                    if let Some(root) = &mut t.root {
                        root.object = path;
                    }
                    let file = names::snake(&ty.ident.to_string());
                    let tokens = if ty.derived.apply_configuration {
                        let mut items = vec![t.ident.clone()];
                        if let Some(r) = &t.root {
                            let kind = names::snake(&r.kind);
                            items.push(format_ident!("extract_{}", kind));
                            if r.status {
                                items.push(format_ident!("extract_{}_status", kind));
                            }
                        }
                        quote!(pub use #base::{#(#items),*};)
                    } else {
                        let imports = imports(pkg, ty, &base, input_module, &g, &v);
                        let emitted = emit::apply_configuration(&t);
                        quote! {
                            #imports
                            #emitted
                        }
                    };
                    version.files.insert(file, tokens);
                }
                Some(Generated::Whole(_)) if !ty.derived.apply_configuration => {
                    version.whole.extend(emit::applied_whole(&path));
                }
                _ => {}
            }
        }
    }
    let mut values = TokenStream::new();
    if !roots.is_empty() {
        let builder = Builder::new(quote!(#output_module::applyconfiguration));
        let (located, value_defs) = builder.build(&roots);
        for l in located {
            let version = tree
                .entry((l.group.clone(), l.version.clone()))
                .or_default();
            if version.doc.is_empty() {
                version.doc = format!(" Apply configurations of {}/{}.", l.group, l.version);
            }
            version
                .files
                .insert(l.file.clone(), emit::apply_configuration(&l.ty));
        }
        for def in value_defs.iter().filter(|d| !k8s::since().contains_key(*d)) {
            values.extend(emit::applied_whole(&from_definitions::k8s_type(def)));
        }
    }
    if tree.is_empty() {
        return Vec::new();
    }
    layout(tree, values, gates, gated)
}

/// How the output tree names a type of the package: through the version module, which
/// re-exports its first-level modules' items (`pub use types::*;`) or declares them
/// `pub mod`; `None` for a private type.
fn public_path(pkg: &Package, ty: &TypeDef, base: &TokenStream) -> Option<TokenStream> {
    if matches!(ty.vis, syn::Visibility::Inherited) {
        return None;
    }
    let ident = &ty.ident;
    let Some((first, rest)) = ty.module.split_first() else {
        return Some(quote!(#base::#ident));
    };
    let globbed = pkg
        .uses
        .iter()
        .filter(|u| u.module.is_empty())
        .flat_map(|u| &u.items)
        .any(|item| {
            matches!(item.vis, syn::Visibility::Public(_))
                && matches!(&item.tree, syn::UseTree::Path(p)
                    if p.ident == *first && matches!(*p.tree, syn::UseTree::Glob(_)))
        });
    Some(if globbed {
        quote!(#base::#(#rest::)* #ident)
    } else {
        quote!(#base::#first::#(#rest::)* #ident)
    })
}

/// The definition an alias names (`k8s_openapi::api::apps::v1::Deployment`).
fn alias_definition(target: &syn::Type) -> Option<String> {
    let syn::Type::Path(p) = target else {
        return None;
    };
    let segments: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    k8s::resolve(&segments).ok().flatten()
}

fn layout(
    tree: BTreeMap<(String, String), Version>,
    values: TokenStream,
    gates: Option<Gates<'_>>,
    gated: &[String],
) -> Vec<File> {
    let dir = PathBuf::from("applyconfiguration");
    let mut out = Vec::new();
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ((group, version), v) in tree {
        groups
            .entry(group.clone())
            .or_default()
            .push(version.clone());
        let mods = v.files.keys().map(|f| names::ident(f));
        let (doc, whole) = (&v.doc, &v.whole);
        out.push((
            dir.join(&group).join(&version).join("mod.rs"),
            quote! {
                #![doc = #doc]
                #(mod #mods; pub use #mods::*;)*
                #whole
            },
        ));
        for (file, tokens) in v.files {
            let doc = format!(" The apply configuration of `{file}`.");
            out.push((
                dir.join(&group).join(&version).join(format!("{file}.rs")),
                quote! {
                    #![doc = #doc]
                    #tokens
                },
            ));
        }
    }
    for (group, versions) in &groups {
        let doc = format!(" Apply configurations of the {group} group.");
        let mods = versions.iter().map(|v| names::ident(v));
        out.push((
            dir.join(group).join("mod.rs"),
            quote! {
                #![doc = #doc]
                #(#[doc = " One version's apply configurations."] pub mod #mods;)*
            },
        ));
    }
    let mods = groups.keys().map(|g| {
        let m = names::ident(g);
        let gate = gates
            .filter(|_| gated.contains(g))
            .map(|gates| gates.group(&m));
        quote!(#[doc = " One group's apply configurations."] #gate pub mod #m;)
    });
    out.push((
        dir.join("mod.rs"),
        quote! {
            //! Apply configurations (client-go's `applyconfigurations`): typed server-side
            //! apply, every field optional.
            #(#mods)*
            #values
        },
    ));
    out
}

/// The imports of a Rust type's configuration file: the version module's public items,
/// then the `use` items of the type's source file with relative paths made absolute.
fn imports(
    pkg: &Package,
    ty: &TypeDef,
    base: &TokenStream,
    input_module: &syn::Path,
    g: &Ident,
    v: &Ident,
) -> TokenStream {
    let mut out = quote! {
        #[allow(unused_imports)]
        use #base::*;
    };
    let Some(source) = pkg.uses.iter().find(|u| u.module == ty.module) else {
        return out;
    };
    let mut file_module: Vec<Ident> = input_module
        .segments
        .iter()
        .map(|s| s.ident.clone())
        .collect();
    file_module.push(g.clone());
    file_module.push(v.clone());
    file_module.extend(source.module.iter().cloned());
    for item in &source.items {
        let attrs = item.attrs.iter().filter(|a| !a.path().is_ident("doc"));
        let tree = absolute(
            &item.tree,
            &file_module,
            source,
            item.leading_colon.is_some(),
        );
        out.extend(quote! {
            #(#attrs)*
            #[allow(unused_imports)]
            use #tree;
        });
    }
    out
}

/// A `use` tree of a file at `module` (absolute segments), rewritten to start at the crate
/// root when it starts with `self`, `super` or a module the file declares.
fn absolute(
    tree: &syn::UseTree,
    module: &[Ident],
    source: &SourceUses,
    leading_colon: bool,
) -> TokenStream {
    if leading_colon {
        return quote!(::#tree);
    }
    match tree {
        syn::UseTree::Path(p) if p.ident == "self" => prefixed(module, &p.tree),
        syn::UseTree::Path(p) if p.ident == "super" => {
            let up = &module[..module.len().saturating_sub(1)];
            match &*p.tree {
                syn::UseTree::Path(q) if q.ident == "super" => {
                    absolute(&p.tree, up, &SourceUses::default(), false)
                }
                rest => prefixed(up, rest),
            }
        }
        syn::UseTree::Path(p) if source.mods.contains(&p.ident) => {
            let mut path = module.to_vec();
            path.push(p.ident.clone());
            prefixed(&path, &p.tree)
        }
        syn::UseTree::Group(group) => {
            let items = group
                .items
                .iter()
                .map(|t| absolute(t, module, source, false));
            quote!({#(#items),*})
        }
        other => quote!(#other),
    }
}

/// `a::b::<tree>`.
fn prefixed(path: &[Ident], tree: &syn::UseTree) -> TokenStream {
    quote!(#(#path::)* #tree)
}
