//! `authorization.k8s.io/v1`: marked aliases of k8s-openapi's authorization v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=authorization.k8s.io

/// `LocalSubjectAccessReview` (authorization.k8s.io/v1, `localsubjectaccessreviews`, namespaced).
///
/// +genclient
/// +genclient:onlyVerbs=create
pub type LocalSubjectAccessReview = k8s_openapi::api::authorization::v1::LocalSubjectAccessReview;

/// `SelfSubjectAccessReview` (authorization.k8s.io/v1, `selfsubjectaccessreviews`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:onlyVerbs=create
pub type SelfSubjectAccessReview = k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;

/// `SelfSubjectRulesReview` (authorization.k8s.io/v1, `selfsubjectrulesreviews`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:onlyVerbs=create
pub type SelfSubjectRulesReview = k8s_openapi::api::authorization::v1::SelfSubjectRulesReview;

/// `SubjectAccessReview` (authorization.k8s.io/v1, `subjectaccessreviews`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:onlyVerbs=create
pub type SubjectAccessReview = k8s_openapi::api::authorization::v1::SubjectAccessReview;
