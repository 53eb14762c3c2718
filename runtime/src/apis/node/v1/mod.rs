//! `node.k8s.io/v1`: marked aliases of k8s-openapi's node v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=node.k8s.io

/// `RuntimeClass` (node.k8s.io/v1, `runtimeclasses`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type RuntimeClass = k8s_openapi::api::node::v1::RuntimeClass;
