//! Writing one `events.k8s.io/v1` event (client-go's `tools/events` `recordEvent` and
//! `attemptRecording`): a series is patched (`series.count`, `series.lastObservedTime`)
//! and created when it is gone; a single event is created. Transient failures are
//! retried, with a jittered pause, up to the configured number of tries.

use k8s_openapi::api::events::v1::Event;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::sink::EventSink;
use crate::record::{BroadcasterConfig, SinkError};

/// What one attempt came to.
#[derive(Debug)]
pub(crate) enum Attempt {
    /// Written: the server's copy.
    Written(Box<Event>),
    /// Abandoned: the server refused it for good.
    Abandoned,
    /// May succeed later.
    Retry,
}

/// One attempt to write `event`.
pub(crate) async fn record_event(sink: &impl EventSink, event: &mut Event) -> Attempt {
    let is_series = event.series.is_some();
    let mut result = Err(SinkError::NotFound);
    if is_series {
        // the two-way strategic merge patch of the event without and with its series
        let patch = json!({ "series": event.series });
        result = sink.patch(event, &patch).await;
    }
    if matches!(result, Err(SinkError::NotFound)) {
        event.metadata.resource_version = None;
        result = sink.create(event).await;
    }
    match result {
        Ok(stored) => Attempt::Written(Box::new(stored)),
        // created between our patch and our create: patching again will work
        Err(SinkError::AlreadyExists) if is_series => Attempt::Retry,
        Err(SinkError::AlreadyExists) => {
            tracing::debug!(event = ?event.metadata.name, "server rejected event: already exists (will not retry)");
            Attempt::Abandoned
        }
        Err(e) if e.is_retryable() => {
            tracing::warn!(event = ?event.metadata.name, error = %e, "unable to write event (may retry after sleeping)");
            Attempt::Retry
        }
        Err(e) => {
            tracing::error!(event = ?event.metadata.name, error = %e, "server rejected event (will not retry)");
            Attempt::Abandoned
        }
    }
}

/// Writes `event`, retrying transient failures up to `config`'s tries with pauses of
/// 1 to 1.25 times its retry interval (client-go's `wait.Jitter(sleep, 0.25)`); a
/// cancelled `cancel` ends the pauses. The server's copy when written.
pub(crate) async fn attempt_recording(
    sink: &impl EventSink,
    mut event: Event,
    config: &BroadcasterConfig,
    cancel: &CancellationToken,
) -> Option<Event> {
    let mut tries = 0;
    loop {
        match record_event(sink, &mut event).await {
            Attempt::Written(stored) => return Some(*stored),
            Attempt::Abandoned => return None,
            Attempt::Retry => {}
        }
        tries += 1;
        if tries >= config.max_tries {
            tracing::error!(event = ?event.metadata.name, tries, "unable to write event (retry limit exceeded), event dropped");
            return None;
        }
        let pause = config
            .retry_interval
            .mul_f64(1.0 + 0.25 * rand::random::<f64>());
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                tracing::error!(event = ?event.metadata.name, "unable to write event (broadcaster is shut down), event dropped");
                return None;
            }
            () = tokio::time::sleep(pause) => {}
        }
    }
}
