//! What a name in a field type refers to, as rustc would resolve it for the parts the
//! generators read: the `use` items of the field's file (`use ... as metav1;`,
//! `use std::collections::BTreeMap as Map;`, groups), the package's own re-exports
//! (`pub use types::Spec as WidgetSpec;`) and its generic type aliases
//! (`pub type Labels = BTreeMap<String, String>;`, `type Pair<T> = (T, T);`).
//!
//! A path is expanded one step at a time ([`Resolver::expand`]): its first segment, when a
//! `use` of the file binds it, is replaced by what the `use` names; a path that then leads
//! into the package (`crate::`, `self::`, `super::`, a module the package declares) and
//! ends at one of the package's types is that type, named by its identifier as the package
//! keys its types. Glob imports (`use super::*;`) bind no single name: the package's types
//! are found by identifier anyway, and an external glob leaves the name unresolved, as
//! before. Type aliases are expanded by [`substitute`] where their definition is read.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::SourceUses;

/// How far re-exports are followed (`pub use a::B as C;` chains); a cycle stops here.
const MAX_STEPS: usize = 8;

/// The names one file's `use` items bind, to the full paths they name.
#[derive(Clone, Debug, Default)]
struct FileScope {
    /// The file's module below the version module.
    module: Vec<String>,
    /// Bound name → the path it names (segment identifiers).
    bindings: BTreeMap<String, Vec<syn::Ident>>,
}

/// The `use` bindings of every file of a package, and the package's type and module names.
#[derive(Clone, Debug, Default)]
pub struct Resolver {
    files: Vec<FileScope>,
    types: BTreeSet<String>,
    mods: BTreeSet<String>,
}

impl Resolver {
    /// The resolver of a package with `types` (their identifiers) and the `use` items of
    /// its files.
    pub fn new<'a>(types: impl IntoIterator<Item = &'a syn::Ident>, uses: &[SourceUses]) -> Self {
        let mut mods = BTreeSet::new();
        let files = uses
            .iter()
            .map(|file| {
                mods.extend(file.mods.iter().map(ToString::to_string));
                mods.extend(file.module.iter().map(ToString::to_string));
                let mut bindings = BTreeMap::new();
                for item in &file.items {
                    bind(&item.tree, &mut Vec::new(), &mut bindings);
                }
                FileScope {
                    module: file.module.iter().map(ToString::to_string).collect(),
                    bindings,
                }
            })
            .collect();
        Self {
            files,
            types: types.into_iter().map(ToString::to_string).collect(),
            mods,
        }
    }

    /// `path` as written in the file at `module`, with `use` renames followed: `None` when
    /// no `use` of the file binds its first segment (the path means what it says). A path
    /// that ends at a type of the package comes back as that type's bare identifier (its
    /// generic arguments kept).
    pub fn expand(&self, module: &[syn::Ident], path: &syn::Path) -> Option<syn::Path> {
        let module: Vec<String> = module.iter().map(ToString::to_string).collect();
        let mut current = path.clone();
        let mut changed = false;
        for _ in 0..MAX_STEPS {
            let first = current.segments.first()?.ident.to_string();
            let next = self
                .scope(&module)
                .and_then(|s| s.bindings.get(&first))
                .map(|target| splice(target, &current));
            if let Some(next) = next {
                current = next;
                changed = true;
            }
            if !self.is_internal(&current) {
                break;
            }
            let last = current.segments.last()?.clone();
            if self.types.contains(&last.ident.to_string()) {
                return Some(syn::Path::from(last));
            }
            // A re-export inside the package (`pub use inner::Spec as WidgetSpec;`):
            // follow the binding of that name in whichever file makes it.
            let name = last.ident.to_string();
            let Some(target) = self.files.iter().find_map(|f| f.bindings.get(&name)) else {
                break;
            };
            current = splice(target, &syn::Path::from(last));
            changed = true;
        }
        changed.then_some(current)
    }

    fn scope(&self, module: &[String]) -> Option<&FileScope> {
        self.files.iter().find(|f| f.module == module)
    }

    /// Whether `path` leads into the package: `crate`, `self`, `super` or one of its
    /// modules first.
    fn is_internal(&self, path: &syn::Path) -> bool {
        path.leading_colon.is_none()
            && path.segments.first().is_some_and(|s| {
                let first = s.ident.to_string();
                matches!(first.as_str(), "crate" | "self" | "super") || self.mods.contains(&first)
            })
    }
}

/// Records the names a `use` tree binds.
fn bind(
    tree: &syn::UseTree,
    prefix: &mut Vec<syn::Ident>,
    out: &mut BTreeMap<String, Vec<syn::Ident>>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.clone());
            bind(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            if let Some(last) = prefix.last() {
                out.insert(last.to_string(), prefix.clone());
            }
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.clone());
            out.insert(n.ident.to_string(), path);
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.clone());
            }
            out.insert(r.rename.to_string(), path);
        }
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => {
            for t in &g.items {
                bind(t, prefix, out);
            }
        }
    }
}

/// `path` with its first segment replaced by `target`; the first segment's generic
/// arguments move to `target`'s last segment.
fn splice(target: &[syn::Ident], path: &syn::Path) -> syn::Path {
    let mut segments: syn::punctuated::Punctuated<syn::PathSegment, syn::Token![::]> =
        target.iter().cloned().map(syn::PathSegment::from).collect();
    let mut rest = path.segments.iter();
    if let (Some(first), Some(last)) = (rest.next(), segments.last_mut()) {
        last.arguments = first.arguments.clone();
    }
    segments.extend(rest.cloned());
    syn::Path {
        leading_colon: None,
        segments,
    }
}

/// The target of a generic type alias with its parameters replaced by `args` (missing
/// arguments leave their parameter as written).
pub fn substitute(target: &syn::Type, generics: &syn::Generics, args: &[&syn::Type]) -> syn::Type {
    let params: BTreeMap<String, syn::Type> = generics
        .type_params()
        .zip(args)
        .map(|(p, a)| (p.ident.to_string(), (*a).clone()))
        .collect();
    if params.is_empty() {
        return target.clone();
    }
    replace(target, &params)
}

fn replace(ty: &syn::Type, params: &BTreeMap<String, syn::Type>) -> syn::Type {
    let mut ty = ty.clone();
    match &mut ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            if p.path.leading_colon.is_none()
                && p.path.segments.len() == 1
                && matches!(p.path.segments[0].arguments, syn::PathArguments::None)
                && let Some(arg) = params.get(&p.path.segments[0].ident.to_string())
            {
                return arg.clone();
            }
            for segment in &mut p.path.segments {
                if let syn::PathArguments::AngleBracketed(a) = &mut segment.arguments {
                    for arg in &mut a.args {
                        if let syn::GenericArgument::Type(t) = arg {
                            *t = replace(t, params);
                        }
                    }
                }
            }
        }
        syn::Type::Reference(r) => *r.elem = replace(&r.elem, params),
        syn::Type::Paren(p) => *p.elem = replace(&p.elem, params),
        syn::Type::Group(g) => *g.elem = replace(&g.elem, params),
        syn::Type::Array(a) => *a.elem = replace(&a.elem, params),
        syn::Type::Slice(s) => *s.elem = replace(&s.elem, params),
        syn::Type::Tuple(t) => {
            for elem in &mut t.elems {
                *elem = replace(elem, params);
            }
        }
        _ => {}
    }
    ty
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;

    use super::*;

    fn text(path: &syn::Path) -> String {
        path.to_token_stream().to_string().replace(' ', "")
    }

    fn resolver(types: &[&str], files: &[(&[&str], &str, &[&str])]) -> Resolver {
        let idents: Vec<syn::Ident> = types
            .iter()
            .map(|t| syn::Ident::new(t, proc_macro2::Span::call_site()))
            .collect();
        let uses: Vec<SourceUses> = files
            .iter()
            .map(|(module, src, mods)| {
                let file: syn::File = syn::parse_str(src).expect("file");
                let mut u = SourceUses::of(
                    module
                        .iter()
                        .map(|m| syn::Ident::new(m, proc_macro2::Span::call_site()))
                        .collect(),
                    &file.items,
                );
                u.mods.extend(
                    mods.iter()
                        .map(|m| syn::Ident::new(m, proc_macro2::Span::call_site())),
                );
                u
            })
            .collect();
        Resolver::new(&idents, &uses)
    }

    fn expand(r: &Resolver, module: &[&str], path: &str) -> Option<String> {
        let module: Vec<syn::Ident> = module
            .iter()
            .map(|m| syn::Ident::new(m, proc_macro2::Span::call_site()))
            .collect();
        let path: syn::Path = syn::parse_str(path).expect("path");
        r.expand(&module, &path).map(|p| text(&p))
    }

    #[test]
    fn module_and_item_renames_and_groups_are_followed() {
        let r = resolver(
            &["WidgetSpec"],
            &[(
                &[],
                "use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
                 use std::collections::{BTreeMap as Map, BTreeSet};
                 use k8s_openapi::api::core::v1::{self as corev1};",
                &[],
            )],
        );
        assert_eq!(
            expand(&r, &[], "metav1::ObjectMeta").as_deref(),
            Some("k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta")
        );
        assert_eq!(
            expand(&r, &[], "Map<String, Vec<u8>>").as_deref(),
            Some("std::collections::BTreeMap<String,Vec<u8>>")
        );
        assert_eq!(
            expand(&r, &[], "corev1::PodSpec").as_deref(),
            Some("k8s_openapi::api::core::v1::PodSpec")
        );
        assert_eq!(
            expand(&r, &[], "BTreeSet<String>").as_deref(),
            Some("std::collections::BTreeSet<String>")
        );
        assert_eq!(expand(&r, &[], "WidgetSpec"), None, "a bare package type");
        assert_eq!(
            expand(&r, &[], "other::Thing"),
            None,
            "nothing binds `other`"
        );
    }

    #[test]
    fn paths_into_the_package_and_re_exports_end_at_its_types() {
        let r = resolver(
            &["Spec", "Status"],
            &[
                (&[], "pub use types::Spec as WidgetSpec;", &["types"]),
                (
                    &["types"],
                    "use super::WidgetSpec as Renamed; use crate::apis::example::v1::Status;",
                    &[],
                ),
            ],
        );
        assert_eq!(
            expand(&r, &[], "WidgetSpec").as_deref(),
            Some("Spec"),
            "a re-export in mod.rs"
        );
        assert_eq!(
            expand(&r, &["types"], "Renamed").as_deref(),
            Some("Spec"),
            "a rename of a re-export"
        );
        assert_eq!(expand(&r, &["types"], "Status").as_deref(), Some("Status"));
        assert_eq!(
            expand(&r, &["types"], "self::super::Spec").as_deref(),
            Some("Spec")
        );
    }

    #[test]
    fn generic_aliases_substitute_their_parameters() {
        let item: syn::ItemType =
            syn::parse_str("type Pair<T, U> = (T, Option<Vec<U>>, [T; 2]);").expect("alias");
        let a: syn::Type = syn::parse_str("String").expect("type");
        let b: syn::Type = syn::parse_str("i64").expect("type");
        let out = substitute(&item.ty, &item.generics, &[&a, &b]);
        assert_eq!(
            out.to_token_stream().to_string().replace(' ', ""),
            "(String,Option<Vec<i64>>,[String;2])"
        );
    }
}
