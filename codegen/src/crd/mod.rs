//! Types → CustomResourceDefinitions (controller-gen's `crd` generator): the same parsed
//! model the client emitters read, turned into `apiextensions.k8s.io/v1` manifests.
//!
//! * [`serde_attrs`]: the `#[serde(...)]` attributes that decide the JSON shape.
//! * [`k8s`]: Kubernetes' own schemas of embedded k8s-openapi types (k8s-openapi's
//!   `schemars` output, committed as `k8s_definitions.json`).
//! * [`template`]: the derive's holes (types defined elsewhere, filled at run time).
//! * [`schema`]: types → structural schemas.
//! * [`validation`]: controller-gen's validation markers from the one marker table.
//! * [`manifest`]: the CRD document (names, scope, version, subresources, columns).
//! * [`yaml`]: deterministic YAML output.
//! * `files` (feature `files`): the CLI's `crd` command (update / verify a directory).

#[cfg(feature = "files")]
pub mod files;
pub mod k8s;
pub mod manifest;
pub mod schema;
pub mod serde_attrs;
pub mod template;
pub mod validation;
pub mod yaml;

use crate::ctxt::Ctxt;
use crate::model::Package;

/// One generated CRD.
#[derive(Clone, Debug)]
pub struct Crd {
    /// controller-gen's file name, `<group>_<plural>.yaml`.
    pub file_name: String,
    /// The index of the resource type in `package.types` (for error locations).
    pub type_index: usize,
    /// The manifest.
    pub manifest: serde_json::Value,
    /// `+kubebuilder:storageversion`: this version is stored when several versions of
    /// the kind merge into one CRD.
    pub storage_version: bool,
    /// `+kubebuilder:webhook:conversion`: the kind's versions convert through the
    /// operator's conversion webhook (`spec.conversion.strategy: Webhook`).
    pub conversion_webhook: bool,
}

/// The CRDs of every struct resource of `package` (`+genclient` types, or the derive's
/// type); problems go to `cx`.
pub fn package_crds(package: &Package, cx: &Ctxt) -> Vec<Crd> {
    let schemas = schema::Schemas::new(&package.types, cx);
    package
        .types
        .iter()
        .enumerate()
        .filter_map(|(i, ty)| {
            let r = ty.resource.as_ref()?;
            if matches!(ty.body, crate::model::Body::Alias(_)) || r.group.is_empty() {
                // Aliases of k8s-openapi types and the core group are built in, not CRDs.
                return None;
            }
            let manifest = manifest::crd(ty, r, &schemas, cx);
            let markers = crate::markers::TypeMarkers::from_attrs(&ty.attrs, cx);
            Some(Crd {
                file_name: manifest::file_name(r),
                type_index: i,
                manifest,
                storage_version: markers
                    .span(crate::markers::vocabulary::STORAGE_VERSION)
                    .is_some(),
                conversion_webhook: markers
                    .span(crate::markers::vocabulary::CONVERSION_WEBHOOK)
                    .is_some(),
            })
        })
        .collect()
}
