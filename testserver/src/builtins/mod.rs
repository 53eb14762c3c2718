//! The built-in resources the server serves, kube-apiserver's
//! `pkg/registry/<group>/<resource>/storage` as data: one file per API group, one
//! [`Builtin`] row per resource with what its storage says beyond the markers (short
//! names and categories, whether its strategy keeps `metadata.generation`, its name
//! validation, extra field-selector labels, its `/scale` subresource), its strategy
//! ([`crate::strategy`]) and its Table columns (printers.go: JSONPath data, functions only
//! for computed cells, the shared ones in [`printers`]).
//!
//! The served set is exactly kubegen's built-in catalogue
//! ([`kubegen::kubernetes::catalog::RESOURCES`], generated from the marked aliases in
//! `runtime/src/apis`, the same markers the typed clients come from); each catalogue
//! entry is joined with its row by group and plural (one row serves every version), and
//! its k8s-openapi type comes from the catalogue's generated type list
//! (`kubegen::kubernetes_resource_types!`). Adding a built-in is one marked alias and one
//! row; the tests below fail when the catalogue and the rows disagree.

mod admissionregistration;
mod apiextensions;
mod apiregistration;
mod apps;
mod authentication;
mod authorization;
mod autoscaling;
mod batch;
mod certificates;
mod coordination;
mod core;
mod discovery;
mod events;
mod flowcontrol;
mod networking;
mod node;
mod policy;
pub(crate) mod printers;
mod rbac;
mod scheduling;
mod storage;

use std::collections::BTreeMap;

use kubegen::catalog::{ResourceInfo, Verb};
use serde_json::Value;

use crate::registry::{
    NameRule, PrinterColumn, Registry, ResourceType, ScaleSpec, version_priority,
};
use crate::schema::{CrdSchema, SchemaRef, builtin};
use crate::strategy::{Generic, StrategyRef};

/// One built-in resource: what kube-apiserver's storage for it says beyond the markers.
#[derive(Clone, Copy)]
pub(crate) struct Builtin {
    plural: &'static str,
    short: &'static [&'static str],
    categories: &'static [&'static str],
    /// The strategy sets `metadata.generation` on create and bumps it on spec changes.
    generation: bool,
    name_rule: NameRule,
    /// Field selector labels beyond `metadata.name` / `metadata.namespace`.
    fields: &'static [&'static str],
    /// Has a `/scale` subresource (`spec.replicas`, `status.replicas`, `status.selector`).
    scale: bool,
    /// Its `strategy.go`.
    strategy: fn() -> StrategyRef,
    /// Its printer's columns.
    columns: &'static [PrinterColumn],
}

/// A row with the generic defaults: no short names, no generation, subdomain names, the
/// generic strategy and the default table.
const fn row(plural: &'static str) -> Builtin {
    Builtin {
        plural,
        short: &[],
        categories: &[],
        generation: false,
        name_rule: NameRule::Subdomain,
        fields: &[],
        scale: false,
        strategy: generic,
        columns: printers::DEFAULT,
    }
}

/// The category `kubectl get all` lists.
const ALL: &[&str] = &["all"];

fn generic() -> StrategyRef {
    StrategyRef::new(Generic::default())
}

/// The generic strategy with `ReturnDeletedObject` set.
fn returns_deleted_object() -> StrategyRef {
    StrategyRef::new(Generic {
        returns_deleted_object: true,
    })
}

/// Every group's rows, by group name.
const GROUPS: &[(&str, &[Builtin])] = &[
    (core::GROUP, core::ROWS),
    (admissionregistration::GROUP, admissionregistration::ROWS),
    (apiextensions::GROUP, apiextensions::ROWS),
    (apiregistration::GROUP, apiregistration::ROWS),
    (apps::GROUP, apps::ROWS),
    (authentication::GROUP, authentication::ROWS),
    (authorization::GROUP, authorization::ROWS),
    (autoscaling::GROUP, autoscaling::ROWS),
    (batch::GROUP, batch::ROWS),
    (certificates::GROUP, certificates::ROWS),
    (coordination::GROUP, coordination::ROWS),
    (discovery::GROUP, discovery::ROWS),
    (events::GROUP, events::ROWS),
    (flowcontrol::GROUP, flowcontrol::ROWS),
    (networking::GROUP, networking::ROWS),
    (node::GROUP, node::ROWS),
    (policy::GROUP, policy::ROWS),
    (rbac::GROUP, rbac::ROWS),
    (scheduling::GROUP, scheduling::ROWS),
    (storage::GROUP, storage::ROWS),
];

/// The row of `group`/`plural`.
fn row_of(group: &str, plural: &str) -> Option<&'static Builtin> {
    GROUPS
        .iter()
        .filter(|(g, _)| *g == group)
        .flat_map(|(_, rows)| rows.iter())
        .find(|r| r.plural == plural)
}

/// The schema functions of one k8s-openapi type.
#[derive(Clone, Copy)]
struct TypeSchemas {
    /// Compiled, for admission (unknown and duplicate fields).
    compiled: fn() -> Option<&'static CrdSchema>,
    /// As `/openapi/v3` publishes it.
    published: fn() -> (Value, serde_json::Map<String, Value>),
}

/// Generates [`type_schemas`] over the k8s-openapi types behind the catalogue, matched by
/// their group, version and kind.
macro_rules! schemas {
    ($($ty:ty),* $(,)?) => {
        /// The schema functions of the built-in `group/version` `kind`; `None` for a kind
        /// k8s-openapi lacks.
        fn type_schemas(group: &str, version: &str, kind: &str) -> Option<TypeSchemas> {
            $(
                if <$ty as k8s_openapi::Resource>::GROUP == group
                    && <$ty as k8s_openapi::Resource>::VERSION == version
                    && <$ty as k8s_openapi::Resource>::KIND == kind
                {
                    return Some(TypeSchemas {
                        compiled: builtin::schema::<$ty>,
                        published: builtin::published::<$ty>,
                    });
                }
            )*
            None
        }
    };
}

/// The built-ins served beyond the catalogue, with their schemas: resources newer than
/// k8s-openapi's earliest Kubernetes version, served when the version the binary picked
/// has them (the runtime's catalogue holds only what every supported version has), and
/// resources the runtime has no marked alias for that a controller of the server needs
/// (`coordination.k8s.io/v1beta1` LeaseCandidate, for coordinated leader election).
fn newer() -> &'static [(ResourceInfo, TypeSchemas)] {
    static NEWER: std::sync::OnceLock<Vec<(ResourceInfo, TypeSchemas)>> =
        std::sync::OnceLock::new();
    NEWER.get_or_init(|| {
        let mut all = admissionregistration::newer();
        all.extend(coordination::newer());
        all
    })
}

/// The schema functions of a served built-in, from the catalogue's types or [`newer`].
fn schemas_of(group: &str, version: &str, kind: &str) -> Option<TypeSchemas> {
    type_schemas(group, version, kind).or_else(|| {
        newer()
            .iter()
            .find(|(i, _)| i.group == group && i.version == version && i.kind == kind)
            .map(|(_, t)| *t)
    })
}

/// k8s-openapi's type for a served built-in, as its schema (unknown and duplicate fields
/// for fieldValidation).
fn schema_of(info: &ResourceInfo) -> Option<fn() -> Option<&'static CrdSchema>> {
    schemas_of(info.group, info.version, info.kind).map(|t| t.compiled)
}

/// k8s-openapi's published definitions of the built-in `group/version` `kind` (for
/// `/openapi/v3`), if it is one.
pub(crate) fn published_schema(
    group: &str,
    version: &str,
    kind: &str,
) -> Option<(Value, serde_json::Map<String, Value>)> {
    schemas_of(group, version, kind).map(|t| (t.published)())
}

// The types behind the catalogue's entries, as the code generator lists them.
kubegen::kubernetes_resource_types!(schemas);

/// The served type for one catalogue entry; `storage_version` is the preferred version
/// of its group and plural (objects of every version are stored together).
fn resource_type(info: &ResourceInfo, storage_version: &str) -> ResourceType {
    let f = row_of(info.group, info.plural).copied().unwrap_or(row(""));
    // Create-only resources (the reviews) are answered, not stored, and have no `/status`
    // endpoint even though their type has a status field.
    let status = info.status_subresource && info.has_verb(Verb::Update);
    let verbs = Verb::ALL
        .into_iter()
        .filter(|v| info.has_verb(*v))
        .collect();
    ResourceType {
        group: info.group.into(),
        version: info.version.into(),
        kind: info.kind.into(),
        list_kind: format!("{}List", info.kind),
        plural: info.plural.into(),
        singular: info.kind.to_lowercase(),
        short_names: f.short.iter().map(|s| s.to_string()).collect(),
        categories: f.categories.iter().map(|s| s.to_string()).collect(),
        namespaced: info.namespaced,
        status_subresource: status,
        scale: f.scale.then(|| ScaleSpec {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        }),
        verbs,
        generation: f.generation,
        builtin: true,
        name_rule: f.name_rule,
        field_labels: f.fields.iter().map(|s| s.to_string()).collect(),
        storage_version: storage_version.into(),
        strategy: (f.strategy)(),
        columns: f.columns,
        schema: schema_of(info).map(SchemaRef::lazy),
        read_defaults_through: 0,
    }
}

/// Every built-in resource of `catalog` as a served type.
pub(crate) fn resource_types(catalog: &[ResourceInfo]) -> Vec<ResourceType> {
    let mut preferred: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for info in catalog {
        let v = preferred
            .entry((info.group, info.plural))
            .or_insert(info.version);
        if version_priority(info.version) > version_priority(v) {
            *v = info.version;
        }
    }
    catalog
        .iter()
        .map(|info| {
            let storage = preferred
                .get(&(info.group, info.plural))
                .copied()
                .unwrap_or(info.version);
            resource_type(info, storage)
        })
        .collect()
}

/// Every served built-in: kubegen's catalogue, then the [`newer`] resources.
pub(crate) fn served() -> Vec<ResourceInfo> {
    let mut all = kubegen::kubernetes::catalog::RESOURCES.to_vec();
    all.extend(newer().iter().map(|(info, _)| *info));
    all
}

impl Registry {
    /// A registry serving every built-in resource of kubegen's catalogue, the newer
    /// resources the k8s-openapi version the binary picked has
    /// (`admissionregistration.k8s.io/v1` MutatingAdmissionPolicy from Kubernetes 1.36),
    /// and `coordination.k8s.io/v1beta1` LeaseCandidate.
    pub fn with_builtins() -> Self {
        let registry = Registry::default();
        for rt in resource_types(&served()) {
            registry.insert(rt);
        }
        registry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row is a served resource (of the catalogue or [`newer`]), once: a typo or a
    /// resource dropped from `runtime/src/apis` fails here instead of silently losing its
    /// short names. (Under `latest` every row is served.)
    #[test]
    fn every_row_names_a_served_resource_once() {
        let served = served();
        let mut seen = std::collections::BTreeSet::new();
        for (group, rows) in GROUPS {
            for r in *rows {
                assert!(
                    served
                        .iter()
                        .any(|c| c.group == *group && c.plural == r.plural),
                    "{group}/{} has a row but is not in kubegen::kubernetes::catalog",
                    r.plural
                );
                assert!(
                    seen.insert((*group, r.plural)),
                    "{group}/{} twice",
                    r.plural
                );
            }
        }
    }

    /// Every resource of the catalogue has its row: a marked alias added to
    /// `runtime/src/apis` without one fails here.
    #[test]
    fn every_served_resource_has_a_row() {
        for info in &served() {
            assert!(
                row_of(info.group, info.plural).is_some(),
                "{}/{} is in the catalogue but has no row in testserver/src/builtins",
                info.group,
                info.plural
            );
        }
    }

    /// The type list the code generator emits is the catalogue's, entry for entry.
    #[test]
    fn the_generated_type_list_matches_the_catalogue() {
        macro_rules! gvks {
            ($($ty:ty),* $(,)?) => {
                vec![$((
                    <$ty as k8s_openapi::Resource>::GROUP,
                    <$ty as k8s_openapi::Resource>::VERSION,
                    <$ty as k8s_openapi::Resource>::KIND,
                )),*]
            };
        }
        let listed = kubegen::kubernetes_resource_types!(gvks);
        let catalogue: Vec<_> = kubegen::kubernetes::catalog::RESOURCES
            .iter()
            .map(|r| (r.group, r.version, r.kind))
            .collect();
        assert_eq!(listed, catalogue);
    }

    /// The server serves exactly the catalogue and the newer resources: every typed client
    /// of `kubegen::kubernetes` has its resource, with the markers' scope and verbs.
    #[test]
    fn the_registry_serves_exactly_the_catalogue_and_the_newer_resources() {
        let registry = Registry::with_builtins();
        let served = served();
        for info in &served {
            let rt = registry
                .get(info.group, info.version, info.plural)
                .unwrap_or_else(|| panic!("{}/{} not served", info.api_version(), info.plural));
            assert_eq!(rt.kind, info.kind);
            assert_eq!(rt.namespaced, info.namespaced, "{}", info.plural);
            for verb in info.verbs {
                assert!(rt.verbs.contains(verb), "{} {verb}", info.plural);
            }
        }
        assert_eq!(registry.all().len(), served.len());
    }

    /// Kubernetes 1.36 serves MutatingAdmissionPolicy in `admissionregistration.k8s.io/v1`
    /// (`pkg/registry/admissionregistration/rest/storage_apiserver.go`); k8s-openapi's
    /// `latest`, which the tests pick, has it.
    #[test]
    fn mutating_admission_policies_are_served_in_v1() {
        let registry = Registry::with_builtins();
        for (plural, kind) in [
            ("mutatingadmissionpolicies", "MutatingAdmissionPolicy"),
            (
                "mutatingadmissionpolicybindings",
                "MutatingAdmissionPolicyBinding",
            ),
        ] {
            let rt = registry
                .get(admissionregistration::GROUP, "v1", plural)
                .unwrap_or_else(|| panic!("{plural} not served"));
            assert_eq!(rt.kind, kind);
            assert!(!rt.namespaced && rt.generation && rt.schema.is_some());
        }
    }

    /// Kubernetes 1.33 serves LeaseCandidate in `coordination.k8s.io/v1beta1`
    /// (`pkg/registry/coordination/rest/storage_coordination.go`), namespaced, every verb;
    /// the group's preferred version stays `v1`.
    #[test]
    fn lease_candidates_are_served_in_v1beta1() {
        let registry = Registry::with_builtins();
        let rt = registry
            .get(coordination::GROUP, "v1beta1", "leasecandidates")
            .expect("leasecandidates served");
        assert_eq!(rt.kind, "LeaseCandidate");
        assert!(rt.namespaced && rt.schema.is_some() && !rt.status_subresource);
        assert!(Verb::ALL.iter().all(|v| rt.verbs.contains(v)));
        assert_eq!(
            registry
                .get(coordination::GROUP, "v1", "leases")
                .map(|l| l.storage_version.clone()),
            Some("v1".to_string())
        );
    }

    /// Every built-in is admitted against k8s-openapi's schema of its own type.
    #[test]
    fn every_served_resource_has_its_k8s_openapi_schema() {
        for info in &served() {
            assert!(
                schema_of(info).is_some(),
                "{}/{} has no schema type",
                info.api_version(),
                info.kind
            );
        }
    }

    #[test]
    fn versions_of_one_resource_share_the_preferred_storage_version() {
        let registry = Registry::with_builtins();
        let v1 = registry
            .get("autoscaling", "v1", "horizontalpodautoscalers")
            .expect("autoscaling/v1 HPA");
        let v2 = registry
            .get("autoscaling", "v2", "horizontalpodautoscalers")
            .expect("autoscaling/v2 HPA");
        assert_eq!(
            (v1.storage_version.as_str(), v2.storage_version.as_str()),
            ("v2", "v2")
        );
    }

    #[test]
    fn review_resources_are_create_only_without_status() {
        let registry = Registry::with_builtins();
        let rt = registry
            .get("authorization.k8s.io", "v1", "subjectaccessreviews")
            .expect("served");
        assert_eq!(rt.verbs, [Verb::Create]);
        assert!(!rt.status_subresource);
        let cs = registry.get("", "v1", "componentstatuses").expect("served");
        assert_eq!(cs.verbs, [Verb::Get, Verb::List]);
        assert_eq!(cs.short_names, ["cs"]);
    }
}
