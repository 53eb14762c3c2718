//! `coordination.k8s.io/v1`: marked aliases of k8s-openapi's coordination v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=coordination.k8s.io

/// `Lease` (coordination.k8s.io/v1, `leases`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type Lease = k8s_openapi::api::coordination::v1::Lease;
