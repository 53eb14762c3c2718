//! [`EventSink`]: where an `events.k8s.io/v1` broadcaster writes events (client-go's
//! `tools/events` `EventSink`), and [`ClientEventSink`], the sink writing them through a
//! [`Client`] (client-go's `EventSinkImpl`).

use k8s_openapi::api::events::v1::Event;
use kube_core::params::{Patch, PatchParams, PostParams};
use serde_json::Value;

use crate::{
    client::{BoxFuture, Client, ResourceClient},
    record::SinkError,
};

/// Stores `events.k8s.io/v1` events. The event's `metadata.namespace` names the
/// namespace to write to.
pub trait EventSink: Send + Sync + 'static {
    /// Creates `event`, returning the stored copy.
    fn create<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>>;
    /// Replaces `event`, returning the stored copy.
    fn update<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>>;
    /// Applies a strategic-merge `patch` to the stored `event` (found by name).
    fn patch<'a>(
        &'a self,
        event: &'a Event,
        patch: &'a Value,
    ) -> BoxFuture<'a, Result<Event, SinkError>>;
}

/// Writes `events.k8s.io/v1` events with a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientEventSink {
    client: Client,
}

impl ClientEventSink {
    /// A sink writing through `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// The events of `event`'s namespace; client-go refuses an event without one.
    fn events(&self, event: &Event) -> Result<ResourceClient<Event>, SinkError> {
        match event.metadata.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => Ok(ResourceClient::namespaced(self.client.clone(), ns)),
            _ => Err(SinkError::Rejected(
                "can't write an event with empty namespace".into(),
            )),
        }
    }
}

fn name_of(event: &Event) -> Result<&str, SinkError> {
    event
        .metadata
        .name
        .as_deref()
        .ok_or_else(|| SinkError::Rejected("the event has no name".into()))
}

impl EventSink for ClientEventSink {
    fn create<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>> {
        Box::pin(async move {
            Ok(self
                .events(event)?
                .create(&PostParams::default(), event)
                .await?)
        })
    }

    fn update<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>> {
        Box::pin(async move {
            Ok(self
                .events(event)?
                .update(&PostParams::default(), event)
                .await?)
        })
    }

    fn patch<'a>(
        &'a self,
        event: &'a Event,
        patch: &'a Value,
    ) -> BoxFuture<'a, Result<Event, SinkError>> {
        Box::pin(async move {
            let name = name_of(event)?;
            Ok(self
                .events(event)?
                .patch(name, &PatchParams::default(), &Patch::Strategic(patch))
                .await?)
        })
    }
}

impl<S: EventSink + ?Sized> EventSink for std::sync::Arc<S> {
    fn create<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>> {
        (**self).create(event)
    }

    fn update<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>> {
        (**self).update(event)
    }

    fn patch<'a>(
        &'a self,
        event: &'a Event,
        patch: &'a Value,
    ) -> BoxFuture<'a, Result<Event, SinkError>> {
        (**self).patch(event, patch)
    }
}
