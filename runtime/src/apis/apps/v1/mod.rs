//! `apps/v1`: marked aliases of k8s-openapi's apps v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=apps

/// `ControllerRevision` (apps/v1, `controllerrevisions`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type ControllerRevision = k8s_openapi::api::apps::v1::ControllerRevision;

/// `DaemonSet` (apps/v1, `daemonsets`, namespaced).
///
/// +genclient
pub type DaemonSet = k8s_openapi::api::apps::v1::DaemonSet;

/// `Deployment` (apps/v1, `deployments`, namespaced).
///
/// +genclient
/// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s_openapi::api::autoscaling::v1::Scale
/// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s_openapi::api::autoscaling::v1::Scale,result=k8s_openapi::api::autoscaling::v1::Scale
pub type Deployment = k8s_openapi::api::apps::v1::Deployment;

/// `ReplicaSet` (apps/v1, `replicasets`, namespaced).
///
/// +genclient
/// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s_openapi::api::autoscaling::v1::Scale
/// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s_openapi::api::autoscaling::v1::Scale,result=k8s_openapi::api::autoscaling::v1::Scale
pub type ReplicaSet = k8s_openapi::api::apps::v1::ReplicaSet;

/// `StatefulSet` (apps/v1, `statefulsets`, namespaced).
///
/// +genclient
/// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s_openapi::api::autoscaling::v1::Scale
/// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s_openapi::api::autoscaling::v1::Scale,result=k8s_openapi::api::autoscaling::v1::Scale
pub type StatefulSet = k8s_openapi::api::apps::v1::StatefulSet;
