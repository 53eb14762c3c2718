//! Resync under tokio's paused clock, against the test server's in-process front: handlers
//! get `on_update` with identical objects at their own resync periods, under client-go's
//! rules (at least 1 s; before start a shorter period lowers the informer's check period;
//! after start it does not).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    cache::{
        ListWatch, ResourceEventHandler, SharedIndexInformer, UnstartedInformer,
        meta_namespace_key, namespace_indexers, wait_for_cache_sync,
    },
    client::{Client, ResourceClient},
};
use kubegen_testserver::InProcess;
use tokio_util::sync::CancellationToken;

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some("default".into()),
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), name.to_owned())])),
        ..ConfigMap::default()
    }
}

/// Counts resyncs (updates whose old and new objects are identical) per key, and records
/// anything else it is given.
#[derive(Clone, Default)]
struct Resyncs {
    per_key: Arc<Mutex<BTreeMap<String, usize>>>,
    adds: Arc<Mutex<usize>>,
    other: Arc<Mutex<Vec<String>>>,
}

impl ResourceEventHandler<ConfigMap> for Resyncs {
    fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
        *self.adds.lock().unwrap() += 1;
    }
    fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        let key = meta_namespace_key(new.as_ref()).unwrap();
        if old == new {
            *self.per_key.lock().unwrap().entry(key).or_default() += 1;
        } else {
            self.other
                .lock()
                .unwrap()
                .push(format!("changed update {key}"));
        }
    }
}

impl Resyncs {
    /// Resyncs per key; every key must have had the same number.
    fn rounds(&self, keys: usize) -> usize {
        let per_key = self.per_key.lock().unwrap();
        assert!(
            self.other.lock().unwrap().is_empty(),
            "{:?}",
            self.other.lock().unwrap()
        );
        if per_key.is_empty() {
            return 0;
        }
        assert_eq!(per_key.len(), keys, "every cached object is resynced");
        let counts: Vec<usize> = per_key.values().copied().collect();
        assert!(
            counts.iter().all(|c| *c == counts[0]),
            "one resync covers every key: {per_key:?}"
        );
        counts[0]
    }
}

async fn informer_over(
    server: &InProcess,
    names: &[&str],
    default_resync: Duration,
) -> UnstartedInformer<ConfigMap> {
    let client = Client::builder(server.clone()).rate_limit(-1.0, 0).build();
    let api = ResourceClient::<ConfigMap>::namespaced(client, "default");
    for name in names {
        api.create(&PostParams::default(), &cm(name)).await.unwrap();
    }
    SharedIndexInformer::new(ListWatch::new(api), default_resync, namespace_indexers())
}

fn start(
    informer: UnstartedInformer<ConfigMap>,
) -> (
    SharedIndexInformer<ConfigMap>,
    CancellationToken,
    tokio::task::JoinHandle<()>,
) {
    let stop = CancellationToken::new();
    let (informer, run) = informer.spawn(stop.clone());
    (informer, stop, run)
}

/// Lets the handler threads (real threads, outside the paused clock) catch up.
fn let_handlers_drain() {
    std::thread::sleep(Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn handlers_resync_identical_objects_at_their_own_periods() {
    let server = InProcess::new();
    let informer = informer_over(&server, &["a", "b"], Duration::from_secs(10)).await;
    // Before start: 3 s lowers the informer's check period (10 s) to 3 s.
    let fast = Resyncs::default();
    informer
        .add_event_handler_with_resync(fast.clone(), Duration::from_secs(3))
        .unwrap();
    // The informer's default period, 10 s.
    let default = Resyncs::default();
    informer.add_event_handler(default.clone()).unwrap();
    // Zero: this handler never resyncs.
    let never = Resyncs::default();
    informer
        .add_event_handler_with_resync(never.clone(), Duration::ZERO)
        .unwrap();
    let (informer, stop, run) = start(informer);
    assert!(wait_for_cache_sync(&stop, &[&informer]).await);
    // After start: 1 s does not lower the check period; it is raised to 3 s.
    let late = Resyncs::default();
    informer
        .add_event_handler_with_resync(late.clone(), Duration::from_secs(1))
        .unwrap();

    tokio::time::sleep(Duration::from_millis(30_500)).await;
    let_handlers_drain();
    stop.cancel();
    run.await.unwrap();

    // Checks every 3 s: at 3, 6, ..., 30.
    assert_eq!(fast.rounds(2), 10, "fast resyncs at every 3 s check");
    // Due at 10 s and at 22 s: handled at the checks at 12 and 24.
    assert_eq!(
        default.rounds(2),
        2,
        "the 10 s handler resyncs every fourth check"
    );
    assert_eq!(never.rounds(2), 0, "a zero period never resyncs");
    let late_rounds = late.rounds(2);
    assert!(
        (4..=10).contains(&late_rounds),
        "at most once per 3 s check, never every second: {late_rounds}"
    );
    for h in [&fast, &default, &never, &late] {
        assert_eq!(
            *h.adds.lock().unwrap(),
            2,
            "one add per object, then only resyncs"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_resync_period_under_one_second_is_raised_to_one_second() {
    let server = InProcess::new();
    let informer = informer_over(&server, &["a"], Duration::from_secs(30)).await;
    let tiny = Resyncs::default();
    informer
        .add_event_handler_with_resync(tiny.clone(), Duration::from_millis(100))
        .unwrap();
    let (informer, stop, run) = start(informer);
    assert!(wait_for_cache_sync(&stop, &[&informer]).await);
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    let_handlers_drain();
    stop.cancel();
    run.await.unwrap();
    let rounds = tiny.rounds(1);
    assert!(
        (9..=10).contains(&rounds),
        "once a second (the minimum), not every 100 ms: {rounds}"
    );
}
