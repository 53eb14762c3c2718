//! The built-in resources the server serves: exactly the entries of kubegen's built-in
//! catalogue ([`kubegen::kubernetes::catalog::RESOURCES`], generated from the marked
//! aliases in `runtime/src/apis`, the same markers the typed clients come from), each
//! joined with what kube-apiserver's REST storage for it says beyond the markers: short
//! names and categories (`ShortNames()` / `Categories()` in
//! `pkg/registry/<group>/<resource>/storage/storage.go`), whether its strategy maintains
//! `metadata.generation`, its name validation, extra field-selector labels
//! (`GetAttrs` / `AddFieldLabelConversionFunc`) and its `/scale` subresource.
//!
//! [`FACTS`] only adds to catalogue entries: a fact naming a resource the catalogue lacks
//! is a bug the tests below catch, and a catalogue entry without facts is served with the
//! generic defaults (no short names, no generation, subdomain names).

use std::collections::BTreeMap;

use kubegen::catalog::{ResourceInfo, Verb};
use serde_json::Value;

use crate::registry::{NameRule, Registry, ResourceType, ScaleSpec, version_priority};
use crate::schema::{CrdSchema, SchemaRef, builtin};
use crate::strategy;

/// What kube-apiserver's storage for one built-in resource says beyond the markers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Facts {
    group: &'static str,
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
}

const fn facts(group: &'static str, plural: &'static str) -> Facts {
    Facts {
        group,
        plural,
        short: &[],
        categories: &[],
        generation: false,
        name_rule: NameRule::Subdomain,
        fields: &[],
        scale: false,
    }
}

const ALL: &[&str] = &["all"];

/// kube-apiserver's per-resource storage facts (Kubernetes 1.33), by group and plural.
pub(crate) const FACTS: &[Facts] = &[
    Facts {
        short: &["ns"],
        name_rule: NameRule::Label,
        fields: &["status.phase"],
        ..facts("", "namespaces")
    },
    Facts {
        short: &["po"],
        categories: ALL,
        generation: true,
        fields: &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        ..facts("", "pods")
    },
    Facts {
        short: &["svc"],
        categories: ALL,
        name_rule: NameRule::Label,
        ..facts("", "services")
    },
    Facts {
        short: &["cm"],
        ..facts("", "configmaps")
    },
    Facts {
        fields: &["type"],
        ..facts("", "secrets")
    },
    Facts {
        short: &["ev"],
        fields: &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ..facts("", "events")
    },
    Facts {
        short: &["sa"],
        ..facts("", "serviceaccounts")
    },
    Facts {
        short: &["no"],
        fields: &["spec.unschedulable"],
        ..facts("", "nodes")
    },
    Facts {
        short: &["cs"],
        ..facts("", "componentstatuses")
    },
    Facts {
        short: &["ep"],
        ..facts("", "endpoints")
    },
    Facts {
        short: &["limits"],
        ..facts("", "limitranges")
    },
    Facts {
        short: &["pv"],
        ..facts("", "persistentvolumes")
    },
    Facts {
        short: &["pvc"],
        ..facts("", "persistentvolumeclaims")
    },
    Facts {
        short: &["rc"],
        categories: ALL,
        generation: true,
        fields: &["status.replicas"],
        scale: true,
        ..facts("", "replicationcontrollers")
    },
    Facts {
        short: &["quota"],
        ..facts("", "resourcequotas")
    },
    Facts {
        short: &["deploy"],
        categories: ALL,
        generation: true,
        scale: true,
        ..facts("apps", "deployments")
    },
    Facts {
        short: &["rs"],
        categories: ALL,
        generation: true,
        fields: &["status.replicas"],
        scale: true,
        ..facts("apps", "replicasets")
    },
    Facts {
        short: &["sts"],
        categories: ALL,
        generation: true,
        scale: true,
        ..facts("apps", "statefulsets")
    },
    Facts {
        short: &["ds"],
        categories: ALL,
        generation: true,
        ..facts("apps", "daemonsets")
    },
    Facts {
        categories: ALL,
        generation: true,
        fields: &["status.successful"],
        ..facts("batch", "jobs")
    },
    Facts {
        short: &["cj"],
        categories: ALL,
        generation: true,
        ..facts("batch", "cronjobs")
    },
    Facts {
        short: &["hpa"],
        categories: ALL,
        ..facts("autoscaling", "horizontalpodautoscalers")
    },
    Facts {
        name_rule: NameRule::PathSegment,
        ..facts("rbac.authorization.k8s.io", "roles")
    },
    Facts {
        name_rule: NameRule::PathSegment,
        ..facts("rbac.authorization.k8s.io", "clusterroles")
    },
    Facts {
        name_rule: NameRule::PathSegment,
        ..facts("rbac.authorization.k8s.io", "rolebindings")
    },
    Facts {
        name_rule: NameRule::PathSegment,
        ..facts("rbac.authorization.k8s.io", "clusterrolebindings")
    },
    Facts {
        short: &["netpol"],
        generation: true,
        ..facts("networking.k8s.io", "networkpolicies")
    },
    Facts {
        short: &["ing"],
        generation: true,
        ..facts("networking.k8s.io", "ingresses")
    },
    Facts {
        short: &["ip"],
        ..facts("networking.k8s.io", "ipaddresses")
    },
    Facts {
        short: &["pdb"],
        generation: true,
        ..facts("policy", "poddisruptionbudgets")
    },
    Facts {
        short: &["sc"],
        ..facts("storage.k8s.io", "storageclasses")
    },
    Facts {
        short: &["pc"],
        ..facts("scheduling.k8s.io", "priorityclasses")
    },
    Facts {
        short: &["csr"],
        ..facts("certificates.k8s.io", "certificatesigningrequests")
    },
    Facts {
        generation: true,
        ..facts(
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
        )
    },
    Facts {
        generation: true,
        ..facts(
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
        )
    },
    Facts {
        generation: true,
        ..facts(
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies",
        )
    },
    Facts {
        generation: true,
        ..facts(
            "admissionregistration.k8s.io",
            "validatingadmissionpolicybindings",
        )
    },
    Facts {
        short: &["ev"],
        ..facts("events.k8s.io", "events")
    },
    Facts {
        generation: true,
        ..facts("flowcontrol.apiserver.k8s.io", "flowschemas")
    },
    Facts {
        generation: true,
        ..facts(
            "flowcontrol.apiserver.k8s.io",
            "prioritylevelconfigurations",
        )
    },
    Facts {
        categories: &["api-extensions"],
        name_rule: NameRule::PathSegment,
        ..facts("apiregistration.k8s.io", "apiservices")
    },
    Facts {
        short: &["crd", "crds"],
        categories: &["api-extensions"],
        generation: true,
        ..facts("apiextensions.k8s.io", "customresourcedefinitions")
    },
];

/// Generates [`schema_of`] over the k8s-openapi types behind the catalogue, matched by
/// their group, version and kind.
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

/// k8s-openapi's type for a catalogue entry, as its schema (unknown and duplicate fields
/// for fieldValidation).
fn schema_of(info: &ResourceInfo) -> Option<fn() -> Option<&'static CrdSchema>> {
    type_schemas(info.group, info.version, info.kind).map(|t| t.compiled)
}

/// k8s-openapi's published definitions of the built-in `group/version` `kind` (for
/// `/openapi/v3`), if it is one.
pub(crate) fn published_schema(
    group: &str,
    version: &str,
    kind: &str,
) -> Option<(Value, serde_json::Map<String, Value>)> {
    type_schemas(group, version, kind).map(|t| (t.published)())
}

// The types the marked aliases of `runtime/src/apis` stand for; the tests below fail when
// a catalogue entry has none here.
schemas!(
    kubegen::apis::admissionregistration::v1::MutatingWebhookConfiguration,
    kubegen::apis::admissionregistration::v1::ValidatingAdmissionPolicy,
    kubegen::apis::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
    kubegen::apis::admissionregistration::v1::ValidatingWebhookConfiguration,
    kubegen::apis::apiextensions::v1::CustomResourceDefinition,
    kubegen::apis::apiregistration::v1::APIService,
    kubegen::apis::apps::v1::ControllerRevision,
    kubegen::apis::apps::v1::DaemonSet,
    kubegen::apis::apps::v1::Deployment,
    kubegen::apis::apps::v1::ReplicaSet,
    kubegen::apis::apps::v1::StatefulSet,
    kubegen::apis::authentication::v1::SelfSubjectReview,
    kubegen::apis::authentication::v1::TokenReview,
    kubegen::apis::authorization::v1::LocalSubjectAccessReview,
    kubegen::apis::authorization::v1::SelfSubjectAccessReview,
    kubegen::apis::authorization::v1::SelfSubjectRulesReview,
    kubegen::apis::authorization::v1::SubjectAccessReview,
    kubegen::apis::autoscaling::v1::HorizontalPodAutoscaler,
    kubegen::apis::autoscaling::v2::HorizontalPodAutoscaler,
    kubegen::apis::batch::v1::CronJob,
    kubegen::apis::batch::v1::Job,
    kubegen::apis::certificates::v1::CertificateSigningRequest,
    kubegen::apis::coordination::v1::Lease,
    kubegen::apis::core::v1::ComponentStatus,
    kubegen::apis::core::v1::ConfigMap,
    kubegen::apis::core::v1::Endpoints,
    kubegen::apis::core::v1::Event,
    kubegen::apis::core::v1::LimitRange,
    kubegen::apis::core::v1::Namespace,
    kubegen::apis::core::v1::Node,
    kubegen::apis::core::v1::PersistentVolume,
    kubegen::apis::core::v1::PersistentVolumeClaim,
    kubegen::apis::core::v1::Pod,
    kubegen::apis::core::v1::PodTemplate,
    kubegen::apis::core::v1::ReplicationController,
    kubegen::apis::core::v1::ResourceQuota,
    kubegen::apis::core::v1::Secret,
    kubegen::apis::core::v1::Service,
    kubegen::apis::core::v1::ServiceAccount,
    kubegen::apis::discovery::v1::EndpointSlice,
    kubegen::apis::events::v1::Event,
    kubegen::apis::flowcontrol::v1::FlowSchema,
    kubegen::apis::flowcontrol::v1::PriorityLevelConfiguration,
    kubegen::apis::networking::v1::Ingress,
    kubegen::apis::networking::v1::IngressClass,
    kubegen::apis::networking::v1::IPAddress,
    kubegen::apis::networking::v1::NetworkPolicy,
    kubegen::apis::networking::v1::ServiceCIDR,
    kubegen::apis::node::v1::RuntimeClass,
    kubegen::apis::policy::v1::PodDisruptionBudget,
    kubegen::apis::rbac::v1::ClusterRole,
    kubegen::apis::rbac::v1::ClusterRoleBinding,
    kubegen::apis::rbac::v1::Role,
    kubegen::apis::rbac::v1::RoleBinding,
    kubegen::apis::scheduling::v1::PriorityClass,
    kubegen::apis::storage::v1::CSIDriver,
    kubegen::apis::storage::v1::CSINode,
    kubegen::apis::storage::v1::CSIStorageCapacity,
    kubegen::apis::storage::v1::StorageClass,
    kubegen::apis::storage::v1::VolumeAttachment,
);

fn facts_for(group: &str, plural: &str) -> Facts {
    FACTS
        .iter()
        .find(|f| f.group == group && f.plural == plural)
        .copied()
        .unwrap_or_else(|| {
            // Generic defaults; the literal strings are never read.
            facts("", "")
        })
}

/// The served type for one catalogue entry; `storage_version` is the preferred version
/// of its group and plural (objects of every version are stored together).
fn resource_type(info: &ResourceInfo, storage_version: &str) -> ResourceType {
    let f = facts_for(info.group, info.plural);
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
        strategy: strategy::for_builtin(info.group, info.plural),
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

impl Registry {
    /// A registry serving every built-in resource of kubegen's catalogue.
    pub fn with_builtins() -> Self {
        let registry = Registry::default();
        for rt in resource_types(kubegen::kubernetes::catalog::RESOURCES) {
            registry.insert(rt);
        }
        registry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fact is about a resource of the catalogue: a typo or a resource dropped
    /// from `runtime/src/apis` fails here instead of silently losing its short names.
    #[test]
    fn every_fact_names_a_catalogue_resource() {
        for f in FACTS {
            assert!(
                kubegen::kubernetes::catalog::RESOURCES
                    .iter()
                    .any(|r| r.group == f.group && r.plural == f.plural),
                "{}/{} has facts but is not in kubegen::kubernetes::catalog",
                f.group,
                f.plural
            );
        }
    }

    /// The server serves exactly the catalogue: every typed client of
    /// `kubegen::kubernetes` has its resource, with the markers' scope and verbs.
    #[test]
    fn the_registry_serves_exactly_the_catalogue() {
        let registry = Registry::with_builtins();
        for info in kubegen::kubernetes::catalog::RESOURCES {
            let rt = registry
                .get(info.group, info.version, info.plural)
                .unwrap_or_else(|| panic!("{}/{} not served", info.api_version(), info.plural));
            assert_eq!(rt.kind, info.kind);
            assert_eq!(rt.namespaced, info.namespaced, "{}", info.plural);
            for verb in info.verbs {
                assert!(rt.verbs.contains(verb), "{} {verb}", info.plural);
            }
        }
        assert_eq!(
            registry.all().len(),
            kubegen::kubernetes::catalog::RESOURCES.len()
        );
    }

    /// Every built-in is admitted against k8s-openapi's schema of its own type.
    #[test]
    fn every_catalogue_resource_has_its_k8s_openapi_schema() {
        for info in kubegen::kubernetes::catalog::RESOURCES {
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
