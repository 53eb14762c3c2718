//! [`Subject`]: the checked start of every recorded event, for both recorders (client-go's
//! `ValidateEventType` and the recorders' refusal of an object without a name): its type,
//! the object it is about, its name and namespace, and when it happened. An event that
//! fails the check is logged and dropped by the recorder.

use k8s_openapi::{
    api::core::v1::ObjectReference, apimachinery::pkg::apis::meta::v1::ObjectMeta, jiff::Timestamp,
};

use super::{
    error::RecordError,
    event_type::{EventType, IntoEventType},
    keys::event_name,
    target::EventTarget,
};

/// What an event about to be recorded starts from.
#[derive(Debug)]
pub(crate) struct Subject {
    /// The event's type.
    pub(crate) event_type: EventType,
    /// The object the event is about.
    pub(crate) object: ObjectReference,
    /// The event's name (`<object name>.<unique hex>`) and namespace (the object's, or
    /// `default`).
    pub(crate) metadata: ObjectMeta,
    /// When it happened.
    pub(crate) now: Timestamp,
}

impl Subject {
    /// Checks `event_type` (`Normal` or `Warning`) and that `target` has a name.
    pub(crate) fn check(
        target: EventTarget,
        event_type: impl IntoEventType,
    ) -> Result<Self, RecordError> {
        let event_type = event_type.into_event_type()?;
        let object = target.0;
        let name = object
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .ok_or(RecordError::MissingName)?;
        let now = Timestamp::now();
        let namespace = object
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_owned());
        let metadata = ObjectMeta {
            name: Some(event_name(name, now)),
            namespace: Some(namespace),
            ..ObjectMeta::default()
        };
        Ok(Self {
            event_type,
            object,
            metadata,
            now,
        })
    }
}
