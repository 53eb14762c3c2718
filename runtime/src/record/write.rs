//! Writing one event to a sink, for both broadcasters (client-go's `tools/record`
//! `recordToSink` / `recordEvent` and `tools/events` `attemptRecording` / `recordEvent`):
//! an event with a patch (a repeat) is patched, and created when it is gone; a new event is
//! created. Transient failures are retried after a pause, up to the configured number of
//! tries; the two libraries differ only in their pauses and in one conflict ([`Rules`]).

use serde_json::Value;
use tokio::time::Duration;
use tokio_util::sync::CancellationToken;

use super::{
    config::BroadcasterConfig, recorded_event::RecordedEvent, sink::EventSink,
    sink_error::SinkError,
};

/// Which client-go library's write rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    /// `tools/record` (core/v1): the first pause is a random fraction of the retry
    /// interval (so clients do not all retry at once after an outage), later ones the
    /// interval; an event that already exists is abandoned.
    Record,
    /// `tools/events` (`events.k8s.io/v1`): every pause is 1 to 1.25 times the retry
    /// interval (`wait.Jitter(sleep, 0.25)`); a patched event created by someone else
    /// between the patch and the create is retried (patching again will work).
    Events,
}

impl Rules {
    /// The pause after the `tries`-th failed attempt.
    fn pause(self, interval: Duration, tries: u32) -> Duration {
        match self {
            Rules::Record if tries == 1 => interval.mul_f64(rand::random::<f64>()),
            Rules::Record => interval,
            Rules::Events => interval.mul_f64(1.0 + 0.25 * rand::random::<f64>()),
        }
    }
}

/// What one attempt came to.
#[derive(Debug)]
enum Attempt<E> {
    /// Written: the server's copy.
    Written(Box<E>),
    /// Abandoned: the server refused it for good.
    Abandoned,
    /// May succeed later.
    Retry,
}

/// One attempt to write `event`: `patch` it when there is a patch, create it when there is
/// none or the patched event is gone.
async fn attempt<E: RecordedEvent>(
    sink: &impl EventSink<E>,
    event: &mut E,
    patch: Option<&Value>,
    rules: Rules,
) -> Attempt<E> {
    let mut result = match patch {
        Some(p) => sink.patch(event, p).await,
        None => Err(SinkError::NotFound),
    };
    if matches!(result, Err(SinkError::NotFound)) {
        event.meta_mut().resource_version = None;
        result = sink.create(event).await;
    }
    let name = &event.meta().name;
    match result {
        Ok(stored) => Attempt::Written(Box::new(stored)),
        // created between our patch and our create: patching again will work
        Err(SinkError::AlreadyExists) if rules == Rules::Events && patch.is_some() => {
            Attempt::Retry
        }
        Err(e) if e.is_retryable() => {
            tracing::warn!(event = ?name, error = %e, "unable to write event (may retry after sleeping)");
            Attempt::Retry
        }
        Err(SinkError::AlreadyExists) => {
            tracing::debug!(event = ?name, "server rejected event: already exists (will not retry)");
            Attempt::Abandoned
        }
        Err(e) => {
            tracing::error!(event = ?name, error = %e, "server rejected event (will not retry)");
            Attempt::Abandoned
        }
    }
}

/// Writes `event` (patching it with `patch`, if any), retrying transient failures up to
/// `config`'s tries with pauses by `rules`; a cancelled `cancel` ends the pauses. The
/// server's copy when written.
pub(crate) async fn write<E: RecordedEvent>(
    sink: &impl EventSink<E>,
    mut event: E,
    patch: Option<&Value>,
    rules: Rules,
    config: &BroadcasterConfig,
    cancel: &CancellationToken,
) -> Option<E> {
    let mut tries = 0;
    loop {
        match attempt(sink, &mut event, patch, rules).await {
            Attempt::Written(stored) => return Some(*stored),
            Attempt::Abandoned => return None,
            Attempt::Retry => {}
        }
        tries += 1;
        let name = &event.meta().name;
        if tries >= config.max_tries {
            tracing::error!(event = ?name, tries, "unable to write event (retry limit exceeded), event dropped");
            return None;
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                tracing::error!(event = ?name, "unable to write event (broadcaster is shut down), event dropped");
                return None;
            }
            () = tokio::time::sleep(rules.pause(config.retry_interval, tries)) => {}
        }
    }
}
