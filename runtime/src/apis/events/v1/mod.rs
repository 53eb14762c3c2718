//! `events.k8s.io/v1`: marked aliases of k8s-openapi's events v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=events.k8s.io

/// `Event` (events.k8s.io/v1, `events`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type Event = k8s_openapi::api::events::v1::Event;
