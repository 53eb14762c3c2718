//! The bound every resource type handled by the runtime satisfies.

use kube_core::Resource;
use serde::{Serialize, de::DeserializeOwned};

/// A Kubernetes object type the runtime can cache, watch and hand to handlers.
///
/// This is a blanket alias: every `kube_core::Resource<DynamicType = ()>` that is
/// `Clone + Serialize + DeserializeOwned + Send + Sync + 'static` implements it, which
/// covers every k8s-openapi type, kube-derive custom resources and kubegen-derived types.
pub trait Object:
    Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

impl<K> Object for K where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Send + Sync + 'static
{
}
