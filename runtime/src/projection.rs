//! Projections: the part of a kind a controller reads, decoded straight from the wire.
//!
//! A controller that reads a Pod's node and phase does not need its containers, volumes
//! and status conditions in memory. client-go and kube-rs decode the whole object and
//! then transform it (a cache `TransformFunc`, kube-rs's `.modify()`), so the whole object
//! is built first. A projection is a struct with the fields the controller reads:
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! #[derive(Clone, Debug, kubegen::Projection)]
//! #[projection(of = Pod)]
//! pub struct PodPlacement {
//!     pub metadata: ObjectMeta,
//!     #[projection(path = "spec.nodeName")]
//!     pub node_name: Option<String>,
//!     #[projection(path = "status.phase")]
//!     pub phase: Option<String>,
//! }
//!
//! let json = br#"{"apiVersion": "v1", "kind": "Pod",
//!     "metadata": {"name": "web-0", "managedFields": [{"manager": "kubelet"}]},
//!     "spec": {"nodeName": "node-7", "containers": "not even a list"},
//!     "status": {"phase": "Running"}}"#;
//! let pod: PodPlacement = serde_json::from_slice(json).unwrap();
//! assert_eq!(pod.node_name.as_deref(), Some("node-7"));
//! assert!(pod.metadata.managed_fields.is_none());
//! ```
//!
//! Keys no path names are skipped by the decoder (scanned, never built; above, the
//! malformed `containers` is never even decoded), and so are `metadata.managedFields` and
//! kubectl's `last-applied-configuration` annotation (a copy of the whole object) unless
//! the projection says `#[projection(of = Pod, keep_managed_fields, keep_last_applied)]`. A
//! projection implements [`Object`] with its source kind's names and scope, so everything
//! generic over objects serves it: `SharedIndexInformer<PodPlacement>` (the factory's
//! `informer_for::<PodPlacement>()`), `Lister<PodPlacement>`, indexers, a controller's
//! `Controller::builder` / `owns` / `watches`, and [`ReadClient<PodPlacement>`]
//! (get, list and watch only: a partial object is never written back). A path that names a
//! field the kind does not have is a compile error at the path.
//!
//! [`ReadClient<PodPlacement>`]: crate::client::ReadClient

use crate::Object;

/// A type derived with `#[derive(kubegen::Projection)]`: part of the kind `Source`.
pub trait Projection: Object {
    /// The kind the projection reads (its names, scope and fields).
    type Source: Object;
}

/// What the derive's expansion refers to. Not public API.
#[doc(hidden)]
pub mod __private {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde::Deserializer;

    use crate::client::Strip;

    /// `metadata`, decoded without `managedFields` and the last-applied annotation.
    pub fn metadata<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
        (Strip::MANAGED_FIELDS | Strip::LAST_APPLIED).deserialize_metadata(deserializer)
    }

    /// `metadata`, decoded without the last-applied annotation.
    pub fn metadata_keep_managed_fields<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<ObjectMeta, D::Error> {
        Strip::LAST_APPLIED.deserialize_metadata(deserializer)
    }

    /// `metadata`, decoded without `managedFields`.
    pub fn metadata_keep_last_applied<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<ObjectMeta, D::Error> {
        Strip::MANAGED_FIELDS.deserialize_metadata(deserializer)
    }

    /// A field of the source kind, on the way down a path (the path check only).
    pub struct Probe<'a, T>(pub &'a T);

    /// One step down a path through an `Option` (chosen first by method resolution).
    pub trait ViaOption<'a> {
        /// What the option holds.
        type Inner;
        /// The held value, if any.
        fn __step(&self) -> Option<&'a Self::Inner>;
    }

    impl<'a, T> ViaOption<'a> for Probe<'a, Option<T>> {
        type Inner = T;
        fn __step(&self) -> Option<&'a T> {
            self.0.as_ref()
        }
    }

    /// One step down a path through a plain value (chosen when the field is no `Option`).
    pub trait ViaValue<'a> {
        /// The value.
        type Inner;
        /// The value.
        fn __step(&self) -> Option<&'a Self::Inner>;
    }

    impl<'a, T> ViaValue<'a> for &Probe<'a, T> {
        type Inner = T;
        fn __step(&self) -> Option<&'a T> {
            Some(self.0)
        }
    }
}
