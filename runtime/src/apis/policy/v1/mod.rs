//! `policy/v1`: marked aliases of k8s-openapi's policy v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=policy

/// `PodDisruptionBudget` (policy/v1, `poddisruptionbudgets`, namespaced).
///
/// +genclient
pub type PodDisruptionBudget = k8s_openapi::api::policy::v1::PodDisruptionBudget;
