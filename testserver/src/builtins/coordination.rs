//! `coordination.k8s.io` (`pkg/registry/coordination/lease/storage`,
//! `pkg/registry/coordination/leasecandidate/storage`).
//!
//! LeaseCandidate is served in `v1beta1` (beta in Kubernetes 1.33, KEP-4355 coordinated
//! leader election) beside the catalogue ([`newer`]): the runtime has no marked alias for
//! it, and every k8s-openapi version the workspace supports has the type. The server's
//! coordinated leader election controller (`controllers/coordinated_election.rs`) reads
//! these candidates and writes the Leases they name.

use kubegen::catalog::{ResourceInfo, Verb};

use super::{Builtin, TypeSchemas, row};

/// The API group.
pub(super) const GROUP: &str = "coordination.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[row("leases"), row("leasecandidates")];

/// The resources of this group served beyond the catalogue, with their schemas:
/// `v1beta1` LeaseCandidate (namespaced, every verb, no status subresource).
pub(super) fn newer() -> Vec<(ResourceInfo, TypeSchemas)> {
    use k8s_openapi::{Resource, api::coordination::v1beta1::LeaseCandidate};
    vec![(
        ResourceInfo {
            group: GROUP,
            version: LeaseCandidate::VERSION,
            kind: LeaseCandidate::KIND,
            plural: "leasecandidates",
            namespaced: true,
            status_subresource: false,
            verbs: &Verb::ALL,
        },
        TypeSchemas {
            compiled: crate::schema::builtin::schema::<LeaseCandidate>,
            published: crate::schema::builtin::published::<LeaseCandidate>,
        },
    )]
}
