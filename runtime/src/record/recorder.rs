//! [`EventRecorder`] (client-go's `record.EventRecorder`): builds core/v1 Events about
//! objects and hands them to its broadcaster without ever waiting.

use std::{collections::BTreeMap, fmt::Display, sync::Arc};

use k8s_openapi::{
    api::core::v1::{Event, EventSource},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};

use super::{event_type::IntoEventType, fanout::FanOut, subject::Subject, target::EventTarget};

/// Records events on behalf of one source. Cheap to clone; every clone feeds the same
/// broadcaster.
///
/// `message` is anything [`Display`]: a `&str`, a `String`, or `format_args!(...)` for
/// client-go's `Eventf`. The event type is an [`EventType`](super::EventType) or a string
/// that must be `Normal` or `Warning`; an event with another type, or about an object with
/// no name, is logged and dropped, as client-go does.
#[derive(Clone)]
pub struct EventRecorder {
    shared: Arc<FanOut<Event>>,
    source: Arc<EventSource>,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl EventRecorder {
    pub(crate) fn new(shared: Arc<FanOut<Event>>, source: EventSource) -> Self {
        Self {
            shared,
            source: Arc::new(source),
        }
    }

    /// The source written into every event.
    pub fn source(&self) -> &EventSource {
        &self.source
    }

    /// Records an event about `target` (an object, `&pod`, or an `ObjectReference`).
    /// `reason` should be short, unique and UpperCamelCase; `message` is for humans.
    pub fn event(
        &self,
        target: impl Into<EventTarget>,
        event_type: impl IntoEventType,
        reason: &str,
        message: impl Display,
    ) {
        self.generate(target.into(), None, event_type, reason, message);
    }

    /// Like [`event`](Self::event) with a formatted message:
    /// `recorder.eventf(&pod, EventType::Warning, "Failed", format_args!("{n} errors"))`.
    pub fn eventf(
        &self,
        target: impl Into<EventTarget>,
        event_type: impl IntoEventType,
        reason: &str,
        args: std::fmt::Arguments<'_>,
    ) {
        self.generate(target.into(), None, event_type, reason, args);
    }

    /// Like [`event`](Self::event), with annotations on the Event object.
    pub fn annotated_event(
        &self,
        target: impl Into<EventTarget>,
        annotations: BTreeMap<String, String>,
        event_type: impl IntoEventType,
        reason: &str,
        message: impl Display,
    ) {
        self.generate(
            target.into(),
            Some(annotations),
            event_type,
            reason,
            message,
        );
    }

    fn generate(
        &self,
        target: EventTarget,
        annotations: Option<BTreeMap<String, String>>,
        event_type: impl IntoEventType,
        reason: &str,
        message: impl Display,
    ) {
        let message = message.to_string();
        let subject = match Subject::check(target, event_type) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, reason, message, "event not recorded");
                return;
            }
        };
        let now = subject.now;
        let event = Event {
            metadata: ObjectMeta {
                annotations,
                ..subject.metadata
            },
            involved_object: subject.object,
            reason: Some(reason.to_owned()),
            message: Some(message),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: Some(1),
            type_: Some(subject.event_type.as_str().to_owned()),
            source: Some((*self.source).clone()),
            reporting_component: Some(self.source.component.clone().unwrap_or_default()),
            reporting_instance: Some(self.source.host.clone().unwrap_or_default()),
            ..Event::default()
        };
        self.shared.distribute(event);
    }
}
