//! `discovery.k8s.io/v1`: marked aliases of k8s-openapi's discovery v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=discovery.k8s.io

/// `EndpointSlice` (discovery.k8s.io/v1, `endpointslices`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type EndpointSlice = k8s_openapi::api::discovery::v1::EndpointSlice;
