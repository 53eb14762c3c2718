//! [`EventSink`]: where a broadcaster writes events (client-go's `record.EventSink`), and
//! [`ClientEventSink`], the sink writing core/v1 Events through a [`Client`]
//! (client-go's `typedcorev1.EventSinkImpl`).

use k8s_openapi::api::core::v1::Event;
use kube_core::params::{Patch, PatchParams, PostParams};
use serde_json::Value;

use crate::client::{BoxFuture, Client, Error as ClientError, ResourceClient};

/// A boxed error from a sink.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a sink could not store an event; decides whether the broadcaster retries.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The event to patch does not exist (any more): the broadcaster creates it instead.
    #[error("event not found")]
    NotFound,
    /// An event of that name already exists: not retried.
    #[error("event already exists")]
    AlreadyExists,
    /// The server rejected the event (invalid, forbidden, namespace terminating ...): not
    /// retried, the same request would be rejected again.
    #[error("event rejected: {0}")]
    Rejected(#[source] BoxError),
    /// The server could not be reached or was temporarily unable to answer: retried.
    #[error("event sink unavailable: {0}")]
    Unavailable(#[source] BoxError),
}

impl SinkError {
    /// Whether writing the event again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, SinkError::Unavailable(_))
    }
}

impl From<ClientError> for SinkError {
    /// API answers are final except 429 and 5xx; transport, decode and credential failures
    /// are transient; a request that cannot be built or encoded is final.
    fn from(e: ClientError) -> Self {
        if e.is_not_found() {
            return SinkError::NotFound;
        }
        if e.is_already_exists() {
            return SinkError::AlreadyExists;
        }
        match &e {
            ClientError::Api(status) if status.code == 429 || status.code >= 500 => {
                SinkError::Unavailable(Box::new(e))
            }
            ClientError::Transport(_)
            | ClientError::Decode(_)
            | ClientError::DecodeCbor(_)
            | ClientError::Auth(_) => SinkError::Unavailable(Box::new(e)),
            _ => SinkError::Rejected(Box::new(e)),
        }
    }
}

/// Stores events. The event's `metadata.namespace` names the namespace to write to.
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

/// Writes core/v1 Events with a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientEventSink {
    client: Client,
}

impl ClientEventSink {
    /// A sink writing through `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    fn events(&self, event: &Event) -> ResourceClient<Event> {
        let ns = event.metadata.namespace.as_deref().unwrap_or("default");
        ResourceClient::namespaced(self.client.clone(), ns)
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
                .events(event)
                .create(&PostParams::default(), event)
                .await?)
        })
    }

    fn update<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>> {
        Box::pin(async move {
            Ok(self
                .events(event)
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
                .events(event)
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
