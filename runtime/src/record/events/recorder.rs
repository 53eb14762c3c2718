//! [`EventRecorder`] (client-go's `tools/events` `EventRecorder`): builds
//! `events.k8s.io/v1` Events — regarding, related, type, reason, action, note, eventTime,
//! reporting controller and instance — and hands them to its broadcaster without ever
//! waiting.

use std::{fmt::Display, sync::Arc};

use k8s_openapi::{api::events::v1::Event, apimachinery::pkg::apis::meta::v1::MicroTime};

use crate::record::{EventTarget, IntoEventType, fanout::FanOut, subject::Subject};

/// Records `events.k8s.io/v1` events on behalf of one controller instance. Cheap to
/// clone; every clone feeds the same broadcaster.
///
/// Each event names the object it is about (`regarding`), optionally a second object
/// (`related`, e.g. the Node a Pod was scheduled to), its type (an
/// [`EventType`](crate::record::EventType) or a string that must be `Normal` or
/// `Warning`), a reason (why: short, UpperCamelCase), an action (what was done or failed:
/// short, UpperCamelCase) and a note for humans (anything [`Display`]:
/// `format_args!(...)` for client-go's `Eventf`). An event with another type, or about an
/// object with no name, is logged and dropped, as client-go does.
#[derive(Clone)]
pub struct EventRecorder {
    shared: Arc<FanOut<Event>>,
    reporting: Arc<(String, String)>,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("reporting_controller", &self.reporting.0)
            .field("reporting_instance", &self.reporting.1)
            .finish_non_exhaustive()
    }
}

impl EventRecorder {
    pub(crate) fn new(
        shared: Arc<FanOut<Event>>,
        reporting_controller: String,
        reporting_instance: String,
    ) -> Self {
        Self {
            shared,
            reporting: Arc::new((reporting_controller, reporting_instance)),
        }
    }

    /// The `reportingController` written into every event.
    pub fn reporting_controller(&self) -> &str {
        &self.reporting.0
    }

    /// The `reportingInstance` written into every event.
    pub fn reporting_instance(&self) -> &str {
        &self.reporting.1
    }

    /// Records an event about `regarding` (an object, `&pod`, or an `ObjectReference`),
    /// with `related` as the second object it involves, if any (client-go's `Eventf`).
    ///
    /// ```no_run
    /// # fn demo(recorder: kubegen::record::events::EventRecorder,
    /// #         pod: k8s_openapi::api::core::v1::Pod, node: k8s_openapi::api::core::v1::Node) {
    /// use kubegen::record::EventType;
    /// recorder.event(&pod, Some((&node).into()), EventType::Normal, "Scheduled", "Binding",
    ///     format_args!("assigned to {}", "node-1"));
    /// recorder.event(&pod, None, EventType::Warning, "FailedMount", "Mount", "volume not found");
    /// # }
    /// ```
    pub fn event(
        &self,
        regarding: impl Into<EventTarget>,
        related: Option<EventTarget>,
        event_type: impl IntoEventType,
        reason: &str,
        action: &str,
        note: impl Display,
    ) {
        let note = note.to_string();
        let subject = match Subject::check(regarding.into(), event_type) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, reason, action, note, "event not recorded");
                return;
            }
        };
        let event = Event {
            metadata: subject.metadata,
            event_time: Some(MicroTime(subject.now)),
            series: None,
            reporting_controller: Some(self.reporting.0.clone()),
            reporting_instance: Some(self.reporting.1.clone()),
            action: Some(action.to_owned()),
            reason: Some(reason.to_owned()),
            regarding: Some(subject.object),
            related: related.map(|r| r.0),
            note: Some(note),
            type_: Some(subject.event_type.as_str().to_owned()),
            ..Event::default()
        };
        self.shared.distribute(event);
    }
}
