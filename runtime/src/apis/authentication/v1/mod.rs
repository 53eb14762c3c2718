//! `authentication.k8s.io/v1`: marked aliases of k8s-openapi's authentication v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=authentication.k8s.io

/// `SelfSubjectReview` (authentication.k8s.io/v1, `selfsubjectreviews`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:onlyVerbs=create
pub type SelfSubjectReview = k8s_openapi::api::authentication::v1::SelfSubjectReview;

/// `TokenReview` (authentication.k8s.io/v1, `tokenreviews`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:onlyVerbs=create
pub type TokenReview = k8s_openapi::api::authentication::v1::TokenReview;
