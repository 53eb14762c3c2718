//! Informers, listers and the factory against the in-memory API server over HTTP.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{
    GroupVersionResource, ObjectMeta,
    params::{DeleteParams, ListParams, PostParams},
};
use kubegen::{
    cache::{
        DeletedObject, ReflectorConfig, ReflectorError, ResourceEventHandler, SharedIndexInformer,
        deletion_handling_meta_namespace_key, meta_namespace_key,
    },
    client::{Client, ResourceClient},
    informers::{FactoryError, SharedInformerFactory},
};
use kubegen_testserver::{FailRule, Verb};
use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio_util::sync::CancellationToken;

mod informer_support;

use informer_support::{eventually, server_and_client, start_and_sync};

/// How long a condition may take to hold.
const WAIT: Duration = Duration::from_secs(10);

fn cm(ns: &str, name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

/// An object's key and its `v` value: what the views, the cache and the server are compared on.
fn entry(c: &ConfigMap) -> (String, String) {
    let value = c
        .data
        .as_ref()
        .and_then(|d| d.get("v"))
        .cloned()
        .unwrap_or_default();
    (meta_namespace_key(c).unwrap(), value)
}

/// Applies every notification to a map: what the handler believes the world is.
#[derive(Default, Clone)]
struct View {
    objects: Arc<Mutex<BTreeMap<String, String>>>,
    violations: Arc<Mutex<Vec<String>>>,
}

impl ResourceEventHandler<ConfigMap> for View {
    fn on_add(&self, obj: &Arc<ConfigMap>, _: bool) {
        let (key, value) = entry(obj);
        self.objects.lock().unwrap().insert(key, value);
    }
    fn on_update(&self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        let (key, value) = entry(new);
        let mut objects = self.objects.lock().unwrap();
        if !objects.contains_key(&key) {
            self.violations
                .lock()
                .unwrap()
                .push(format!("update for unseen {key}"));
        }
        objects.insert(key, value);
    }
    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        let key = deletion_handling_meta_namespace_key(obj).unwrap();
        if self.objects.lock().unwrap().remove(&key).is_none() {
            self.violations
                .lock()
                .unwrap()
                .push(format!("delete for unseen {key}"));
        }
    }
}

async fn server_state(client: &Client) -> BTreeMap<String, String> {
    let all: ResourceClient<ConfigMap> = ResourceClient::all(client.clone());
    // Injected faults may still be pending: retry like any client would.
    let mut list = None;
    for _ in 0..20 {
        match all.list_all(&ListParams::default()).await {
            Ok(l) => {
                list = Some(l);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    list.expect("server never answered the final list")
        .items
        .into_iter()
        .filter(|c| c.metadata.namespace.as_deref() != Some("kube-system"))
        .map(|c| entry(&c))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn factory_informer_syncs_lists_and_follows_a_namespace() {
    let (_server, client) = server_and_client().await;
    let a: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "default");
    let b: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "kube-public");
    a.create(&PostParams::default(), &cm("default", "one", "1"))
        .await
        .unwrap();
    b.create(&PostParams::default(), &cm("kube-public", "other", "x"))
        .await
        .unwrap();

    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("default")
        .build();
    let informer = factory.informer_for::<ConfigMap>();
    let view = View::default();
    informer.add_event_handler(view.clone()).unwrap();
    assert_eq!(
        factory
            .for_resource(&GroupVersionResource::gvr("apps", "v1", "deployments"))
            .unwrap_err(),
        FactoryError::UnknownResource("apps/v1, Resource=deployments".into())
    );
    factory.start();
    factory.start(); // idempotent
    let stop = CancellationToken::new();
    let synced = factory.wait_for_cache_sync(&stop).await;
    assert_eq!(synced.values().copied().collect::<Vec<_>>(), vec![true]);

    let lister = factory.lister_for::<ConfigMap>();
    let names: Vec<String> = lister
        .namespaced("default")
        .list(&Default::default())
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    assert!(names.contains(&"one".to_owned()));
    assert!(
        lister.namespaced("kube-public").get("other").is_err(),
        "other namespaces are not watched"
    );
    assert!(
        lister
            .namespaced("default")
            .get("missing")
            .unwrap_err()
            .is_not_found()
    );

    a.create(&PostParams::default(), &cm("default", "two", "2"))
        .await
        .unwrap();
    eventually("live add", WAIT, || {
        view.objects.lock().unwrap().contains_key("default/two")
    })
    .await;

    let generic = factory
        .for_resource(&GroupVersionResource::gvr("", "v1", "configmaps"))
        .unwrap();
    assert!(generic.has_synced());
    assert!(generic.downcast::<ConfigMap>().is_some());
    let dynamic = generic.lister().get("default", "two").unwrap();
    assert_eq!(
        dynamic.types.as_ref().map(|t| t.kind.as_str()),
        Some("ConfigMap")
    );

    factory.shutdown().await;
    assert!(informer.is_stopped());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_is_shared_per_type_and_first_settings_win() {
    let (_server, client) = server_and_client().await;
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let first: SharedIndexInformer<ConfigMap> = factory.informer_for();
    let second: SharedIndexInformer<ConfigMap> = factory.informer_for();
    let view = View::default();
    first.add_event_handler(view.clone()).unwrap();
    // Both handles are the same informer: a handler on one shows on the other.
    assert!(second.indexer().is_empty());
    start_and_sync(&factory).await;
    assert_eq!(
        first.last_sync_resource_version(),
        second.last_sync_resource_version()
    );
    factory.shutdown().await;
    assert!(second.is_stopped());
}

/// Short watches (2–4 s) and a short idle margin, so a stalled watch is given up within
/// 3–5 s (the default is the server timeout of 5–10 minutes plus 5 s); pages of 3, so
/// relists go through continue tokens (which compaction expires).
fn short_watches() -> ReflectorConfig {
    ReflectorConfig {
        min_watch_timeout: Duration::from_secs(2),
        watch_idle_margin: Duration::from_secs(1),
        page_size: 3,
        ..ReflectorConfig::default()
    }
}

/// Issue 18 item 4, kube-rs #1945: the informer's watch connection goes half-dead (the
/// server's "stall" fault: open, silent, not even closed at its timeout). The reflector
/// gives it up once it has been silent for its timeout plus the margin, re-watches from
/// its last resourceVersion, and sees the writes made meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_recovers_from_a_stalled_watch_after_the_idle_timeout() {
    let (server, client) = server_and_client().await;
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("default")
        .build();
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let informer = factory.informer_for_with::<ConfigMap>(|b| {
        b.reflector(short_watches()).watch_error_handler(Arc::new({
            let errors = errors.clone();
            move |e: &ReflectorError| errors.lock().unwrap().push(e.to_string())
        }))
    });
    start_and_sync(&factory).await;
    let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &cm("default", "before", "1"))
        .await
        .unwrap();
    eventually("the write before the stall", WAIT, || {
        informer.indexer().get_by_key("default/before").is_some()
    })
    .await;

    server.stall_watches(None);
    let stalled = std::time::Instant::now();
    api.create(&PostParams::default(), &cm("default", "after", "2"))
        .await
        .unwrap();
    eventually("the write after the stall", WAIT, || {
        informer.indexer().get_by_key("default/after").is_some()
    })
    .await;
    assert!(
        stalled.elapsed() >= Duration::from_secs(2),
        "seen after {:?}: not through the stalled watch",
        stalled.elapsed()
    );
    assert!(
        errors
            .lock()
            .unwrap()
            .iter()
            .any(|e| e.contains("watch silent")),
        "{:?}",
        errors.lock().unwrap()
    );
    server.resume_watches();
    factory.shutdown().await;
}

/// The test server lists with `limit` and a non-zero resourceVersion and no match as Exact
/// (API Concepts, "Resource versions": the legacy rule). An informer whose watch keeps
/// failing relists at its last synced version every backoff; those relists must return
/// current state (the reflector asks NotOlderThan), not the snapshot at that version again
/// and again — which froze the cache of `informer_converges_after_a_fault_schedule`
/// (seed 1) while injected watch failures lasted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_relists_current_state_while_its_watch_keeps_failing() {
    let (server, client) = server_and_client().await;
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("default")
        .build();
    let informer = factory.informer_for::<ConfigMap>();
    start_and_sync(&factory).await;
    let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &cm("default", "seen", "1"))
        .await
        .unwrap();
    eventually("the first write", WAIT, || {
        informer.indexer().get_by_key("default/seen").is_some()
    })
    .await;
    // Every watch from now on fails: only relists can bring news.
    server.fail(
        FailRule::on(Verb::Watch)
            .resource("configmaps")
            .code(500)
            .times(1000),
    );
    server.drop_watches();
    api.create(&PostParams::default(), &cm("default", "relisted", "2"))
        .await
        .unwrap();
    eventually("a write seen through a relist", WAIT, || {
        informer.indexer().get_by_key("default/relisted").is_some()
    })
    .await;
    server.shared().faults.clear();
    factory.shutdown().await;
}

/// Random creates, updates and deletes interleaved with dropped watches, history
/// compaction, error bursts, restarts, stalled watches (given up after the idle timeout)
/// and late watch delivery: after quiescence the cache and every handler's view equal the
/// server, and no handler saw an update or delete for a key it never had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_converges_after_a_fault_schedule() {
    let schedules: u64 = std::env::var("KUBEGEN_FAULT_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    // KUBEGEN_FAULT_SEED replays that one schedule, with debug logs.
    let only: Option<u64> = std::env::var("KUBEGEN_FAULT_SEED")
        .ok()
        .and_then(|v| v.parse().ok());
    if only.is_some() {
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_test_writer()
            .try_init();
    }
    for seed in only.map_or(0..schedules, |s| s..s + 1) {
        run_schedule(seed).await;
    }
}

async fn run_schedule(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (server, client) = server_and_client().await;
    let namespaces = ["default", "kube-public", "kube-node-lease"];
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let informer = factory.informer_for_with::<ConfigMap>(|b| b.reflector(short_watches()));
    let views: Vec<View> = (0..2).map(|_| View::default()).collect();
    for v in &views {
        informer.add_event_handler(v.clone()).unwrap();
    }
    start_and_sync(&factory).await;
    let late = View::default();
    let mut late_added = false;

    for step in 0..60 {
        let ns = namespaces[rng.random_range(0..namespaces.len())];
        let name = format!("cm{}", rng.random_range(0..8));
        let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), ns);
        match rng.random_range(0..100) {
            0..40 => {
                let obj = cm(ns, &name, &format!("{seed}-{step}"));
                if api.create(&PostParams::default(), &obj).await.is_err()
                    && let Ok(mut existing) = api.get(&name).await
                {
                    existing.data = obj.data.clone();
                    let _ = api.update(&PostParams::default(), &existing).await;
                }
            }
            40..60 => {
                let _ = api.delete(&name, &DeleteParams::default()).await;
            }
            60..68 => server.drop_watches(),
            68..74 => server.compact(),
            74..80 => server.fail(FailRule::on(Verb::Watch).code(500).times(2)),
            80..84 => server.fail(FailRule::on(Verb::List).code(429).retry_after(1)),
            84..88 => server.restart(),
            88..92 if !late_added => {
                informer.add_event_handler(late.clone()).unwrap();
                late_added = true;
            }
            // The open watches hang for up to 6 s (beyond the 3–5 s idle timeout or not).
            92..95 => {
                server.stall_watches(Some(Duration::from_millis(rng.random_range(200..6000))));
            }
            95..98 => server.set_watch_delivery_delay(
                Some(Duration::from_millis(rng.random_range(0..300)))
                    .filter(|_| rng.random_bool(0.7)),
            ),
            _ => tokio::time::sleep(Duration::from_millis(rng.random_range(0..20))).await,
        }
    }
    let expected = server_state(&client).await;
    let cache_state = || -> BTreeMap<String, String> {
        informer
            .indexer()
            .list()
            .iter()
            .filter(|c| c.metadata.namespace.as_deref() != Some("kube-system"))
            .map(|c| entry(c))
            .collect()
    };
    let mut all_views = views.clone();
    if late_added {
        all_views.push(late.clone());
    }
    let filtered = |v: &View| -> BTreeMap<String, String> {
        v.objects
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| !k.starts_with("kube-system/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    for _ in 0..800 {
        if cache_state() == expected && all_views.iter().all(|v| filtered(v) == expected) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        cache_state(),
        expected,
        "seed {seed}: cache differs from the server"
    );
    for (i, v) in all_views.iter().enumerate() {
        assert_eq!(
            filtered(v),
            expected,
            "seed {seed}: handler {i}'s view differs"
        );
        assert!(
            v.violations.lock().unwrap().is_empty(),
            "seed {seed}: {:?}",
            v.violations.lock().unwrap()
        );
    }
    factory.shutdown().await;
}
