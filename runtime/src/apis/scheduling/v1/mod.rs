//! `scheduling.k8s.io/v1`: marked aliases of k8s-openapi's scheduling v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=scheduling.k8s.io

/// `PriorityClass` (scheduling.k8s.io/v1, `priorityclasses`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type PriorityClass = k8s_openapi::api::scheduling::v1::PriorityClass;
