//! The top of the output tree: `mod.rs` declaring the trees below it, `catalog.rs` (every
//! resource of the tree) and, with `--group-features`, `features.rs`.
//!
//! code-generator counterpart: none as such (client-go's `kubernetes/` directory is laid
//! out by hand); the catalog plays the part of client-go's generated
//! `informers/generic.go` resource list and the scheme registration.

use std::collections::BTreeMap;
use std::path::PathBuf;

use quote::quote;

use super::{GroupVersion, LayoutConfig, LayoutFile, type_path};
use crate::expand;
use crate::gates::Gates;

/// `mod.rs`: the output module's root, declaring `applyconfiguration` (when
/// `with_applyconfig` gave files), `catalog`, `clientset`, `features` (with features),
/// `informers` and `listers`.
pub(super) fn module(config: &LayoutConfig<'_>, with_applyconfig: bool) -> LayoutFile {
    let gates = config.gates();
    let applyconfig_mod = with_applyconfig.then(|| {
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
    (
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
    )
}

/// `features.rs`: one marker per group's cargo feature (`--group-features`).
pub(super) fn features(
    gates: Gates<'_>,
    by_group: &BTreeMap<String, Vec<&GroupVersion<'_>>>,
) -> LayoutFile {
    let groups = by_group.values().map(|gvs| &gvs[0].group_mod);
    (PathBuf::from("features.rs"), gates.file(groups))
}

/// `catalog.rs`: every resource of the tree, by its type's public path.
pub(super) fn catalog(gvs: &[GroupVersion<'_>], config: &LayoutConfig<'_>) -> LayoutFile {
    (
        PathBuf::from("catalog.rs"),
        expand::catalog(
            gvs.iter().flat_map(|gv| {
                gv.resources()
                    .map(|(ty, r)| (type_path(config, gv, &ty.ident), r))
            }),
            &expand::types_macro_name(config.output_module),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Input, paths};
    use super::*;

    #[test]
    fn the_root_declares_the_trees_and_the_catalog() {
        let input = Input::sample();
        let files = input.files(|_| {});
        let paths = paths(&files);
        for p in ["mod.rs", "catalog.rs"] {
            assert!(paths.contains(&p.to_owned()), "{p} in {paths:?}");
        }
        assert!(!paths.contains(&"features.rs".to_owned()), "{paths:?}");
        let root = input.text(&files, "mod.rs");
        for m in ["catalog", "clientset", "informers", "listers"] {
            assert!(root.contains(&format!("pub mod {m} ;")), "{m}: {root}");
        }
        assert!(!root.contains("applyconfiguration"), "{root}");
        let catalog = input.text(&files, "catalog.rs");
        assert!(
            catalog.contains("crate :: apis :: example :: v1 :: Widget"),
            "{catalog}"
        );
    }

    #[test]
    fn group_features_add_the_features_file() {
        let input = Input::sample();
        let files = input.files(|c| c.group_features = Some("kubegen"));
        assert!(paths(&files).contains(&"features.rs".to_owned()));
        let root = input.text(&files, "mod.rs");
        assert!(root.contains("pub mod features ;"), "{root}");
    }

    #[test]
    fn the_root_alone_lays_out_its_path() {
        let input = Input::sample();
        input.with_config(|config| {
            assert_eq!(module(config, true).0, PathBuf::from("mod.rs"));
            let text = module(config, true).1.to_string();
            assert!(text.contains("pub mod applyconfiguration ;"), "{text}");
        });
    }
}
