//! `apiextensions.k8s.io/v1`: marked aliases of k8s-openapi's apiextensions v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=apiextensions.k8s.io

/// `CustomResourceDefinition` (apiextensions.k8s.io/v1, `customresourcedefinitions`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type CustomResourceDefinition =
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
