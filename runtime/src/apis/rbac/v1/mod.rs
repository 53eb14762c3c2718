//! `rbac.authorization.k8s.io/v1`: marked aliases of k8s-openapi's rbac v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=rbac.authorization.k8s.io

/// `ClusterRole` (rbac.authorization.k8s.io/v1, `clusterroles`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type ClusterRole = k8s_openapi::api::rbac::v1::ClusterRole;

/// `ClusterRoleBinding` (rbac.authorization.k8s.io/v1, `clusterrolebindings`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type ClusterRoleBinding = k8s_openapi::api::rbac::v1::ClusterRoleBinding;

/// `Role` (rbac.authorization.k8s.io/v1, `roles`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type Role = k8s_openapi::api::rbac::v1::Role;

/// `RoleBinding` (rbac.authorization.k8s.io/v1, `rolebindings`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type RoleBinding = k8s_openapi::api::rbac::v1::RoleBinding;
