//! The listers tree under `--output-dir`: `listers/<group>/<version>/` with one file per
//! type that can be listed and watched (its lister and, when namespaced, its namespace
//! lister).
//!
//! code-generator counterpart: lister-gen (`listers/<group>/<version>/<type>.go` and
//! `expansion_generated.go`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use super::{
    GroupVersion, LayoutConfig, LayoutFile, PerType, file_name, group_tree, module_ident,
    per_type_file,
};
use crate::expand::{self, names};
use crate::model::Scope;

/// Every file of `listers/`: `listers/mod.rs` declaring the groups, `<group>/mod.rs`
/// declaring the versions, and per group-version a `mod.rs` and one file per type with a
/// lister (`gvs` and `by_group` hold only the group-versions that have one).
pub(super) fn files(
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

#[cfg(test)]
mod tests {
    use super::super::tests::{Input, paths_under};

    #[test]
    fn one_file_per_listable_type_and_none_for_create_only_groups() {
        let input = Input::sample();
        let files = input.files(|_| {});
        let listers = paths_under(&files, "listers/");
        assert_eq!(
            listers,
            [
                "listers/example/mod.rs",
                "listers/example/v1/gadget.rs",
                "listers/example/v1/mod.rs",
                "listers/example/v1/widget.rs",
                "listers/example/v2/mod.rs",
                "listers/example/v2/widget.rs",
                "listers/mod.rs",
            ]
        );
        let v1 = input.text(&files, "listers/example/v1/mod.rs");
        assert!(v1.contains("WidgetNamespaceLister"), "{v1}");
        assert!(!v1.contains("GadgetNamespaceLister"), "{v1}");
    }
}
