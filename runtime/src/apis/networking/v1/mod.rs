//! `networking.k8s.io/v1`: marked aliases of k8s-openapi's networking v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=networking.k8s.io

/// `Ingress` (networking.k8s.io/v1, `ingresses`, namespaced).
///
/// +genclient
pub type Ingress = k8s_openapi::api::networking::v1::Ingress;

/// `IngressClass` (networking.k8s.io/v1, `ingressclasses`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type IngressClass = k8s_openapi::api::networking::v1::IngressClass;

/// `IPAddress` (networking.k8s.io/v1, `ipaddresses`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type IPAddress = k8s_openapi::api::networking::v1::IPAddress;

/// `NetworkPolicy` (networking.k8s.io/v1, `networkpolicies`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type NetworkPolicy = k8s_openapi::api::networking::v1::NetworkPolicy;

/// `ServiceCIDR` (networking.k8s.io/v1, `servicecidrs`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type ServiceCIDR = k8s_openapi::api::networking::v1::ServiceCIDR;
