//! The broadcaster's delivery loop against in-memory sinks under tokio's paused clock:
//! retries, drops, a full queue, shutdown, watchers and the spam filter's refill.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::core::v1::{ConfigMap, Event, EventSource};
use kube_core::ObjectMeta;
use kubegen::{
    client::BoxFuture,
    record::{BroadcasterConfig, EventBroadcaster, EventSink, EventType, SinkError},
};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::Notify;

/// How a [`FakeSink`] answers.
#[derive(Clone, Copy)]
enum Mode {
    Ok,
    Unavailable,
    Rejected,
}

/// Stores events in memory (applying patches' count), or fails as told; counts attempts.
struct FakeSink {
    mode: Mode,
    attempts: AtomicUsize,
    stored: Mutex<Vec<Event>>,
    /// When set, every call waits for a permit first.
    gate: Option<Arc<Notify>>,
}

impl FakeSink {
    fn new(mode: Mode) -> Arc<Self> {
        Arc::new(Self {
            mode,
            attempts: AtomicUsize::new(0),
            stored: Mutex::new(Vec::new()),
            gate: None,
        })
    }

    fn gated(gate: Arc<Notify>) -> Arc<Self> {
        Arc::new(Self {
            mode: Mode::Ok,
            attempts: AtomicUsize::new(0),
            stored: Mutex::new(Vec::new()),
            gate: Some(gate),
        })
    }

    fn attempts(&self) -> usize {
        self.attempts.load(Ordering::SeqCst)
    }

    fn stored(&self) -> Vec<Event> {
        self.stored.lock().clone()
    }

    async fn answer(
        &self,
        write: impl FnOnce(&mut Vec<Event>) -> Event,
    ) -> Result<Event, SinkError> {
        if let Some(gate) = &self.gate {
            gate.notified().await;
        }
        self.attempts.fetch_add(1, Ordering::SeqCst);
        match self.mode {
            Mode::Ok => Ok(write(&mut self.stored.lock())),
            Mode::Unavailable => Err(SinkError::Unavailable("connection refused".into())),
            Mode::Rejected => Err(SinkError::Rejected("forbidden".into())),
        }
    }
}

impl EventSink for FakeSink {
    fn create<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>> {
        Box::pin(self.answer(move |stored| {
            stored.push(event.clone());
            event.clone()
        }))
    }

    fn update<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, SinkError>> {
        self.create(event)
    }

    fn patch<'a>(
        &'a self,
        event: &'a Event,
        patch: &'a Value,
    ) -> BoxFuture<'a, Result<Event, SinkError>> {
        Box::pin(self.answer(move |stored| {
            let e = stored
                .iter_mut()
                .find(|e| e.metadata.name == event.metadata.name)
                .unwrap();
            e.count = patch["count"].as_i64().map(|c| c as i32);
            e.clone()
        }))
    }
}

fn object(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("apps".into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn source() -> EventSource {
    EventSource {
        component: Some("sink-test".into()),
        host: None,
    }
}

#[tokio::test(start_paused = true)]
async fn a_failing_sink_is_tried_12_times_10s_apart_then_the_event_is_dropped() {
    let sink = FakeSink::new(Mode::Unavailable);
    let b = EventBroadcaster::new();
    b.start_recording_to_sink(sink.clone());
    let recorder = b.new_recorder(source());

    let started = tokio::time::Instant::now();
    recorder.event(&object("a"), EventType::Warning, "Failed", "boom");
    assert_eq!(
        tokio::time::Instant::now(),
        started,
        "recording does not wait for the sink"
    );

    // the first pause is a random fraction of 10 s, the next ten are 10 s each
    tokio::time::sleep(Duration::from_secs(99)).await;
    assert!(
        sink.attempts() < 12,
        "{} tries within 99 s",
        sink.attempts()
    );
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert_eq!(sink.attempts(), 12);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(sink.attempts(), 12, "dropped after the last try");
    b.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_rejected_event_is_tried_once() {
    let sink = FakeSink::new(Mode::Rejected);
    let b = EventBroadcaster::new();
    b.start_recording_to_sink(sink.clone());
    b.new_recorder(source())
        .event(&object("a"), EventType::Normal, "R", "m");
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(sink.attempts(), 1);
    b.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn retries_follow_the_configured_interval_and_tries() {
    let sink = FakeSink::new(Mode::Unavailable);
    let b = EventBroadcaster::with_config(
        BroadcasterConfig::new()
            .max_tries(3)
            .retry_interval(Duration::from_millis(100)),
    );
    b.start_recording_to_sink(sink.clone());
    b.new_recorder(source())
        .event(&object("a"), EventType::Normal, "R", "m");
    tokio::time::sleep(Duration::from_millis(201)).await;
    assert_eq!(sink.attempts(), 3);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(sink.attempts(), 3);
    b.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_gives_a_failing_event_one_try_and_returns() {
    let sink = FakeSink::new(Mode::Unavailable);
    let b = EventBroadcaster::new();
    b.start_recording_to_sink(sink.clone());
    let recorder = b.new_recorder(source());
    recorder.event(&object("a"), EventType::Normal, "R", "m");
    let started = tokio::time::Instant::now();
    b.shutdown().await;
    assert_eq!(sink.attempts(), 1);
    assert_eq!(
        tokio::time::Instant::now(),
        started,
        "no retry pause after shutdown"
    );

    // recorders of a shut-down broadcaster drop events quietly
    recorder.event(&object("a"), EventType::Normal, "Late", "m");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(sink.attempts(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_full_queue_drops_new_events_without_blocking() {
    let gate = Arc::new(Notify::new());
    let sink = FakeSink::gated(gate.clone());
    let b = EventBroadcaster::with_config(BroadcasterConfig::new().queue_capacity(2));
    b.start_recording_to_sink(sink.clone());
    let recorder = b.new_recorder(source());
    // the sink task has not run yet: two events fit in the queue, three are dropped
    for i in 0..5 {
        recorder.event(&object("a"), EventType::Normal, &format!("R{i}"), "m");
    }
    assert_eq!(b.dropped_events(), 3);

    for _ in 0..2 {
        tokio::task::yield_now().await;
        gate.notify_one();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    b.shutdown().await;
    let reasons: Vec<String> = sink
        .stored()
        .into_iter()
        .map(|e| e.reason.unwrap())
        .collect();
    assert_eq!(reasons, ["R0", "R1"]);
}

#[tokio::test(start_paused = true)]
async fn the_spam_filter_refills_one_event_per_five_minutes() {
    let sink = FakeSink::new(Mode::Ok);
    let b = EventBroadcaster::new();
    b.start_recording_to_sink(sink.clone());
    let recorder = b.new_recorder(source());
    let a = object("a");
    let record = |from: usize, to: usize| {
        for i in from..to {
            recorder.event(&a, EventType::Normal, &format!("R{i}"), "m");
        }
    };
    record(0, 30);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(sink.stored().len(), 25);

    tokio::time::sleep(Duration::from_secs(300)).await;
    record(30, 33);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(sink.stored().len(), 26, "one token per 300 s");

    tokio::time::sleep(Duration::from_secs(3000)).await;
    record(33, 50);
    b.shutdown().await;
    assert_eq!(sink.stored().len(), 36, "ten more tokens after 3000 s");
}

#[tokio::test]
async fn watchers_see_every_event_and_stop_when_asked() {
    let b = EventBroadcaster::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let handle = b.start_event_watcher(move |e| s.lock().push(e.message.clone().unwrap()));
    b.start_structured_logging(tracing::Level::INFO);
    let recorder = b.new_recorder(source());
    let n = 3;
    recorder.eventf(
        &object("a"),
        EventType::Normal,
        "Formatted",
        format_args!("{n} replicas"),
    );
    recorder.clone().event(
        &object("a"),
        "Warning",
        "Cloned",
        String::from("from a clone"),
    );
    // let the watcher drain, then stop it: later events do not reach it
    while seen.lock().len() < 2 {
        tokio::task::yield_now().await;
    }
    handle.stop();
    recorder.event(&object("a"), EventType::Normal, "After", "not seen");
    b.shutdown().await;
    assert_eq!(*seen.lock(), ["3 replicas", "from a clone"]);
}

#[tokio::test]
async fn events_about_unnamed_objects_are_dropped() {
    let sink = FakeSink::new(Mode::Ok);
    let b = EventBroadcaster::new();
    b.start_recording_to_sink(sink.clone());
    let recorder = b.new_recorder(source());
    recorder.event(&ConfigMap::default(), EventType::Normal, "NoName", "m");
    recorder.event(&object("named"), EventType::Normal, "Named", "m");
    b.shutdown().await;
    let stored = sink.stored();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].reason.as_deref(), Some("Named"));
    assert_eq!(stored[0].metadata.namespace.as_deref(), Some("apps"));
}
