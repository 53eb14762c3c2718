//! Read-your-own-writes (KEP-5647) against the test server with its "delay delivery" fault
//! (watch events arrive 500 ms late, responses do not): a cached read after a write sees the
//! write with the consistency store and the old object without; a delete is NotFound only
//! once the cache has applied it; a controller writing through a `CachedClient` never
//! reconciles a state older than its own last write, gets no 409s, and counts the reconciles
//! it had to skip.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    client::ResourceClient,
    controller::{Action, CachedClient, Controller, Request},
    informers::SharedInformerFactory,
    metrics::PrometheusMetrics,
};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

mod informer_support;

use informer_support::{eventually, server_and_client, start_and_sync};

const DELAY: Duration = Duration::from_millis(500);
const WAIT: Duration = Duration::from_secs(10);

fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

fn value(cm: &ConfigMap) -> &str {
    cm.data
        .as_ref()
        .and_then(|d| d.get("v"))
        .map_or("", String::as_str)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_after_a_write_sees_the_write_only_with_the_consistency_store() {
    let (server, client) = server_and_client().await;
    ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm("x", "0"))
        .await
        .expect("create");
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let cached = CachedClient::<ConfigMap>::new(client.clone(), &factory).expect("client");
    let plain = cached.clone().without_read_your_writes();
    start_and_sync(&factory).await;
    server.set_watch_delivery_delay(Some(DELAY));

    let old = cached.get(Some("default"), "x").await.expect("cached");
    let mut changed = (*old).clone();
    changed.data = Some(BTreeMap::from([("v".to_owned(), "1".to_owned())]));
    let written = cached
        .update(&PostParams::default(), &changed)
        .await
        .expect("update");
    let stale = plain.get(Some("default"), "x").await.expect("cached");
    assert_eq!(
        value(&stale),
        "0",
        "without the store: the cache's stale object"
    );
    let fresh = cached.get(Some("default"), "x").await.expect("cached");
    assert_eq!(value(&fresh), "1", "with the store: our own write");
    assert_eq!(
        fresh.metadata.resource_version,
        written.metadata.resource_version
    );

    cached
        .delete(Some("default"), "x", &Default::default())
        .await
        .expect("delete");
    assert!(
        plain.get(Some("default"), "x").await.is_ok(),
        "the cache still has it"
    );
    let gone = cached.get(Some("default"), "x").await.expect_err("deleted");
    assert!(gone.is_not_found(), "{gone}");
    assert!(
        factory
            .lister_for::<ConfigMap>()
            .namespaced("default")
            .get("x")
            .is_err()
    );
    factory.shutdown().await;
}

/// What the reconciles of one object saw: the last resourceVersion written, and every
/// resourceVersion observed.
#[derive(Default)]
struct Seen {
    written: Mutex<HashMap<String, u64>>,
    stale: AtomicUsize,
    conflicts: AtomicUsize,
    updates: AtomicUsize,
}

fn rv(obj: &ConfigMap) -> u64 {
    obj.metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A controller that bumps a counter in its ConfigMaps ten times each, writing through a
/// `CachedClient` (an update carrying the cached resourceVersion: a stale cache would mean a
/// 409), while watch events arrive 500 ms late: no reconcile sees an object older than its
/// own last write, and no update conflicts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_never_reconciles_a_state_older_than_its_own_write() {
    counter_controller(false).await;
}

/// The same under a fault schedule: besides the late delivery, watches are dropped every
/// 250 ms and the history compacted every second (the informer relists, with 410s, and backs
/// off when failures repeat, so convergence is slower: the bound is 30 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_never_reconciles_a_state_older_than_its_own_write_under_faults() {
    counter_controller(true).await;
}

async fn counter_controller(faults: bool) {
    let (server, client) = server_and_client().await;
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for name in ["a", "b"] {
        cms.create(&PostParams::default(), &cm(name, "0"))
            .await
            .expect("create");
    }
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let cached = CachedClient::<ConfigMap>::new(client.clone(), &factory).expect("client");
    let controller = Controller::<ConfigMap>::builder(&factory)
        .read_your_writes(&cached)
        .max_concurrent_reconciles(2)
        .build();
    server.set_watch_delivery_delay(Some(Duration::from_millis(100)));
    let seen = Arc::new(Seen::default());
    let reconcile = move |obj: Arc<ConfigMap>, seen: Arc<Seen>| {
        let cached = cached.clone();
        async move {
            let name = obj.metadata.name.clone().unwrap_or_default();
            if seen
                .written
                .lock()
                .get(&name)
                .is_some_and(|w| rv(&obj) < *w)
            {
                seen.stale.fetch_add(1, Ordering::SeqCst);
            }
            let n: u32 = value(&obj).parse().unwrap_or(0);
            if n >= 10 {
                return Ok(Action::done());
            }
            let mut next = (*obj).clone();
            next.data = Some(BTreeMap::from([("v".to_owned(), (n + 1).to_string())]));
            match cached.update(&PostParams::default(), &next).await {
                Ok(written) => {
                    seen.updates.fetch_add(1, Ordering::SeqCst);
                    seen.written.lock().insert(name, rv(&written));
                    // Reconcile again at once, before the (late) watch event arrives.
                    Ok(Action::requeue_after(Duration::from_millis(1)))
                }
                Err(e) if e.is_conflict() => {
                    seen.conflicts.fetch_add(1, Ordering::SeqCst);
                    Err(e)
                }
                Err(e) => Err(e),
            }
        }
    };
    let stop = CancellationToken::new();
    let task = tokio::spawn(controller.run(reconcile, seen.clone(), stop.clone()));
    let chaos = async {
        for round in 1.. {
            tokio::time::sleep(Duration::from_millis(250)).await;
            if faults {
                server.drop_watches();
                if round % 4 == 0 {
                    server.compact();
                }
            }
        }
    };
    let within = if faults { WAIT * 3 } else { WAIT };
    let done = eventually("both counters at 10", within, || {
        seen.updates.load(Ordering::SeqCst) >= 20
    });
    tokio::select! {
        () = done => {}
        () = chaos => {}
    }
    stop.cancel();
    task.await.expect("joined").expect("ran");
    assert_eq!(
        seen.stale.load(Ordering::SeqCst),
        0,
        "a reconcile saw a state older than its own write"
    );
    assert_eq!(
        seen.conflicts.load(Ordering::SeqCst),
        0,
        "an update conflicted"
    );
    factory.shutdown().await;
}

/// The wait is bounded: when the cache lags longer than `consistency_wait`, the request is
/// requeued instead of reconciled, and `stale_sync_skips_total` counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_is_skipped_and_counted_when_the_cache_lags_too_long() {
    let (server, client) = server_and_client().await;
    ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm("x", "0"))
        .await
        .expect("create");
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let cached = CachedClient::<ConfigMap>::new(client.clone(), &factory).expect("client");
    let mut registry = prometheus_client::registry::Registry::default();
    let controller = Controller::<ConfigMap>::builder(&factory)
        .named("lagging")
        .read_your_writes(&cached)
        .consistency_wait(Duration::from_millis(50))
        .metrics(Arc::new(PrometheusMetrics::new(&mut registry)))
        .build();
    let queue = controller.queue().clone();
    let reconciled = Arc::new(Mutex::new(Vec::<String>::new()));
    let reconcile = move |obj: Arc<ConfigMap>, log: Arc<Mutex<Vec<String>>>| {
        log.lock().push(value(&obj).to_owned());
        futures::future::ready(Ok::<_, std::io::Error>(Action::done()))
    };
    let stop = CancellationToken::new();
    let task = tokio::spawn(controller.run(reconcile, reconciled.clone(), stop.clone()));
    eventually("the first reconcile", WAIT, || reconciled.lock().len() == 1).await;

    server.set_watch_delivery_delay(Some(DELAY));
    let mut next = cm("x", "1");
    next.metadata.resource_version = factory
        .lister_for::<ConfigMap>()
        .namespaced("default")
        .get("x")
        .expect("cached")
        .metadata
        .resource_version
        .clone();
    cached
        .update(&PostParams::default(), &next)
        .await
        .expect("update");
    queue.add(Request::new(Some("default"), "x"));
    eventually("the write's reconcile", WAIT, || {
        reconciled.lock().len() == 2
    })
    .await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
    assert_eq!(
        *reconciled.lock(),
        ["0", "1"],
        "never reconciled the stale state"
    );
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
    let skips = text
        .lines()
        .find(|l| l.starts_with(r#"stale_sync_skips_total{controller="lagging"}"#))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(skips >= 1, "{text}");
    assert!(text.contains(r#"consistency_wait_seconds_count{controller="lagging"}"#));
    factory.shutdown().await;
}
