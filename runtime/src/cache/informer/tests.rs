//! The shared informer's tests: lifecycle, handlers, relists and resyncs against a fake API.

use std::sync::mpsc as std_mpsc;

use k8s_openapi::api::core::v1::ConfigMap;
use tokio::sync::mpsc;

use std::{sync::Arc, time::Duration};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::cache::{
    BackoffConfig, DeletedObject, ReflectorError, meta_namespace_key, namespace_indexers,
    testing::{
        cm, cm_with,
        fake_api::{FakeApi, gone, refused},
    },
};
use crate::cache::{store::index::StoreKey, *};

/// Forwards every notification as a line: `add ns/a 2 initial`, `update ns/a 2->3`,
/// `delete ns/a` / `delete ns/a tombstone`.
struct Recorder(mpsc::UnboundedSender<String>);

fn describe(obj: &ConfigMap) -> String {
    format!(
        "{} {}",
        meta_namespace_key(obj).unwrap(),
        obj.metadata.resource_version.as_deref().unwrap_or("-")
    )
}

impl ResourceEventHandler<ConfigMap> for Recorder {
    fn on_add(&self, obj: &Arc<ConfigMap>, initial: bool) {
        let _ = self.0.send(format!(
            "add {}{}",
            describe(obj),
            if initial { " initial" } else { "" }
        ));
    }
    fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        let (o, n) = (
            old.metadata.resource_version.clone(),
            new.metadata.resource_version.clone(),
        );
        let key = meta_namespace_key(new.as_ref()).unwrap();
        let _ = self.0.send(format!(
            "update {key} {}->{}",
            o.unwrap_or_default(),
            n.unwrap_or_default()
        ));
    }
    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        let key = crate::cache::deletion_handling_meta_namespace_key(obj).unwrap();
        let _ = self.0.send(format!(
            "delete {key}{}",
            if obj.is_tombstone() { " tombstone" } else { "" }
        ));
    }
}

fn recorder() -> (Recorder, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Recorder(tx), rx)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("no notification")
        .unwrap()
}

fn fast_backoff() -> ReflectorConfig {
    ReflectorConfig {
        backoff: BackoffConfig {
            initial: Duration::from_millis(5),
            max: Duration::from_millis(20),
            ..BackoffConfig::default()
        },
        initial_list: crate::cache::InitialListStrategy::ListWatch,
        ..ReflectorConfig::default()
    }
}

struct Running {
    informer: SharedIndexInformer<ConfigMap>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    async fn shutdown(self) {
        self.stop.cancel();
        self.task.await.unwrap();
        assert!(self.informer.is_stopped());
    }
}

/// Starts `informer`; its shared handle (shadowing the unstarted value at the call sites)
/// and the run to stop.
fn start(informer: UnstartedInformer<ConfigMap>) -> (SharedIndexInformer<ConfigMap>, Running) {
    let stop = CancellationToken::new();
    let (informer, task) = informer.spawn(stop.clone());
    let running = Running {
        informer: informer.clone(),
        stop,
        task,
    };
    (informer, running)
}

fn builder(api: &FakeApi<ConfigMap>) -> SharedIndexInformerBuilder<ConfigMap> {
    SharedIndexInformer::builder(api.clone())
        .indexers(namespace_indexers())
        .reflector(fast_backoff())
}

fn informer(api: &FakeApi<ConfigMap>) -> UnstartedInformer<ConfigMap> {
    builder(api).build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initial_list_arrives_as_initial_adds_before_the_handler_reports_synced() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    api.upsert(cm("ns", "b"));
    let inf = informer(&api);
    let (h, mut rx) = recorder();
    let reg = inf.add_event_handler(h).unwrap();
    assert!(!reg.has_synced());
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf, &reg]).await);
    // Synced handler: both initial adds are already delivered.
    let mut got = vec![rx.try_recv().unwrap(), rx.try_recv().unwrap()];
    got.sort();
    assert_eq!(got, vec!["add ns/a 2 initial", "add ns/b 3 initial"]);
    assert_eq!(inf.indexer().len(), 2);
    assert_eq!(inf.last_sync_resource_version(), "3");
    assert_eq!(
        inf.lister()
            .namespaced("ns")
            .get("a")
            .unwrap()
            .metadata
            .name
            .as_deref(),
        Some("a")
    );
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_events_reach_handlers_in_server_order_across_keys() {
    // client-go 1.36 InOrderInformers (GA): the RealFIFO delivers events in the order
    // the watch delivered them, across keys.
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    let inf = informer(&api);
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (_, run) = start(inf);
    assert_eq!(next(&mut rx).await, "add ns/a 2 initial");
    api.upsert(cm_with("ns", "a", "", &[("v", "2")]));
    api.upsert(cm("ns", "b"));
    api.upsert(cm_with("ns", "a", "", &[("v", "3")]));
    api.delete("ns/b");
    let got = [
        next(&mut rx).await,
        next(&mut rx).await,
        next(&mut rx).await,
        next(&mut rx).await,
    ];
    assert_eq!(
        got,
        [
            "update ns/a 2->3",
            "add ns/b 4",
            "update ns/a 3->5",
            "delete ns/b"
        ]
    );
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_resource_version_is_what_the_cache_has_applied() {
    // client-go 1.35 (GA): LastStoreSyncResourceVersion reports the version the cache
    // applied; bookmarks move it too. The reflector's own stays available.
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    let inf = informer(&api);
    assert_eq!(inf.last_store_sync_resource_version(), "");
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    assert_eq!(inf.last_store_sync_resource_version(), "2");
    api.upsert(cm("ns", "b"));
    tokio::time::timeout(Duration::from_secs(10), async {
        while inf.indexer().get_by_key("ns/b").is_none() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("b cached");
    assert_eq!(inf.last_store_sync_resource_version(), "3");
    assert_eq!(inf.last_sync_resource_version(), "3");
    // Applied in order: whoever reads the store version finds at least that version
    // in the cache.
    let queue = inf.inner.fifo.get().expect("running").clone();
    queue.bookmark("9");
    tokio::time::timeout(Duration::from_secs(10), async {
        while inf.last_store_sync_resource_version() != "9" {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("a bookmark moves the store version");
    assert_eq!(inf.last_sync_resource_version(), "3", "the reflector's own");
    run.shutdown().await;
}

#[test]
fn a_reader_never_sees_a_mix_of_pre_and_post_relist_versions() {
    // client-go 1.36 AtomicFIFO: a relist is applied to the store as one unit.
    const N: usize = 100_000;
    let api = FakeApi::<ConfigMap>::new();
    let inf = informer(&api);
    let relist = |generation: &str| Relist {
        tombstones: Vec::new(),
        objects: (0..N)
            .map(|i| {
                let obj = cm_with("ns", &format!("cm-{i}"), generation, &[]);
                (
                    StoreKey::from(meta_namespace_key(&obj).unwrap()),
                    Arc::new(obj),
                )
            })
            .collect(),
        resource_version: generation.to_owned(),
    };
    inf.handle_item(Queued::Relist(relist("1")), true).unwrap();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = std::thread::spawn({
        let (lister, done) = (inf.lister(), done.clone());
        move || {
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) || reads < 2 {
                let all = lister.list(&crate::cache::Selector::default());
                assert_eq!(all.len(), N, "a relist never shows a partial cache");
                let versions: std::collections::BTreeSet<_> = all
                    .iter()
                    .map(|o| o.metadata.resource_version.clone())
                    .collect();
                assert_eq!(versions.len(), 1, "mixed versions: {versions:?}");
                reads += 1;
            }
            reads
        }
    });
    // Six swaps between the generations with the reader reading throughout.
    for round in 0..6 {
        let generation = if round % 2 == 0 { "2" } else { "1" };
        inf.handle_item(Queued::Relist(relist(generation)), false)
            .unwrap();
        assert_eq!(inf.last_store_sync_resource_version(), generation);
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(reader.join().expect("reader saw no mix") >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_410_relists_at_once_and_only_repeated_ones_back_off() {
    // issue 18 item 6: a 410 after progress is not a failure; client-go's backoff is for
    // repeated failures. The backoff here is long, so a waited relist would time out.
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    let inf = builder(&api)
        .reflector(ReflectorConfig {
            backoff: BackoffConfig {
                initial: Duration::from_secs(60),
                max: Duration::from_secs(60),
                ..BackoffConfig::default()
            },
            initial_list: crate::cache::InitialListStrategy::ListWatch,
            ..ReflectorConfig::default()
        })
        .build();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    let until = |want: usize| {
        let api = api.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(5), async {
                while api.lists() < want || api.open_watches() == 0 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
            .await
            .is_ok()
        }
    };
    assert!(until(1).await);
    api.send_gone();
    assert!(
        until(2).await,
        "the first 410 relists without the 60 s backoff"
    );
    // Progress (an event) makes the next 410 a first one again.
    api.upsert(cm("ns", "b"));
    tokio::time::timeout(Duration::from_secs(5), async {
        while inf.indexer().get_by_key("ns/b").is_none() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("b cached");
    api.send_gone();
    assert!(until(3).await, "a 410 after progress relists at once too");
    // A 410 straight after that relist, with no progress: now the backoff applies.
    api.send_gone();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(api.lists(), 3, "a repeated 410 waits for the backoff");
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keyed_delta_fifo_is_still_available() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    let inf = builder(&api).queue(QueueKind::DeltaFifo).build();
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (_, run) = start(inf);
    assert_eq!(next(&mut rx).await, "add ns/a 2 initial");
    api.upsert(cm("ns", "b"));
    assert_eq!(next(&mut rx).await, "add ns/b 3");
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_events_reach_cache_and_handlers_in_order() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    let inf = informer(&api);
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (inf, run) = start(inf);
    assert_eq!(next(&mut rx).await, "add ns/a 2 initial");
    api.upsert(cm_with("ns", "a", "", &[("v", "2")]));
    api.upsert(cm("ns", "b"));
    api.delete("ns/a");
    // Order is guaranteed per key, not across keys: a's deltas may be popped together.
    let got = [
        next(&mut rx).await,
        next(&mut rx).await,
        next(&mut rx).await,
    ];
    let at = |e: &str| {
        got.iter()
            .position(|g| g == e)
            .unwrap_or_else(|| panic!("{e} missing: {got:?}"))
    };
    assert!(at("update ns/a 2->3") < at("delete ns/a"));
    at("add ns/b 4");
    assert!(inf.indexer().get_by_key("ns/a").is_none());
    assert_eq!(inf.last_sync_resource_version(), "5");
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_added_after_start_is_replayed_the_cache() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    api.upsert(cm("ns", "b"));
    let inf = informer(&api);
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    let (h, mut rx) = recorder();
    let reg = inf.add_event_handler(h).unwrap();
    assert!(wait_for_cache_sync(&run.stop, &[&reg]).await);
    let mut got = vec![rx.try_recv().unwrap(), rx.try_recv().unwrap()];
    got.sort();
    assert_eq!(got, vec!["add ns/a 2 initial", "add ns/b 3 initial"]);
    api.upsert(cm("ns", "c"));
    assert_eq!(next(&mut rx).await, "add ns/c 4", "then live events, once");
    run.shutdown().await;
}

/// A `Dispatch::Task` handler runs on the informer's runtime — here a current-thread
/// one, so on the test's own thread — not on a thread of its own; `pending()` counts
/// what it has yet to handle; a late one is replayed the cache in key order.
#[tokio::test(flavor = "current_thread")]
async fn a_task_handler_runs_on_the_runtime_and_counts_what_it_has_yet_to_handle() {
    struct OnThread(mpsc::UnboundedSender<(String, std::thread::ThreadId)>);
    impl ResourceEventHandler<ConfigMap> for OnThread {
        fn on_add(&self, obj: &Arc<ConfigMap>, _: bool) {
            let _ = self.0.send((describe(obj), std::thread::current().id()));
        }
    }
    let api = FakeApi::new();
    for name in ["c", "a", "d", "b"] {
        api.upsert(cm("ns", name));
    }
    let inf = informer(&api);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let on_task = HandlerOptions::new().dispatch(crate::cache::Dispatch::Task);
    let reg = inf
        .add_event_handler_with_options(OnThread(tx.clone()), on_task)
        .unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf, &reg]).await);
    assert_eq!(reg.pending(), 0, "synced: every initial add handled");
    let here = std::thread::current().id();
    for _ in 0..4 {
        let (_, thread) = rx.try_recv().unwrap();
        assert_eq!(thread, here, "handled on the runtime's thread");
    }
    // Added late: the cache is replayed in key order, and counted until handled.
    let late = inf
        .add_event_handler_with_options(OnThread(tx), on_task)
        .unwrap();
    assert_eq!(late.pending(), 4, "four replayed adds wait for the runtime");
    assert!(wait_for_cache_sync(&run.stop, &[&late]).await);
    assert_eq!(late.pending(), 0);
    let replayed: Vec<String> = (0..4).map(|_| rx.try_recv().unwrap().0).collect();
    assert_eq!(replayed, ["ns/a 3", "ns/b 5", "ns/c 2", "ns/d 4"]);
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_handler_gets_nothing_more() {
    let api = FakeApi::new();
    let inf = informer(&api);
    let (h, mut rx) = recorder();
    let (keep, mut kept) = recorder();
    let reg = inf.add_event_handler(h).unwrap();
    inf.add_event_handler(keep).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    inf.remove_event_handler(&reg).await.unwrap();
    assert!(!inf.is_registered(&reg));
    assert_eq!(
        inf.remove_event_handler(&reg).await,
        Err(InformerError::UnknownHandler)
    );
    api.upsert(cm("ns", "a"));
    assert_eq!(next(&mut kept).await, "add ns/a 2");
    run.shutdown().await;
    assert!(rx.try_recv().is_err());
}

/// client-go `ShutDownEventHandler`: once removal returns, the handler is not running
/// and never runs again; removal waits for the callback in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_handler_waits_for_its_callback_in_flight() {
    struct Slow {
        entered: std_mpsc::SyncSender<()>,
        release: Mutex<std_mpsc::Receiver<()>>,
        calls: Arc<std::sync::atomic::AtomicUsize>,
    }
    impl ResourceEventHandler<ConfigMap> for Slow {
        fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
            let _ = self.entered.send(());
            let _ = self.release.lock().recv();
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let api = FakeApi::new();
    let inf = informer(&api);
    let (entered_tx, entered_rx) = std_mpsc::sync_channel(8);
    let (release_tx, release_rx) = std_mpsc::channel();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reg = inf
        .add_event_handler(Slow {
            entered: entered_tx,
            release: Mutex::new(release_rx),
            calls: calls.clone(),
        })
        .unwrap();
    let (inf, run) = start(inf);
    api.upsert(cm("ns", "a"));
    api.upsert(cm("ns", "b"));
    tokio::task::spawn_blocking(move || entered_rx.recv())
        .await
        .unwrap()
        .unwrap();
    let removing = tokio::spawn({
        let inf = inf.clone();
        async move { inf.remove_event_handler(&reg).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!removing.is_finished(), "removal waits for the callback");
    release_tx.send(()).unwrap();
    // Were the buffered add for ns/b delivered, it would wait for this; the handler's
    // thread may also have exited already, dropping the receiver.
    let _ = release_tx.send(());
    removing.await.unwrap().unwrap();
    let after = calls.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(after, 1, "the buffered add for ns/b was dropped");
    api.upsert(cm("ns", "c"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), after);
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_handler_does_not_hold_up_other_handlers() {
    struct Blocked(Mutex<std_mpsc::Receiver<()>>);
    impl ResourceEventHandler<ConfigMap> for Blocked {
        fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
            let _ = self.0.lock().recv();
        }
    }
    let api = FakeApi::new();
    let inf = informer(&api);
    let (release, wait) = std_mpsc::channel();
    inf.add_event_handler(Blocked(Mutex::new(wait))).unwrap();
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    for name in ["a", "b", "c"] {
        api.upsert(cm("ns", name));
    }
    for expected in ["add ns/a 2", "add ns/b 3", "add ns/c 4"] {
        assert_eq!(next(&mut rx).await, expected);
    }
    assert_eq!(inf.indexer().len(), 3, "the cache moved on too");
    for _ in 0..3 {
        release.send(()).unwrap();
    }
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_missed_while_disconnected_arrives_as_a_tombstone_after_relist() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    api.upsert(cm("ns", "b"));
    let inf = informer(&api);
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    next(&mut rx).await;
    next(&mut rx).await;
    api.delete_silently("ns/b");
    api.send_gone();
    // The relist delivers the tombstone for what vanished, then re-delivers what is
    // still there (same version: a resync-style update) — client-go's RealFIFO order
    // (`reconcileReplacement`: deletions before the replaced objects).
    assert_eq!(next(&mut rx).await, "delete ns/b tombstone");
    assert_eq!(next(&mut rx).await, "update ns/a 2->2");
    assert_eq!(api.lists(), 2, "the 410 forced a relist");
    assert_eq!(inf.indexer().list_keys(), vec!["ns/a"]);
    run.shutdown().await;
}

/// A relist after a 410 (issue 42, "the relist peak"): the cache keeps its own `Arc`
/// for every listed object whose uid and resourceVersion are unchanged, takes the
/// listed one for a changed object or a re-created one (same name, new uid), and the
/// handlers hear of each as before.
async fn a_relist_keeps_the_cached_object_of_what_did_not_change(
    initial_list: crate::cache::InitialListStrategy,
) {
    let api = FakeApi::new();
    let with_uid = |name: &str, uid: &str| {
        let mut o = cm("ns", name);
        o.metadata.uid = Some(uid.to_owned());
        o
    };
    for name in ["a", "b", "c"] {
        api.upsert(with_uid(name, &format!("uid-{name}")));
    }
    let inf = builder(&api)
        .reflector(ReflectorConfig {
            initial_list,
            page_size: 2,
            ..fast_backoff()
        })
        .build();
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    for _ in 0..3 {
        next(&mut rx).await;
    }
    let before = |key: &str| inf.indexer().get_by_key(key).unwrap();
    let (a, b, c) = (before("ns/a"), before("ns/b"), before("ns/c"));
    // Missed while disconnected: b changed, c deleted and re-created.
    let mut b2 = with_uid("b", "uid-b");
    b2.data = Some([("k".to_owned(), "v".to_owned())].into());
    api.upsert_silently(b2);
    api.delete_silently("ns/c");
    api.upsert_silently(with_uid("c", "uid-c2"));
    api.send_gone();
    let mut got = vec![
        next(&mut rx).await,
        next(&mut rx).await,
        next(&mut rx).await,
    ];
    got.sort();
    assert_eq!(
        got,
        ["update ns/a 2->2", "update ns/b 3->5", "update ns/c 4->7"]
    );
    let after = |key: &str| inf.indexer().get_by_key(key).unwrap();
    assert!(Arc::ptr_eq(&after("ns/a"), &a), "unchanged: the cached Arc");
    assert!(!Arc::ptr_eq(&after("ns/b"), &b));
    assert_eq!(after("ns/b").data.as_ref().unwrap()["k"], "v");
    assert!(!Arc::ptr_eq(&after("ns/c"), &c));
    assert_eq!(after("ns/c").metadata.uid.as_deref(), Some("uid-c2"));
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paged_relist_keeps_the_cached_object_of_what_did_not_change() {
    a_relist_keeps_the_cached_object_of_what_did_not_change(
        crate::cache::InitialListStrategy::ListWatch,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_relist_keeps_the_cached_object_of_what_did_not_change() {
    a_relist_keeps_the_cached_object_of_what_did_not_change(
        crate::cache::InitialListStrategy::StreamingList,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cleanly_closed_watch_resumes_from_the_last_version_without_relisting() {
    let api = FakeApi::new();
    let inf = informer(&api);
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    api.upsert(cm("ns", "a"));
    assert_eq!(next(&mut rx).await, "add ns/a 2");
    api.drop_watches();
    while api.watches() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(api.lists(), 1);
    let (params, rv) = api.last_watch().unwrap();
    assert_eq!(rv, "2");
    assert!(params.bookmarks);
    assert!(!params.send_initial_events);
    let timeout = params.timeout.unwrap();
    assert!(
        (300..600).contains(&timeout),
        "timeout {timeout} outside [5, 10) minutes"
    );
    api.upsert(cm("ns", "b"));
    assert_eq!(
        next(&mut rx).await,
        "add ns/b 3",
        "the resumed watch delivers"
    );
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_refused_retries_the_watch_not_the_list() {
    let api = FakeApi::new();
    api.fail_next_watch(refused());
    api.fail_next_watch(refused());
    let errors = Arc::new(Mutex::new(Vec::new()));
    let inf = builder(&api)
        .watch_error_handler(Arc::new({
            let errors = errors.clone();
            move |e: &ReflectorError| errors.lock().push(e.to_string())
        }))
        .build();
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    api.upsert(cm("ns", "a"));
    assert_eq!(next(&mut rx).await, "add ns/a 2");
    assert_eq!(api.lists(), 1);
    assert_eq!(api.watches(), 3);
    assert_eq!(errors.lock().len(), 2, "each failure was reported");
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_list_is_retried_and_the_informer_still_syncs() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    api.fail_next_list(gone());
    let inf = informer(&api);
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    assert_eq!(api.lists(), 2);
    assert_eq!(inf.indexer().list_keys(), vec!["ns/a"]);
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_event_is_skipped_and_nothing_cached_is_lost() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    let inf = informer(&api);
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    next(&mut rx).await;
    api.send_garbage();
    api.upsert(cm("ns", "b"));
    assert_eq!(next(&mut rx).await, "add ns/b 3");
    assert_eq!(inf.indexer().len(), 2);
    assert_eq!(api.lists(), 1, "no relist for one bad event");
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_syncs_from_the_initial_events_and_does_not_resend_them_on_resume() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    let inf = builder(&api)
        .reflector(ReflectorConfig {
            initial_list: crate::cache::InitialListStrategy::StreamingList,
            ..fast_backoff()
        })
        .build();
    let (h, mut rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    assert_eq!(next(&mut rx).await, "add ns/a 2 initial");
    assert_eq!(api.lists(), 0, "no LIST was needed");
    api.upsert(cm("ns", "b"));
    assert_eq!(next(&mut rx).await, "add ns/b 3");
    api.drop_watches();
    while api.watches() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!api.last_watch().unwrap().0.send_initial_events);
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_refused_by_the_server_falls_back_to_list_and_watch() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    api.fail_next_watch(crate::client::Error::Api(Box::new(kube_core::Status {
        code: 400,
        reason: "BadRequest".into(),
        ..kube_core::Status::default()
    })));
    let inf = builder(&api)
        .reflector(ReflectorConfig {
            initial_list: crate::cache::InitialListStrategy::StreamingList,
            ..fast_backoff()
        })
        .build();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    assert_eq!(api.lists(), 1);
    assert_eq!(inf.indexer().len(), 1);
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transform_runs_before_objects_are_cached() {
    let api = FakeApi::new();
    api.upsert(cm_with("ns", "a", "", &[("big", "annotation")]));
    let inf = builder(&api)
        .transform(Arc::new(|o: &mut ConfigMap| o.metadata.labels = None))
        .build();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    assert!(
        inf.indexer()
            .get_by_key("ns/a")
            .unwrap()
            .metadata
            .labels
            .is_none()
    );
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexers_can_be_added_after_start_but_not_after_stop() {
    let api = FakeApi::new();
    api.upsert(cm_with("ns", "a", "", &[("app", "web")]));
    let inf = informer(&api);
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    let by_app: crate::cache::IndexFunc<ConfigMap> = Arc::new(|o: &ConfigMap| {
        Ok(o.metadata
            .labels
            .iter()
            .flatten()
            .filter(|(k, _)| *k == "app")
            .map(|(_, v)| v.clone())
            .collect())
    });
    inf.add_indexers(Indexers::from([("app".to_owned(), by_app.clone())]))
        .unwrap();
    assert_eq!(
        inf.indexer().index_keys("app", "web").unwrap(),
        vec!["ns/a"]
    );
    run.shutdown().await;
    assert_eq!(
        inf.add_indexers(Indexers::from([("x".to_owned(), by_app)])),
        Err(InformerError::Stopped)
    );
    let (h, _rx) = recorder();
    assert!(matches!(
        inf.add_event_handler(h),
        Err(InformerError::Stopped)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resync_redelivers_unchanged_objects_only_to_handlers_that_are_due() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    // Informer default 2 s; one handler asks for 1 s before start, lowering the check
    // period to 1 s; the other keeps 2 s.
    let inf = SharedIndexInformer::new(api.clone(), Duration::from_secs(2), namespace_indexers());
    let (fast, mut fast_rx) = recorder();
    let (slow, mut slow_rx) = recorder();
    inf.add_event_handler_with_resync(fast, Duration::from_secs(1))
        .unwrap();
    inf.add_event_handler(slow).unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    tokio::time::sleep(Duration::from_millis(4500)).await;
    run.shutdown().await;
    let drain = |rx: &mut mpsc::UnboundedReceiver<String>| {
        let mut v = Vec::new();
        while let Ok(e) = rx.try_recv() {
            v.push(e);
        }
        v
    };
    let (fast, slow) = (drain(&mut fast_rx), drain(&mut slow_rx));
    assert_eq!(fast[0], "add ns/a 2 initial");
    assert_eq!(slow[0], "add ns/a 2 initial");
    let resyncs = |v: &[String]| v.iter().filter(|e| *e == "update ns/a 2->2").count();
    let (f, s) = (resyncs(&fast), resyncs(&slow));
    assert_eq!(
        f + 1,
        fast.len(),
        "only identical-object updates after the add: {fast:?}"
    );
    assert!(f >= 2 && s >= 1 && f > s, "fast got {f} resyncs, slow {s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_created_without_resync_never_resyncs() {
    let api = FakeApi::new();
    api.upsert(cm("ns", "a"));
    let inf = informer(&api);
    let (h, mut rx) = recorder();
    inf.add_event_handler_with_resync(h, Duration::from_secs(1))
        .unwrap();
    let (inf, run) = start(inf);
    assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    run.shutdown().await;
    assert_eq!(rx.try_recv().unwrap(), "add ns/a 2 initial");
    assert!(rx.try_recv().is_err());
}

#[tokio::test]
async fn wait_for_cache_sync_gives_up_when_stopped() {
    let api: FakeApi<ConfigMap> = FakeApi::new();
    let inf = informer(&api);
    let stop = CancellationToken::new();
    stop.cancel();
    assert!(
        !wait_for_cache_sync(&stop, &[&*inf]).await,
        "never started, stopped"
    );
    let _ = api.keys();
    let _ = api.open_watches();
}
