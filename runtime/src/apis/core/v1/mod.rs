//! `v1`: marked aliases of k8s-openapi's core v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=

/// `ComponentStatus` (v1, `componentstatuses`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
/// +genclient:onlyVerbs=get,list
pub type ComponentStatus = k8s_openapi::api::core::v1::ComponentStatus;

/// `ConfigMap` (v1, `configmaps`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type ConfigMap = k8s_openapi::api::core::v1::ConfigMap;

/// `Endpoints` (v1, `endpoints`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type Endpoints = k8s_openapi::api::core::v1::Endpoints;

/// `Event` (v1, `events`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type Event = k8s_openapi::api::core::v1::Event;

/// `LimitRange` (v1, `limitranges`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type LimitRange = k8s_openapi::api::core::v1::LimitRange;

/// `Namespace` (v1, `namespaces`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:skipVerbs=deleteCollection
/// +genclient:method=Finalize,verb=update,subresource=finalize
pub type Namespace = k8s_openapi::api::core::v1::Namespace;

/// `Node` (v1, `nodes`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type Node = k8s_openapi::api::core::v1::Node;

/// `PersistentVolume` (v1, `persistentvolumes`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type PersistentVolume = k8s_openapi::api::core::v1::PersistentVolume;

/// `PersistentVolumeClaim` (v1, `persistentvolumeclaims`, namespaced).
///
/// +genclient
pub type PersistentVolumeClaim = k8s_openapi::api::core::v1::PersistentVolumeClaim;

/// `Pod` (v1, `pods`, namespaced).
///
/// +genclient
/// +genclient:method=UpdateEphemeralContainers,verb=update,subresource=ephemeralcontainers
/// +genclient:method=Evict,verb=create,subresource=eviction,input=k8s_openapi::api::policy::v1::Eviction,result=k8s_openapi::apimachinery::pkg::apis::meta::v1::Status
/// +genclient:method=Bind,verb=create,subresource=binding,input=k8s_openapi::api::core::v1::Binding,result=k8s_openapi::apimachinery::pkg::apis::meta::v1::Status
pub type Pod = k8s_openapi::api::core::v1::Pod;

/// `PodTemplate` (v1, `podtemplates`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type PodTemplate = k8s_openapi::api::core::v1::PodTemplate;

/// `ReplicationController` (v1, `replicationcontrollers`, namespaced).
///
/// +genclient
/// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s_openapi::api::autoscaling::v1::Scale
/// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s_openapi::api::autoscaling::v1::Scale,result=k8s_openapi::api::autoscaling::v1::Scale
pub type ReplicationController = k8s_openapi::api::core::v1::ReplicationController;

/// `ResourceQuota` (v1, `resourcequotas`, namespaced).
///
/// +genclient
pub type ResourceQuota = k8s_openapi::api::core::v1::ResourceQuota;

/// `Secret` (v1, `secrets`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type Secret = k8s_openapi::api::core::v1::Secret;

/// `Service` (v1, `services`, namespaced).
///
/// +genclient
/// +genclient:skipVerbs=deleteCollection
pub type Service = k8s_openapi::api::core::v1::Service;

/// `ServiceAccount` (v1, `serviceaccounts`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
/// +genclient:method=CreateToken,verb=create,subresource=token,input=k8s_openapi::api::authentication::v1::TokenRequest,result=k8s_openapi::api::authentication::v1::TokenRequest
pub type ServiceAccount = k8s_openapi::api::core::v1::ServiceAccount;
