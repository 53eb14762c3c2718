//! [`EventTarget`]: the object an event is about, as the `ObjectReference` written into the
//! event's `involvedObject` (client-go's `reference.GetReference`).

use k8s_openapi::api::core::v1::ObjectReference;
use kube_core::Resource;

/// The object an event is about. Made from a reference to any resource (`&pod`, `&foo`),
/// or from an `ObjectReference` you already have.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventTarget(pub ObjectReference);

impl<K: Resource<DynamicType = ()>> From<&K> for EventTarget {
    /// apiVersion, kind, namespace, name, uid and resourceVersion of `obj`.
    fn from(obj: &K) -> Self {
        let mut r = obj.object_ref(&());
        r.resource_version = obj.meta().resource_version.clone();
        EventTarget(r)
    }
}

impl From<ObjectReference> for EventTarget {
    fn from(r: ObjectReference) -> Self {
        EventTarget(r)
    }
}

impl EventTarget {
    /// The reference.
    pub fn reference(&self) -> &ObjectReference {
        &self.0
    }

    /// Narrows the reference to a field of the object (e.g. `spec.containers{web}`).
    pub fn with_field_path(mut self, path: impl Into<String>) -> Self {
        self.0.field_path = Some(path.into());
        self
    }
}
