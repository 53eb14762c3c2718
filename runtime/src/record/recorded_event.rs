//! [`RecordedEvent`]: the two kinds of Event a broadcaster handles — core/v1 `Event`
//! ([`crate::record`]) and `events.k8s.io/v1` `Event` ([`crate::record::events`]) — and
//! what the shared machinery (hub, sink, writes) needs to know of each.

use k8s_openapi::api::{core, events};
use kube_core::NamespaceResourceScope;

use super::sink_error::SinkError;
use crate::Object;

/// An Event type the recorders record and [`ClientEventSink`](super::ClientEventSink)
/// writes: core/v1 `Event` or `events.k8s.io/v1` `Event`. Sealed: implemented for these
/// two only.
pub trait RecordedEvent:
    Object + kube_core::Resource<Scope = NamespaceResourceScope> + sealed::Described
{
}

impl RecordedEvent for core::v1::Event {}

impl RecordedEvent for events::v1::Event {}

pub(crate) mod sealed {
    use super::SinkError;

    /// What the shared machinery reads of an event.
    pub trait Described: Send + Sync + 'static {
        /// The name of the object the event is about.
        fn object_name(&self) -> Option<&str>;
        /// The event's reason.
        fn reason(&self) -> Option<&str>;
        /// The namespace a sink writes the event to.
        fn namespace_to_write(&self) -> Result<&str, SinkError>;
    }
}

impl sealed::Described for core::v1::Event {
    fn object_name(&self) -> Option<&str> {
        self.involved_object.name.as_deref()
    }

    fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The event's namespace, `default` when it has none (client-go's `EventSinkImpl`).
    fn namespace_to_write(&self) -> Result<&str, SinkError> {
        Ok(self.metadata.namespace.as_deref().unwrap_or("default"))
    }
}

impl sealed::Described for events::v1::Event {
    fn object_name(&self) -> Option<&str> {
        self.regarding.as_ref().and_then(|r| r.name.as_deref())
    }

    fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The event's namespace; client-go's `tools/events` sink refuses an event without one.
    fn namespace_to_write(&self) -> Result<&str, SinkError> {
        match self.metadata.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => Ok(ns),
            _ => Err(SinkError::Rejected(
                "can't write an event with empty namespace".into(),
            )),
        }
    }
}
