//! [`EventBroadcaster`] for `events.k8s.io/v1` (client-go's `tools/events`
//! `EventBroadcaster`): fans the events of its recorders out to watchers on the shared hub
//! of the core/v1 broadcaster (bounded queues, never blocking a recorder), and writes
//! them to a sink through the series cache and the shared spam filter.

use std::sync::{Arc, atomic::Ordering};

use k8s_openapi::api::events::v1::Event;
use tokio::{sync::mpsc, time::Instant};

use super::{
    config::SeriesConfig, keys::spam_key, recorder::EventRecorder, series_writer::SeriesWriter,
};
use crate::record::{
    BroadcasterConfig, EventSink, WatchHandle,
    fanout::FanOut,
    logging::{log_at, object_path},
    spam::SpamFilter,
};

/// Receives `events.k8s.io/v1` events from its [`EventRecorder`]s and sends them to
/// watchers.
///
/// ```no_run
/// use k8s_openapi::api::core::v1::Pod;
/// use kubegen::record::{EventType, events::{ClientEventSink, EventBroadcaster}};
///
/// # async fn demo(client: kubegen::client::Client, pod: Pod) {
/// let broadcaster = EventBroadcaster::new();
/// broadcaster.start_structured_logging(tracing::Level::INFO);
/// broadcaster.start_recording_to_sink(ClientEventSink::new(client));
/// let recorder = broadcaster.new_recorder("my-controller");
/// recorder.event(&pod, None, EventType::Normal, "Synced", "Sync", "pod synced");
/// // the same event again within 6 minutes: one Event with series.count 2
/// recorder.event(&pod, None, EventType::Normal, "Synced", "Sync", "pod synced");
/// broadcaster.shutdown().await; // flushes queued events and unwritten series counts
/// # }
/// ```
#[derive(Clone)]
pub struct EventBroadcaster {
    shared: Arc<FanOut<Event>>,
    series: SeriesConfig,
}

impl std::fmt::Debug for EventBroadcaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBroadcaster")
            .field("config", &self.shared.config)
            .field("series", &self.series)
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

/// The host name, for `reportingInstance` (client-go's `os.Hostname`).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

impl EventBroadcaster {
    /// A broadcaster with client-go's defaults: 1000 queued events per watcher, 12 tries
    /// 10 s apart, the core/v1 spam filter's bursts (25 per controller instance and
    /// object, then one per 5 minutes), series finished after 6 minutes and refreshed
    /// every 30.
    pub fn new() -> Self {
        Self::with_config(BroadcasterConfig::default(), SeriesConfig::default())
    }

    /// A broadcaster with `config` (queue, retries; of its correlator options the spam
    /// filter's burst, qps and cache size apply) and `series` timing.
    pub fn with_config(config: BroadcasterConfig, series: SeriesConfig) -> Self {
        Self {
            shared: Arc::new(FanOut::new(config)),
            series,
        }
    }

    /// A recorder for `reporting_controller` (e.g. `example.com/my-operator`), whose
    /// `reportingInstance` is `<reporting_controller>-<hostname>` (client-go's
    /// `NewRecorder`).
    pub fn new_recorder(&self, reporting_controller: &str) -> EventRecorder {
        let instance = format!("{reporting_controller}-{}", hostname());
        self.new_recorder_with_instance(reporting_controller, &instance)
    }

    /// A recorder for `reporting_controller` with an explicit `reportingInstance` (for
    /// example the pod name).
    pub fn new_recorder_with_instance(
        &self,
        reporting_controller: &str,
        reporting_instance: &str,
    ) -> EventRecorder {
        EventRecorder::new(
            self.shared.clone(),
            reporting_controller.to_owned(),
            reporting_instance.to_owned(),
        )
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

    /// Logs every event with `tracing` at `level` (client-go's `StartLogging`).
    pub fn start_structured_logging(&self, level: tracing::Level) -> WatchHandle {
        self.start_event_watcher(move |e| log_event(level, e))
    }

    /// Writes every event to `sink` (client-go's `StartRecordingToSink`): a new event is
    /// created; the same event again (same isomorphic key: type, action, reason,
    /// reporting controller and instance, regarding, related) becomes a series — the
    /// first repeat patches `series.count` 2 and `series.lastObservedTime` at once, later
    /// repeats count in memory and reach the server when the series is refreshed (every
    /// 30 minutes), finished (6 minutes without a repeat) or at shutdown. Before each
    /// write the spam filter (the core/v1 correlator's token buckets, keyed by reporting
    /// controller and instance + regarding object) may drop it. Must be called within a
    /// tokio runtime.
    pub fn start_recording_to_sink(&self, sink: impl EventSink<Event>) -> WatchHandle {
        let config = self.shared.config.clone();
        let writer = Arc::new(SeriesWriter::new(
            sink,
            config.clone(),
            self.shared.cancel.clone(),
        ));
        let shared = &self.shared;
        shared.spawn_task(writer.clone().refresh_loop(self.series.refresh));
        shared.spawn_task(writer.clone().finish_loop(self.series.finish));
        shared.spawn_watcher(move |mut rx: mpsc::Receiver<Arc<Event>>| async move {
            let c = &config.correlator;
            let mut spam = SpamFilter::new(c.lru_cache_size, c.burst, c.qps);
            while let Some(event) = rx.recv().await {
                let now = Instant::now();
                let to_write = writer.observe((*event).clone(), now, |e| {
                    let refused = spam.filter(spam_key(e), now);
                    if refused {
                        tracing::debug!(reason = ?e.reason, "event dropped by the spam filter");
                    }
                    !refused
                });
                if let Some(e) = to_write {
                    writer.write(e).await;
                }
            }
            writer.flush().await;
        })
    }

    /// Shuts the broadcaster down (client-go's `Shutdown`): recorders stop queueing,
    /// retry pauses end, every event still queued gets one more attempt and so does every
    /// series whose latest count was not written. Returns once every watcher has finished.
    pub async fn shutdown(&self) {
        self.shared.shutdown().await;
    }
}

fn log_event(level: tracing::Level, e: &Event) {
    let r = e.regarding.clone().unwrap_or_default();
    let object = object_path(&r);
    log_at!(
        level,
        object = %object,
        kind = r.kind.as_deref().unwrap_or_default(),
        api_version = r.api_version.as_deref().unwrap_or_default(),
        r#type = e.type_.as_deref().unwrap_or_default(),
        reason = e.reason.as_deref().unwrap_or_default(),
        action = e.action.as_deref().unwrap_or_default(),
        note = e.note.as_deref().unwrap_or_default(),
        "Event occurred"
    );
}
