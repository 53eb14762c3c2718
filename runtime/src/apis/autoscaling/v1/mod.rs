//! `autoscaling/v1`: marked aliases of k8s-openapi's autoscaling v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=autoscaling

/// `HorizontalPodAutoscaler` (autoscaling/v1, `horizontalpodautoscalers`, namespaced).
///
/// +genclient
pub type HorizontalPodAutoscaler = k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler;
