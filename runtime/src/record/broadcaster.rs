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
    logging::{log_at, object_path},
    recorder::EventRecorder,
    sink::EventSink,
    write::{Rules, write},
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
        self.shared.dropped_events()
    }

    /// Calls `handler` with every event, on a task of its own. Must be called within a
    /// tokio runtime.
    pub fn start_event_watcher(
        &self,
        handler: impl Fn(&Event) + Send + Sync + 'static,
    ) -> WatchHandle {
        self.shared.spawn_handler(handler)
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
    let (event, patch) = match correlator.correlate(event) {
        Correlated::Skip => {
            tracing::debug!("event dropped by the spam filter");
            return;
        }
        Correlated::Create(e) => (*e, None),
        Correlated::Patch { event, patch } => (*event, Some(patch)),
    };
    let stored = write(sink, event, patch.as_ref(), Rules::Record, config, cancel).await;
    if let Some(stored) = stored {
        correlator.update_state(&stored);
    }
}

fn log_event(level: tracing::Level, e: &Event) {
    let o = &e.involved_object;
    let object = object_path(o);
    log_at!(
        level,
        object = %object,
        field_path = o.field_path.as_deref().unwrap_or_default(),
        kind = o.kind.as_deref().unwrap_or_default(),
        api_version = o.api_version.as_deref().unwrap_or_default(),
        r#type = e.type_.as_deref().unwrap_or_default(),
        reason = e.reason.as_deref().unwrap_or_default(),
        event_message = e.message.as_deref().unwrap_or_default(),
        "Event occurred"
    );
}
