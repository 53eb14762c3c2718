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

/// The file's tokens.
pub fn catalog<'a>(resources: impl Iterator<Item = &'a ResourceDef>) -> TokenStream {
    let entries = resources.map(|r| {
        let (group, version, kind, plural) = (&r.group, &r.version, &r.kind, &r.plural);
        let namespaced = r.namespaced();
        let status = r.has_status();
        let verbs = api_verbs(r)
            .into_iter()
            .map(|v| Ident::new(v, Span::call_site()));
        quote! {
            ::kubegen::catalog::ResourceInfo {
                group: #group,
                version: #version,
                kind: #kind,
                plural: #plural,
                namespaced: #namespaced,
                status_subresource: #status,
                verbs: &[#(::kubegen::catalog::Verb::#verbs),*],
            }
        }
    });
    quote! {
        //! Every resource of this API tree, as its markers describe it.
        /// One entry per `+genclient` type, in group-version order.
        pub const RESOURCES: &[::kubegen::catalog::ResourceInfo] = &[#(#entries),*];
    }
}

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
        let text = catalog([resource(&Verb::READONLY, true)].iter()).to_string();
        assert!(text.contains("status_subresource : false"), "{text}");
        assert!(
            text.contains(
                "verbs : & [:: kubegen :: catalog :: Verb :: Get , :: kubegen :: catalog :: Verb :: List , :: kubegen :: catalog :: Verb :: Watch]"
            ),
            "{text}"
        );
    }
}
