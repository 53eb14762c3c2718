//! `admissionregistration.k8s.io/v1`: marked aliases of k8s-openapi's admissionregistration v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=admissionregistration.k8s.io

/// `MutatingWebhookConfiguration` (admissionregistration.k8s.io/v1, `mutatingwebhookconfigurations`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type MutatingWebhookConfiguration =
    k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;

/// `ValidatingAdmissionPolicy` (admissionregistration.k8s.io/v1, `validatingadmissionpolicies`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type ValidatingAdmissionPolicy =
    k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy;

/// `ValidatingAdmissionPolicyBinding` (admissionregistration.k8s.io/v1, `validatingadmissionpolicybindings`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type ValidatingAdmissionPolicyBinding =
    k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding;

/// `ValidatingWebhookConfiguration` (admissionregistration.k8s.io/v1, `validatingwebhookconfigurations`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type ValidatingWebhookConfiguration =
    k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
