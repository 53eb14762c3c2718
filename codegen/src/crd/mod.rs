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

/// One resource's CRD, or why it could not be generated.
#[derive(Debug)]
pub struct Generated {
    /// controller-gen's file name, `<group>_<plural>.yaml` (known even when the schema
    /// failed).
    pub file_name: String,
    /// The index of the resource type in `package.types`.
    pub type_index: usize,
    /// The CRD, or every problem its schema and markers had (combined).
    pub crd: Result<Crd, syn::Error>,
    /// Problems that did not stop it (a recursive type cut).
    pub warnings: Vec<syn::Error>,
}

/// The CRD of every struct resource of `package` (`+genclient` types), each generated
/// on its own: one kind's problems do not keep the others from being written. Field
/// types are read through the package's `use` items ([`crate::resolve`]).
pub fn package_crds(package: &Package) -> Vec<Generated> {
    let resolver =
        crate::resolve::Resolver::new(package.types.iter().map(|t| &t.ident), &package.uses);
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
            let cx = Ctxt::new();
            let schemas = schema::Schemas::new(&package.types, &cx).with_resolver(&resolver);
            let manifest = manifest::crd(ty, r, &schemas, &cx);
            let markers = crate::markers::TypeMarkers::from_attrs(&ty.attrs, &cx);
            let crd = Crd {
                file_name: manifest::file_name(r),
                type_index: i,
                manifest,
                storage_version: markers
                    .span(crate::markers::vocabulary::STORAGE_VERSION)
                    .is_some(),
                conversion_webhook: markers
                    .span(crate::markers::vocabulary::CONVERSION_WEBHOOK)
                    .is_some(),
            };
            let warnings = cx.take_warnings();
            Some(Generated {
                file_name: crd.file_name.clone(),
                type_index: i,
                crd: cx.check().map(|()| crd),
                warnings,
            })
        })
        .collect()
}
