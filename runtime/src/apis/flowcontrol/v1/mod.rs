//! `flowcontrol.apiserver.k8s.io/v1`: marked aliases of k8s-openapi's flowcontrol v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=flowcontrol.apiserver.k8s.io

/// `FlowSchema` (flowcontrol.apiserver.k8s.io/v1, `flowschemas`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type FlowSchema = k8s_openapi::api::flowcontrol::v1::FlowSchema;

/// `PriorityLevelConfiguration` (flowcontrol.apiserver.k8s.io/v1, `prioritylevelconfigurations`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type PriorityLevelConfiguration = k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration;
