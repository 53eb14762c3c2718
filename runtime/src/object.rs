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

/// What a cache can hold: any Kubernetes object type, typed or described at run time.
///
/// A blanket alias for `kube_core::Resource + Clone + Serialize + DeserializeOwned + Send +
/// Sync + 'static` with any `DynamicType`: every [`Object`], and also
/// `kube_core::DynamicObject` (whose kind is an `ApiResource` known only at run time), so
/// indexers, FIFOs, reflectors, informers and listers serve client-go's dynamic informers
/// as well as typed ones. Where the cache needs the type's names (a lister's NotFound
/// error, log fields), it takes them from the `DynamicType` once, when it is built.
pub trait Cacheable:
    Resource + Clone + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

impl<K> Cacheable for K where
    K: Resource + Clone + Serialize + DeserializeOwned + Send + Sync + 'static
{
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
