//! `admissionregistration.k8s.io` (kube-apiserver's
//! `pkg/registry/admissionregistration/<resource>/storage`: every strategy keeps
//! `metadata.generation`).
//!
//! MutatingAdmissionPolicy and its binding are served in `v1` (GA in Kubernetes 1.36, the
//! version kubectl 1.36 reads) only when the k8s-openapi version the final binary picked
//! has that type ([`newer`]): the runtime's catalogue holds what every supported version
//! has, and a library crate never picks a version.

use kubegen::catalog::ResourceInfo;

use super::{Builtin, TypeSchemas, row};
use crate::strategy::{StrategyRef, admissionregistration};

/// The API group.
pub(super) const GROUP: &str = "admissionregistration.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        generation: true,
        ..row("mutatingwebhookconfigurations")
    },
    Builtin {
        generation: true,
        ..row("validatingwebhookconfigurations")
    },
    Builtin {
        generation: true,
        strategy: || StrategyRef::new(admissionregistration::ValidatingAdmissionPolicies),
        ..row("validatingadmissionpolicies")
    },
    Builtin {
        generation: true,
        ..row("validatingadmissionpolicybindings")
    },
    Builtin {
        generation: true,
        strategy: || StrategyRef::new(admissionregistration::MutatingAdmissionPolicies),
        ..row("mutatingadmissionpolicies")
    },
    Builtin {
        generation: true,
        ..row("mutatingadmissionpolicybindings")
    },
];

k8s_openapi::k8s_if_ge_1_36! {
    /// A cluster-scoped `admissionregistration.k8s.io/v1` resource with every verb and no
    /// status subresource, served with k8s-openapi's type `T`.
    fn cluster_scoped<T>(plural: &'static str) -> (ResourceInfo, TypeSchemas)
    where
        T: k8s_openapi::Resource + k8s_openapi::schemars::JsonSchema + 'static,
    {
        (
            ResourceInfo {
                group: GROUP,
                version: T::VERSION,
                kind: T::KIND,
                plural,
                namespaced: false,
                status_subresource: false,
                verbs: &kubegen::catalog::Verb::ALL,
            },
            TypeSchemas {
                compiled: crate::schema::builtin::schema::<T>,
                published: crate::schema::builtin::published::<T>,
            },
        )
    }

    /// The resources of this group newer than k8s-openapi's earliest Kubernetes version,
    /// with their schemas: here `v1` MutatingAdmissionPolicy and
    /// MutatingAdmissionPolicyBinding.
    pub(super) fn newer() -> Vec<(ResourceInfo, TypeSchemas)> {
        use k8s_openapi::api::admissionregistration::v1 as api;
        vec![
            cluster_scoped::<api::MutatingAdmissionPolicy>("mutatingadmissionpolicies"),
            cluster_scoped::<api::MutatingAdmissionPolicyBinding>(
                "mutatingadmissionpolicybindings",
            ),
        ]
    }
}

k8s_openapi::k8s_if_le_1_35! {
    /// The resources of this group newer than k8s-openapi's earliest Kubernetes version:
    /// none in the version this binary picked.
    pub(super) fn newer() -> Vec<(ResourceInfo, TypeSchemas)> {
        Vec::new()
    }
}
