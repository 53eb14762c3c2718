//! The tree's table of contents (`<output>/catalog.rs`): one
//! `::kubegen::catalog::ResourceInfo` per `+genclient` type, in group-version order. The
//! test server builds its built-in registry from the built-in tree's catalogue, so the
//! typed clients and the served resources come from the same markers.

use std::collections::BTreeSet;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::model::{ResourceDef, Verb};

/// The `::kubegen::catalog::Verb` variants of the verbs the markers allow on the main
/// resource (status verbs belong to the subresource; `apply` is a `patch`), sorted as
/// their spellings are (the variants are declared in that order).
fn api_verbs(r: &ResourceDef) -> BTreeSet<&'static str> {
    r.client_verbs()
        .into_iter()
        .filter_map(|v| match v {
            Verb::Create => Some("Create"),
            Verb::Update => Some("Update"),
            Verb::Delete => Some("Delete"),
            Verb::DeleteCollection => Some("DeleteCollection"),
            Verb::Get => Some("Get"),
            Verb::List => Some("List"),
            Verb::Watch => Some("Watch"),
            Verb::Patch | Verb::Apply => Some("Patch"),
            Verb::UpdateStatus | Verb::ApplyStatus => None,
        })
        .collect()
}

/// The name of the macro listing the tree's types: the output module's path after
/// `crate` (`crate::kubernetes` → `kubernetes_resource_types`). `#[macro_export]` puts
/// every such macro at the crate root, so the name says which tree it lists.
pub fn types_macro_name(output_module: &syn::Path) -> Ident {
    let segments: Vec<String> = output_module
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .filter(|s| s != "crate" && s != "self" && s != "super")
        .collect();
    let stem = if segments.is_empty() {
        "api".to_string()
    } else {
        segments.join("_")
    };
    Ident::new(&format!("{stem}_resource_types"), Span::call_site())
}

/// A type path as a `#[macro_export]` macro must spell it: a leading `crate` becomes
/// `$crate`, so the path names this crate's type wherever the macro is expanded.
fn exported_path(path: &TokenStream) -> TokenStream {
    let mut tokens = path.clone().into_iter().peekable();
    match tokens.peek() {
        Some(proc_macro2::TokenTree::Ident(i)) if i == "crate" => {
            tokens.next();
            let rest: TokenStream = tokens.collect();
            quote!($crate #rest)
        }
        _ => path.clone(),
    }
}

/// The file's tokens: [`RESOURCES`] and, beside it, the macro that hands every resource's
/// Rust type (`type_path`, in the same order) to a macro of the caller's, for code that
/// needs each type rather than its names (the test server's schemas of the built-ins).
pub fn catalog<'a>(
    resources: impl Iterator<Item = (TokenStream, &'a ResourceDef)>,
    types_macro: &Ident,
) -> TokenStream {
    let (paths, entries): (Vec<TokenStream>, Vec<TokenStream>) = resources
        .map(|(path, r)| {
            let (group, version, kind, plural) = (&r.group, &r.version, &r.kind, &r.plural);
            let namespaced = r.namespaced();
            let status = r.has_status();
            let verbs = api_verbs(r);
            // Every verb: the constant, rather than eight lines per resource.
            let verbs = if verbs.len() == VERB_COUNT {
                quote!(&::kubegen::catalog::Verb::ALL)
            } else {
                let verbs = verbs.into_iter().map(|v| Ident::new(v, Span::call_site()));
                quote!(&[#(::kubegen::catalog::Verb::#verbs),*])
            };
            let entry = quote! {
                ::kubegen::catalog::ResourceInfo {
                    group: #group,
                    version: #version,
                    kind: #kind,
                    plural: #plural,
                    namespaced: #namespaced,
                    status_subresource: #status,
                    verbs: #verbs,
                }
            };
            (exported_path(&path), entry)
        })
        .unzip();
    let doc = [
        " Calls the caller's macro `$callback` with the Rust type of every entry of".to_string(),
        format!(" [`RESOURCES`], in the same order: `{types_macro}!(my_macro)` expands to"),
        " `my_macro! { Type0, Type1, ... }`.".to_string(),
    ];
    quote! {
        //! Every resource of this API tree, as its markers describe it.
        /// One entry per `+genclient` type, in group-version order.
        pub const RESOURCES: &[::kubegen::catalog::ResourceInfo] = &[#(#entries),*];

        #(#[doc = #doc])*
        #[doc(hidden)]
        #[macro_export]
        macro_rules! #types_macro {
            ($callback:ident) => {
                $callback! { #(#paths),* }
            };
        }
    }
}

/// How many verbs `::kubegen::catalog::Verb` has (its `ALL`).
const VERB_COUNT: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Scope;

    fn resource(verbs: &[Verb], no_status: bool) -> ResourceDef {
        ResourceDef {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            plural: "deployments".into(),
            scope: Scope::Namespaced,
            verbs: verbs.iter().copied().collect(),
            extensions: Vec::new(),
            has_status_field: true,
            no_status,
            impl_resource: false,
            group_go_name: None,
        }
    }

    #[test]
    fn verbs_are_catalogue_variants_and_apply_is_patch() {
        let all = resource(&Verb::ALL, false);
        assert_eq!(
            api_verbs(&all).into_iter().collect::<Vec<_>>(),
            [
                "Create",
                "Delete",
                "DeleteCollection",
                "Get",
                "List",
                "Patch",
                "Update",
                "Watch"
            ]
        );
        let apply_only = resource(&[Verb::Get, Verb::Apply, Verb::ApplyStatus], false);
        assert_eq!(
            api_verbs(&apply_only).into_iter().collect::<Vec<_>>(),
            ["Get", "Patch"]
        );
    }

    #[test]
    fn no_status_marker_clears_the_subresource() {
        let text = catalog(
            [(
                quote!(crate::apis::apps::v1::Deployment),
                &resource(&Verb::READONLY, true),
            )]
            .into_iter(),
            &Ident::new("client_resource_types", Span::call_site()),
        )
        .to_string();
        assert!(text.contains("status_subresource : false"), "{text}");
        assert!(
            text.contains(
                "verbs : & [:: kubegen :: catalog :: Verb :: Get , :: kubegen :: catalog :: Verb :: List , :: kubegen :: catalog :: Verb :: Watch]"
            ),
            "{text}"
        );
        assert!(
            text.contains("$ callback ! { $ crate :: apis :: apps :: v1 :: Deployment }"),
            "{text}"
        );
    }

    #[test]
    fn every_verb_is_the_constant() {
        let text = catalog(
            [(
                quote!(crate::apis::apps::v1::Deployment),
                &resource(&Verb::ALL, false),
            )]
            .into_iter(),
            &Ident::new("client_resource_types", Span::call_site()),
        )
        .to_string();
        assert!(
            text.contains("verbs : & :: kubegen :: catalog :: Verb :: ALL"),
            "{text}"
        );
    }

    #[test]
    fn the_types_macro_is_named_after_the_output_module() {
        let path: syn::Path = syn::parse_quote!(crate::kubernetes);
        assert_eq!(types_macro_name(&path), "kubernetes_resource_types");
        let path: syn::Path = syn::parse_quote!(crate::generated::client);
        assert_eq!(types_macro_name(&path), "generated_client_resource_types");
    }
}
