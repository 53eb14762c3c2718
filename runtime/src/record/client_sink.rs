//! [`ClientEventSink`]: the sink writing events through a [`Client`] (client-go's
//! `typedcorev1.EventSinkImpl` and `tools/events` `EventSinkImpl`), for both event types.

use kube_core::params::{Patch, PatchParams, PostParams};
use serde_json::Value;

use super::{recorded_event::RecordedEvent, sink::EventSink, sink_error::SinkError};
use crate::client::{BoxFuture, Client, ResourceClient};

/// Writes Events with a [`Client`]: core/v1 Events to `/api/v1` (an event without a
/// namespace goes to `default`) and `events.k8s.io/v1` Events to `/apis/events.k8s.io/v1`
/// (an event without a namespace is rejected, as client-go does).
#[derive(Debug, Clone)]
pub struct ClientEventSink {
    client: Client,
}

impl ClientEventSink {
    /// A sink writing through `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// The events of `event`'s namespace.
    fn events<E: RecordedEvent>(&self, event: &E) -> Result<ResourceClient<E>, SinkError> {
        let ns = event.namespace_to_write()?;
        Ok(ResourceClient::namespaced(self.client.clone(), ns))
    }
}

fn name_of<E: RecordedEvent>(event: &E) -> Result<&str, SinkError> {
    event
        .meta()
        .name
        .as_deref()
        .ok_or_else(|| SinkError::Rejected("the event has no name".into()))
}

impl<E: RecordedEvent> EventSink<E> for ClientEventSink {
    fn create<'a>(&'a self, event: &'a E) -> BoxFuture<'a, Result<E, SinkError>> {
        Box::pin(async move {
            Ok(self
                .events(event)?
                .create(&PostParams::default(), event)
                .await?)
        })
    }

    fn update<'a>(&'a self, event: &'a E) -> BoxFuture<'a, Result<E, SinkError>> {
        Box::pin(async move {
            Ok(self
                .events(event)?
                .update(&PostParams::default(), event)
                .await?)
        })
    }

    fn patch<'a>(&'a self, event: &'a E, patch: &'a Value) -> BoxFuture<'a, Result<E, SinkError>> {
        Box::pin(async move {
            let name = name_of(event)?;
            Ok(self
                .events(event)?
                .patch(name, &PatchParams::default(), &Patch::Strategic(patch))
                .await?)
        })
    }
}
