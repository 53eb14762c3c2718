//! [`EventBroadcaster`] (client-go's `record.EventBroadcaster`): fans the events of its
//! recorders out to watchers — a sink writing them to the API server, a `tracing` logger,
//! any callback. Each watcher runs on its own tokio task behind a bounded queue: recording
//! never blocks, and an event that finds a queue full is dropped and logged.

use std::sync::{Arc, atomic::Ordering};

use k8s_openapi::api::core::v1::{Event, EventSource};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    config::BroadcasterConfig,
    correlator::{Correlated, EventCorrelator},
    fanout::{FanOut, WatchHandle},
    recorder::EventRecorder,
    sink::EventSink,
};

/// Receives events from its [`EventRecorder`]s and sends them to watchers.
///
/// ```no_run
/// use k8s_openapi::api::core::v1::{EventSource, Pod};
/// use kubegen::record::{ClientEventSink, EventBroadcaster, EventType};
///
/// # async fn demo(client: kubegen::client::Client, pod: Pod) {
/// let broadcaster = EventBroadcaster::new();
/// broadcaster.start_structured_logging(tracing::Level::INFO);
/// broadcaster.start_recording_to_sink(ClientEventSink::new(client));
/// let recorder = broadcaster.new_recorder(EventSource {
///     component: Some("my-controller".into()),
///     host: None,
/// });
/// recorder.event(&pod, EventType::Normal, "Synced", "pod synced");
/// recorder.event(&pod, EventType::Warning, "Failed", format_args!("{} attempts", 3));
/// broadcaster.shutdown().await; // flushes queued events
/// # }
/// ```
#[derive(Clone)]
pub struct EventBroadcaster {
    shared: Arc<FanOut<Event>>,
}

impl std::fmt::Debug for EventBroadcaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBroadcaster")
            .field("config", &self.shared.config)
            .field("watchers", &self.shared.watchers.read().len())
            .field("shut_down", &self.shared.shut_down.load(Ordering::Relaxed))
            .finish()
    }
}

impl Default for EventBroadcaster {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBroadcaster {
    /// A broadcaster with client-go's defaults.
    pub fn new() -> Self {
        Self::with_config(BroadcasterConfig::default())
    }

    /// A broadcaster with `config`.
    pub fn with_config(config: BroadcasterConfig) -> Self {
        Self {
            shared: Arc::new(FanOut::new(config)),
        }
    }

    /// A recorder whose events carry `source` (and `reportingComponent` /
    /// `reportingInstance` from its component and host).
    pub fn new_recorder(&self, source: EventSource) -> EventRecorder {
        EventRecorder::new(self.shared.clone(), source)
    }

    /// How many events were dropped because a watcher's queue was full.
    pub fn dropped_events(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Calls `handler` with every event, on a task of its own. Must be called within a
    /// tokio runtime.
    pub fn start_event_watcher(
        &self,
        handler: impl Fn(&Event) + Send + Sync + 'static,
    ) -> WatchHandle {
        self.shared
            .spawn_watcher(move |mut rx: mpsc::Receiver<Arc<Event>>| async move {
                while let Some(event) = rx.recv().await {
                    handler(&event);
                }
            })
    }

    /// Logs every event with `tracing` at `level` (client-go's `StartStructuredLogging`).
    pub fn start_structured_logging(&self, level: tracing::Level) -> WatchHandle {
        self.start_event_watcher(move |e| log_event(level, e))
    }

    /// Writes every event to `sink` after correlation (aggregation, counting, spam
    /// filtering), retrying an event the sink could not store up to the configured number
    /// of tries (client-go's `StartRecordingToSink`). Must be called within a tokio runtime.
    pub fn start_recording_to_sink(&self, sink: impl EventSink) -> WatchHandle {
        let config = self.shared.config.clone();
        let cancel = self.shared.cancel.clone();
        self.shared
            .spawn_watcher(move |mut rx: mpsc::Receiver<Arc<Event>>| async move {
                let mut correlator = EventCorrelator::new(config.correlator.clone());
                while let Some(event) = rx.recv().await {
                    record_to_sink(&sink, (*event).clone(), &mut correlator, &config, &cancel)
                        .await;
                }
            })
    }

    /// Shuts the broadcaster down (client-go's `Shutdown`): recorders stop queueing,
    /// retry pauses end, and every event still queued gets one more attempt. Returns once
    /// every watcher has finished.
    pub async fn shutdown(&self) {
        self.shared.shutdown().await;
    }
}

/// Correlates `event` and writes it, retrying transient failures (client-go's
/// `recordToSink`).
async fn record_to_sink(
    sink: &impl EventSink,
    event: Event,
    correlator: &mut EventCorrelator,
    config: &BroadcasterConfig,
    cancel: &CancellationToken,
) {
    let (mut event, patch) = match correlator.correlate(event) {
        Correlated::Skip => {
            tracing::debug!("event dropped by the spam filter");
            return;
        }
        Correlated::Create(e) => (*e, None),
        Correlated::Patch { event, patch } => (*event, Some(patch)),
    };
    let mut tries = 0;
    loop {
        if record_event(sink, &mut event, patch.as_ref(), correlator).await {
            return;
        }
        tries += 1;
        if tries >= config.max_tries {
            tracing::error!(
                event = ?event.metadata.name,
                tries,
                "unable to write event (retry limit exceeded), event dropped"
            );
            return;
        }
        // randomise the first pause so clients do not all retry at once after an outage
        let delay = if tries == 1 {
            config.retry_interval.mul_f64(rand::random::<f64>())
        } else {
            config.retry_interval
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                tracing::error!(
                    event = ?event.metadata.name,
                    "unable to write event (broadcaster is shut down), event dropped"
                );
                return;
            }
            () = tokio::time::sleep(delay) => {}
        }
    }
}

/// One attempt: patch (falling back to create when the event is gone) or create. True when
/// the event was written or must be abandoned, false when it should be retried.
async fn record_event(
    sink: &impl EventSink,
    event: &mut Event,
    patch: Option<&serde_json::Value>,
    correlator: &mut EventCorrelator,
) -> bool {
    let mut result = match patch {
        Some(p) => sink.patch(event, p).await,
        None => Err(super::sink::SinkError::NotFound),
    };
    if matches!(result, Err(super::sink::SinkError::NotFound)) {
        event.metadata.resource_version = None;
        result = sink.create(event).await;
    }
    match result {
        Ok(stored) => {
            correlator.update_state(&stored);
            true
        }
        Err(e) if e.is_retryable() => {
            tracing::warn!(event = ?event.metadata.name, error = %e, "unable to write event (may retry after sleeping)");
            false
        }
        Err(super::sink::SinkError::AlreadyExists) => {
            tracing::debug!(event = ?event.metadata.name, "server rejected event: already exists (will not retry)");
            true
        }
        Err(e) => {
            tracing::error!(event = ?event.metadata.name, error = %e, "server rejected event (will not retry)");
            true
        }
    }
}

fn log_event(level: tracing::Level, e: &Event) {
    let o = &e.involved_object;
    let object = match (o.namespace.as_deref(), o.name.as_deref()) {
        (Some(ns), Some(name)) if !ns.is_empty() => format!("{ns}/{name}"),
        (_, name) => name.unwrap_or_default().to_owned(),
    };
    macro_rules! emit {
        ($lvl:expr) => {
            tracing::event!(
                $lvl,
                object = %object,
                field_path = o.field_path.as_deref().unwrap_or_default(),
                kind = o.kind.as_deref().unwrap_or_default(),
                api_version = o.api_version.as_deref().unwrap_or_default(),
                r#type = e.type_.as_deref().unwrap_or_default(),
                reason = e.reason.as_deref().unwrap_or_default(),
                event_message = e.message.as_deref().unwrap_or_default(),
                "Event occurred"
            )
        };
    }
    match level {
        tracing::Level::ERROR => emit!(tracing::Level::ERROR),
        tracing::Level::WARN => emit!(tracing::Level::WARN),
        tracing::Level::INFO => emit!(tracing::Level::INFO),
        tracing::Level::DEBUG => emit!(tracing::Level::DEBUG),
        _ => emit!(tracing::Level::TRACE),
    }
}
