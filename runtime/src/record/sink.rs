//! [`EventSink`]: where a broadcaster writes events (client-go's `record.EventSink` and
//! `tools/events` `EventSink`), generic over the event type: core/v1 `Event` (the default)
//! or `events.k8s.io/v1` `Event`.

use k8s_openapi::api::core::v1::Event;
use serde_json::Value;

use super::sink_error::SinkError;
use crate::client::BoxFuture;

/// Stores events of type `E` (core/v1 Events unless said otherwise). The event's
/// `metadata.namespace` names the namespace to write to.
///
/// [`ClientEventSink`](super::ClientEventSink) implements it for both event types; a test
/// double implements it for the one it stands in for.
pub trait EventSink<E = Event>: Send + Sync + 'static {
    /// Creates `event`, returning the stored copy.
    fn create<'a>(&'a self, event: &'a E) -> BoxFuture<'a, Result<E, SinkError>>;
    /// Replaces `event`, returning the stored copy.
    fn update<'a>(&'a self, event: &'a E) -> BoxFuture<'a, Result<E, SinkError>>;
    /// Applies a strategic-merge `patch` to the stored `event` (found by name).
    fn patch<'a>(&'a self, event: &'a E, patch: &'a Value) -> BoxFuture<'a, Result<E, SinkError>>;
}

impl<E, S: EventSink<E> + ?Sized> EventSink<E> for std::sync::Arc<S> {
    fn create<'a>(&'a self, event: &'a E) -> BoxFuture<'a, Result<E, SinkError>> {
        (**self).create(event)
    }

    fn update<'a>(&'a self, event: &'a E) -> BoxFuture<'a, Result<E, SinkError>> {
        (**self).update(event)
    }

    fn patch<'a>(&'a self, event: &'a E, patch: &'a Value) -> BoxFuture<'a, Result<E, SinkError>> {
        (**self).patch(event, patch)
    }
}
