//! `certificates.k8s.io/v1`: marked aliases of k8s-openapi's certificates v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=certificates.k8s.io

/// `CertificateSigningRequest` (certificates.k8s.io/v1, `certificatesigningrequests`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:method=UpdateApproval,verb=update,subresource=approval
pub type CertificateSigningRequest = k8s_openapi::api::certificates::v1::CertificateSigningRequest;
