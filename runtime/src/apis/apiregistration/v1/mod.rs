//! `apiregistration.k8s.io/v1`: marked aliases of k8s-openapi's apiregistration v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=apiregistration.k8s.io

/// `APIService` (apiregistration.k8s.io/v1, `apiservices`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type APIService = k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
