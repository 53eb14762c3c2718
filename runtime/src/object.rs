//! The bound every resource type handled by the runtime satisfies.

use kube_core::{ClusterResourceScope, NamespaceResourceScope, Resource};
use serde::{Serialize, de::DeserializeOwned};

/// The scope of a resource type, known at compile time.
pub trait ResourceScope: 'static {
    /// Whether objects of the type live in a namespace.
    const NAMESPACED: bool;
}

impl ResourceScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl ResourceScope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// A Kubernetes object type the runtime can cache, watch and hand to handlers.
///
/// This is a blanket alias: every `kube_core::Resource<DynamicType = ()>` with a namespace
/// or cluster scope that is `Clone + Serialize + DeserializeOwned + Send + Sync + 'static`
/// implements it, which covers every k8s-openapi type, kube-derive custom resources and
/// kubegen-derived types.
pub trait Object:
    Resource<DynamicType = (), Scope: ResourceScope>
    + Clone
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> Object for K where
    K: Resource<DynamicType = (), Scope: ResourceScope>
        + Clone
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}
