//! The controller runtime against the test server: what wakes a reconcile (owned objects,
//! predicates), what every reconcile can rely on (synced caches), how failures are retried
//! (controller-runtime `pkg/internal/controller/controller_test.go` behaviours: backoff,
//! terminal errors, panics, concurrency), priorities, and the metrics a run leaves.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::{
    apps::v1::{Deployment, DeploymentSpec, DeploymentStatus},
    core::v1::{ConfigMap, PodTemplateSpec, Secret},
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as MetaSelector;
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    client::{Client, ResourceClient},
    controller::{Action, Controller, GenerationChanged, Request, TerminalError},
    controllerutil::set_controller_reference,
    informers::SharedInformerFactory,
    metrics::PrometheusMetrics,
};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

mod informer_support;

use informer_support::{eventually, server_and_client};

/// How long a condition may take to hold.
const WAIT: Duration = Duration::from_secs(10);

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        ..ObjectMeta::default()
    }
}

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: meta(name),
        data: Some(BTreeMap::from([("k".to_owned(), "v".to_owned())])),
        ..ConfigMap::default()
    }
}

/// Counts reconciles per object name.
#[derive(Default, Clone)]
struct Counts(Arc<Mutex<HashMap<String, usize>>>);

impl Counts {
    fn hit(&self, name: &str) {
        *self.0.lock().entry(name.to_owned()).or_default() += 1;
    }
    fn of(&self, name: &str) -> usize {
        self.0.lock().get(name).copied().unwrap_or(0)
    }
}

type Reconcile<K> =
    fn(Arc<K>, Arc<Counts>) -> futures::future::Ready<Result<Action, std::io::Error>>;

/// A reconcile that only counts.
fn counting<K: kube_core::Resource>() -> Reconcile<K> {
    |obj, counts| {
        counts.hit(obj.meta().name.as_deref().unwrap_or(""));
        futures::future::ready(Ok(Action::done()))
    }
}

/// Runs `controller` in the background with `reconcile`; returns its stop token and task.
fn spawn<K, F, Fut, C>(
    controller: Controller<K>,
    reconcile: F,
    ctx: Arc<C>,
) -> (
    CancellationToken,
    tokio::task::JoinHandle<
        Result<kubegen::controller::ShutdownReport, kubegen::controller::ControllerError>,
    >,
)
where
    K: kubegen::Object,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, std::io::Error>> + Send + 'static,
{
    let stop = CancellationToken::new();
    let task = tokio::spawn(controller.run(reconcile, ctx, stop.clone()));
    (stop, task)
}

/// A Secret controlled by `owner`.
fn owned_secret(owner: &ConfigMap, name: &str) -> Secret {
    let mut secret = Secret {
        metadata: meta(name),
        ..Secret::default()
    };
    set_controller_reference(owner, &mut secret).expect("owner reference");
    secret
}

/// controller-runtime `Owns`: a change to an owned object (here its deletion) reconciles
/// its controller owner, once; an object owned by something else reconciles nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_owned_object_reconciles_its_owner_once() {
    let (_server, client) = server_and_client().await;
    let pp = PostParams::default();
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let secrets = ResourceClient::<Secret>::namespaced(client.clone(), "default");
    let owner = cms.create(&pp, &cm("owner")).await.expect("create");
    secrets
        .create(&pp, &owned_secret(&owner, "owned"))
        .await
        .expect("create");
    let mut unowned = Secret {
        metadata: meta("unowned"),
        ..Secret::default()
    };
    unowned.metadata.labels = Some(BTreeMap::from([("x".into(), "y".into())]));
    secrets.create(&pp, &unowned).await.expect("create");

    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let controller = Controller::<ConfigMap>::builder(&factory)
        .owns::<Secret>()
        .build();
    let counts = Arc::new(Counts::default());
    let (stop, task) = spawn(controller, counting::<ConfigMap>(), counts.clone());
    eventually("the first reconcile", WAIT, || counts.of("owner") == 1).await;
    // The first list's add of the owned Secret was queued for the same request as the
    // owner's own add: one reconcile for both.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(counts.of("owner"), 1);

    secrets
        .delete("owned", &Default::default())
        .await
        .expect("delete");
    secrets
        .delete("unowned", &Default::default())
        .await
        .expect("delete");
    eventually("the owner's reconcile", WAIT, || counts.of("owner") == 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(counts.of("owner"), 2, "one delete, one reconcile");
    stop.cancel();
    task.await.expect("joined").expect("ran");
}

fn deployment(name: &str) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: meta(name),
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: MetaSelector {
                match_labels: Some(labels.clone()),
                ..MetaSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(k8s_openapi::api::core::v1::PodSpec {
                    containers: vec![k8s_openapi::api::core::v1::Container {
                        name: "app".into(),
                        image: Some("nginx".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

/// controller-runtime `GenerationChangedPredicate`: the API server bumps
/// `metadata.generation` on spec changes only (kube-apiserver
/// `pkg/registry/apps/deployment/strategy.go`, `PrepareForUpdate`), so a status write does
/// not wake the controller and a spec change does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_only_update_is_filtered_by_generation_changed() {
    let (_server, client) = server_and_client().await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    let created = deployments
        .create(&PostParams::default(), &deployment("web"))
        .await
        .expect("create");
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let controller = Controller::<Deployment>::builder(&factory)
        .with_event_filter(GenerationChanged)
        .build();
    let informer = controller.informer().clone();
    let counts = Arc::new(Counts::default());
    let (stop, task) = spawn(controller, counting::<Deployment>(), counts.clone());
    eventually("the first reconcile", WAIT, || counts.of("web") == 1).await;

    let mut status = created.clone();
    status.status = Some(DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(1),
        ..DeploymentStatus::default()
    });
    let status_written = deployments
        .update_status(&PostParams::default(), &status)
        .await
        .expect("status");
    assert_eq!(
        status_written.metadata.generation,
        created.metadata.generation
    );
    let rv = status_written.metadata.resource_version.clone();
    eventually("the cache to see the status write", WAIT, || {
        informer
            .indexer()
            .get_by_key("default/web")
            .is_some_and(|d| d.metadata.resource_version == rv)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(counts.of("web"), 1, "a status write is filtered");

    let mut spec = status_written.clone();
    spec.spec.replicas = Some(3);
    deployments
        .update(&PostParams::default(), &spec)
        .await
        .expect("update");
    eventually("the spec change's reconcile", WAIT, || {
        counts.of("web") == 2
    })
    .await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
}

/// kube-rs #1914: every cache the controller reads has synced before its first reconcile,
/// so with 1000 owned objects present at start no reconcile sees an owner missing any.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_1000_owned_objects_at_start_no_reconcile_sees_one_missing() {
    let (_server, client) = server_and_client().await;
    let pp = PostParams::default();
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let secrets = ResourceClient::<Secret>::namespaced(client.clone(), "default");
    for o in 0..10 {
        let owner = cms
            .create(&pp, &cm(&format!("owner-{o}")))
            .await
            .expect("create");
        for s in 0..100 {
            secrets
                .create(&pp, &owned_secret(&owner, &format!("s-{o}-{s}")))
                .await
                .expect("create");
        }
    }
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let controller = Controller::<ConfigMap>::builder(&factory)
        .owns::<Secret>()
        .max_concurrent_reconciles(4)
        .build();
    let secret_lister = factory.lister_for::<Secret>();
    let seen = Arc::new(Mutex::new(Vec::<usize>::new()));
    let reconcile = {
        let seen = seen.clone();
        move |owner: Arc<ConfigMap>, _: Arc<()>| {
            let owned = secret_lister
                .namespaced("default")
                .list(&Default::default())
                .iter()
                .filter(|s| kubegen::controllerutil::is_controlled_by(s.as_ref(), owner.as_ref()))
                .count();
            seen.lock().push(owned);
            futures::future::ready(Ok::<_, std::io::Error>(Action::done()))
        }
    };
    let (stop, task) = spawn(controller, reconcile, Arc::new(()));
    eventually("ten reconciles", WAIT, || seen.lock().len() >= 10).await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
    let seen = seen.lock();
    assert!(seen.iter().all(|n| *n == 100), "{seen:?}");
}

/// A reconcile that fails `failures` times per object, then succeeds; records when each
/// call happened (tokio's clock).
struct Flaky {
    failures: usize,
    calls: Mutex<Vec<tokio::time::Instant>>,
}

/// controller-runtime `controller_test.go` "should requeue a Request with rate limiting
/// if the Result is an error": failures are retried after 5 ms, 10 ms, 20 ms (the default
/// controller rate limiter, client-go `workqueue.DefaultTypedControllerRateLimiter`), and a
/// success forgets the backoff, so the next failure waits 5 ms again.
#[tokio::test(start_paused = true)]
async fn three_failures_requeue_at_5_10_20_ms_and_success_resets() {
    let fake = kubegen_testserver::fake::Fake::new();
    let client: Client = fake.client();
    ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm("flaky"))
        .await
        .expect("create");
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let controller = Controller::<ConfigMap>::builder(&factory).build();
    let queue = controller.queue().clone();
    let flaky = Arc::new(Flaky {
        failures: 3,
        calls: Mutex::new(Vec::new()),
    });
    let reconcile = |_: Arc<ConfigMap>, flaky: Arc<Flaky>| {
        let mut calls = flaky.calls.lock();
        calls.push(tokio::time::Instant::now());
        // Fail three times, succeed, then fail once more (after a manual requeue).
        let n = calls.len();
        let fail = n <= flaky.failures || n == flaky.failures + 2;
        futures::future::ready(if fail {
            Err(std::io::Error::other("transient"))
        } else {
            Ok(Action::done())
        })
    };
    let (stop, task) = spawn(controller, reconcile, flaky.clone());
    wait_paused(|| flaky.calls.lock().len() >= 4).await;
    queue.add(Request::new(Some("default"), "flaky"));
    wait_paused(|| flaky.calls.lock().len() >= 6).await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
    let calls = flaky.calls.lock();
    let gaps: Vec<Duration> = calls.windows(2).map(|w| w[1] - w[0]).collect();
    let ms = Duration::from_millis;
    assert_eq!(&gaps[..3], &[ms(5), ms(10), ms(20)], "{gaps:?}");
    assert_eq!(gaps[4], ms(5), "the success reset the backoff: {gaps:?}");
}

/// Polls `done` under a paused clock (each poll lets timers and the handler threads move).
async fn wait_paused(done: impl Fn() -> bool) {
    for _ in 0..2000 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("condition not reached");
}

/// controller-runtime "should not requeue a Request if the error is a TerminalError": it
/// runs once, is counted, and is recorded nowhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_error_is_never_requeued() {
    let (_server, client) = server_and_client().await;
    ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm("bad"))
        .await
        .expect("create");
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = PrometheusMetrics::new(&mut registry);
    let controller = Controller::<ConfigMap>::builder(&factory)
        .named("terminal")
        .metrics(Arc::new(metrics))
        .build();
    let queue = controller.queue().clone();
    let counts = Arc::new(Counts::default());
    let reconcile = |obj: Arc<ConfigMap>, counts: Arc<Counts>| {
        counts.hit(obj.metadata.name.as_deref().unwrap_or(""));
        futures::future::ready(Err::<Action, _>(TerminalError::new(
            "spec.replicas must be positive",
        )))
    };
    let stop = CancellationToken::new();
    let task = tokio::spawn(controller.run(reconcile, counts.clone(), stop.clone()));
    eventually("the reconcile", WAIT, || counts.of("bad") == 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(counts.of("bad"), 1);
    assert_eq!(queue.waiting_len() + queue.len(), 0, "nothing requeued");
    assert_eq!(queue.num_requeues(&Request::new(Some("default"), "bad")), 0);
    stop.cancel();
    task.await.expect("joined").expect("ran");
    let text = encode(&registry);
    assert!(
        text.contains(
            r#"controller_runtime_terminal_reconcile_errors_total{controller="terminal"} 1"#
        ),
        "{text}"
    );
}

fn encode(registry: &prometheus_client::registry::Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).expect("encode");
    text
}

/// Tracks how many reconciles run at once, overall and per object.
#[derive(Default)]
struct Concurrency {
    running: AtomicUsize,
    high_water: AtomicUsize,
    per_key: Mutex<HashMap<String, usize>>,
    overlaps: AtomicUsize,
    total: AtomicUsize,
}

/// "should not reconcile the same request twice at once" and `MaxConcurrentReconciles`:
/// with 3 workers and 30 objects each updated while it is being reconciled, at most 3
/// reconciles run at once and never two for one object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_stays_within_n_and_a_key_never_runs_twice_at_once() {
    let (_server, client) = server_and_client().await;
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for i in 0..30 {
        cms.create(&PostParams::default(), &cm(&format!("c-{i}")))
            .await
            .expect("create");
    }
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let controller = Controller::<ConfigMap>::builder(&factory)
        .max_concurrent_reconciles(3)
        .build();
    let queue = controller.queue().clone();
    let reconcile = move |obj: Arc<ConfigMap>, c: Arc<Concurrency>| {
        let queue = queue.clone();
        async move {
            let name = obj.metadata.name.clone().unwrap_or_default();
            let now = c.running.fetch_add(1, Ordering::SeqCst) + 1;
            c.high_water.fetch_max(now, Ordering::SeqCst);
            {
                let mut per_key = c.per_key.lock();
                let n = per_key.entry(name.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    c.overlaps.fetch_add(1, Ordering::SeqCst);
                }
            }
            // Requeue ourselves while running: must wait for `done`.
            if c.total.fetch_add(1, Ordering::SeqCst) < 60 {
                queue.add(Request::new(Some("default"), &name));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            *c.per_key.lock().entry(name).or_default() -= 1;
            c.running.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(Action::done())
        }
    };
    let c = Arc::new(Concurrency::default());
    let (stop, task) = spawn(controller, reconcile, c.clone());
    eventually("every reconcile", WAIT, || {
        c.total.load(Ordering::SeqCst) >= 90
    })
    .await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
    assert_eq!(c.high_water.load(Ordering::SeqCst), 3);
    assert_eq!(c.overlaps.load(Ordering::SeqCst), 0);
}

/// controller-runtime "should recover from a panic in Reconcile": the panic is caught,
/// counted, and the request retried with backoff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_reconcile_is_retried() {
    let (_server, client) = server_and_client().await;
    ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm("boom"))
        .await
        .expect("create");
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let mut registry = prometheus_client::registry::Registry::default();
    let controller = Controller::<ConfigMap>::builder(&factory)
        .metrics(Arc::new(PrometheusMetrics::new(&mut registry)))
        .build();
    let calls = Arc::new(AtomicUsize::new(0));
    let reconcile = |_: Arc<ConfigMap>, calls: Arc<AtomicUsize>| async move {
        assert!(
            calls.fetch_add(1, Ordering::SeqCst) > 0,
            "first call panics"
        );
        Ok::<_, std::io::Error>(Action::done())
    };
    let (stop, task) = spawn(controller, reconcile, calls.clone());
    eventually("the retry", WAIT, || calls.load(Ordering::SeqCst) == 2).await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
    let text = encode(&registry);
    assert!(
        text.contains(r#"controller_runtime_reconcile_panics_total{controller="configmap"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"controller_runtime_reconcile_total{controller="configmap",result="success"} 1"#
        ),
        "{text}"
    );
}

/// controller-runtime `Watches` with `EnqueueRequestsFromMapFunc`: a Secret labelled
/// `for=<name>` reconciles that ConfigMap, on create and when relabelled (old and new).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_reconcile_what_the_map_function_names() {
    let (_server, client) = server_and_client().await;
    let pp = PostParams::default();
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for name in ["a", "b"] {
        cms.create(&pp, &cm(name)).await.expect("create");
    }
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let controller = Controller::<ConfigMap>::builder(&factory)
        .watches::<Secret>(|secret| {
            let target = secret.metadata.labels.as_ref().and_then(|l| l.get("for"));
            target
                .map(|name| Request::new(secret.metadata.namespace.as_deref(), name))
                .into_iter()
                .collect()
        })
        .build();
    let counts = Arc::new(Counts::default());
    let (stop, task) = spawn(controller, counting::<ConfigMap>(), counts.clone());
    eventually("the first reconciles", WAIT, || {
        counts.of("a") == 1 && counts.of("b") == 1
    })
    .await;
    let secrets = ResourceClient::<Secret>::namespaced(client, "default");
    let mut secret = Secret {
        metadata: meta("s"),
        ..Secret::default()
    };
    secret.metadata.labels = Some(BTreeMap::from([("for".into(), "a".into())]));
    let created = secrets.create(&pp, &secret).await.expect("create");
    eventually("a's reconcile", WAIT, || counts.of("a") == 2).await;
    let mut moved = created.clone();
    moved.metadata.labels = Some(BTreeMap::from([("for".into(), "b".into())]));
    secrets.update(&pp, &moved).await.expect("update");
    eventually("both reconciles", WAIT, || {
        counts.of("a") == 3 && counts.of("b") == 2
    })
    .await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
}

/// controller-runtime's priority queue (default since v0.23): the objects of the first
/// list are queued at low priority, so with 10k objects syncing, an object created
/// meanwhile is reconciled before the backlog drains.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_object_overtakes_a_10k_initial_backlog() {
    let (_server, client) = server_and_client().await;
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let mut creates = tokio::task::JoinSet::new();
    for worker in 0..8 {
        let cms = cms.clone();
        creates.spawn(async move {
            for i in (worker..10_000).step_by(8) {
                cms.create(&PostParams::default(), &cm(&format!("old-{i}")))
                    .await
                    .expect("create");
            }
        });
    }
    while let Some(done) = creates.join_next().await {
        done.expect("creates");
    }
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let controller = Controller::<ConfigMap>::builder(&factory).build();
    let order = Arc::new(Mutex::new(Vec::<String>::new()));
    let reconcile = |obj: Arc<ConfigMap>, order: Arc<Mutex<Vec<String>>>| async move {
        order
            .lock()
            .push(obj.metadata.name.clone().unwrap_or_default());
        // A slow reconcile: the backlog takes about 10 s to drain.
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok::<_, std::io::Error>(Action::done())
    };
    let (stop, task) = spawn(controller, reconcile, order.clone());
    eventually("the backlog to start", WAIT, || !order.lock().is_empty()).await;
    cms.create(&PostParams::default(), &cm("fresh"))
        .await
        .expect("create");
    eventually("the fresh object's reconcile", WAIT, || {
        order.lock().iter().any(|n| n == "fresh")
    })
    .await;
    let position = order
        .lock()
        .iter()
        .position(|n| n == "fresh")
        .unwrap_or(usize::MAX);
    stop.cancel();
    let report = task.await.expect("joined").expect("ran");
    assert!(
        position < 5_000,
        "reconciled {position}th, behind the backlog"
    );
    assert!(
        report.dropped_requests > 0,
        "the backlog had not drained: {report:?}"
    );
}

/// Shutdown: no new work is taken, a reconcile in flight finishes within the grace
/// period, and the queued requests are reported dropped; one that outlives the grace
/// period is aborted and reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_in_flight_reconciles_finish_and_reports_what_was_dropped() {
    let (_server, client) = server_and_client().await;
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for i in 0..5 {
        cms.create(&PostParams::default(), &cm(&format!("c-{i}")))
            .await
            .expect("create");
    }
    for (sleep, grace, finished, abandoned) in [
        (Duration::from_millis(200), Duration::from_secs(5), 1, 0),
        (Duration::from_secs(60), Duration::from_millis(100), 0, 1),
    ] {
        let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
        let controller = Controller::<ConfigMap>::builder(&factory)
            .graceful_shutdown_timeout(grace)
            .build();
        let started = Arc::new(AtomicUsize::new(0));
        let completed = Arc::new(AtomicUsize::new(0));
        let reconcile = {
            let completed = completed.clone();
            move |_: Arc<ConfigMap>, started: Arc<AtomicUsize>| {
                let completed = completed.clone();
                async move {
                    started.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(sleep).await;
                    completed.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, std::io::Error>(Action::done())
                }
            }
        };
        let (stop, task) = spawn(controller, reconcile, started.clone());
        eventually("a reconcile in flight", WAIT, || {
            started.load(Ordering::SeqCst) == 1
        })
        .await;
        stop.cancel();
        let report = task.await.expect("joined").expect("ran");
        assert_eq!(started.load(Ordering::SeqCst), 1, "no new work after stop");
        assert_eq!(completed.load(Ordering::SeqCst), finished);
        assert_eq!(
            (
                report.finished_in_flight,
                report.abandoned_in_flight,
                report.dropped_requests
            ),
            (finished, abandoned, 4),
        );
        factory.shutdown().await;
    }
}

/// A reconcile that outlives the reconcile timeout is cancelled and retried with backoff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_past_its_timeout_is_cancelled_and_retried() {
    let (_server, client) = server_and_client().await;
    ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm("slow"))
        .await
        .expect("create");
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let controller = Controller::<ConfigMap>::builder(&factory)
        .reconcile_timeout(Duration::from_millis(50))
        .build();
    let calls = Arc::new(AtomicUsize::new(0));
    let reconcile = |_: Arc<ConfigMap>, calls: Arc<AtomicUsize>| async move {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        Ok::<_, std::io::Error>(Action::done())
    };
    let (stop, task) = spawn(controller, reconcile, calls.clone());
    eventually("the retry", WAIT, || calls.load(Ordering::SeqCst) == 2).await;
    stop.cancel();
    let report = task.await.expect("joined").expect("ran");
    assert_eq!(report.abandoned_in_flight, 0);
}

/// The metrics of a scripted run, with controller-runtime's names: one object succeeds,
/// one fails once then succeeds, one asks to be requeued after an hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_of_a_scripted_run() {
    let (_server, client) = server_and_client().await;
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for name in ["ok", "flaky", "periodic"] {
        cms.create(&PostParams::default(), &cm(name))
            .await
            .expect("create");
    }
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let mut registry = prometheus_client::registry::Registry::default();
    let controller = Controller::<ConfigMap>::builder(&factory)
        .named("scripted")
        .max_concurrent_reconciles(2)
        .metrics(Arc::new(PrometheusMetrics::new(&mut registry)))
        .build();
    let counts = Arc::new(Counts::default());
    let reconcile = |obj: Arc<ConfigMap>, counts: Arc<Counts>| {
        let name = obj.metadata.name.clone().unwrap_or_default();
        counts.hit(&name);
        futures::future::ready(match name.as_str() {
            "flaky" if counts.of("flaky") == 1 => Err(std::io::Error::other("transient")),
            "periodic" => Ok(Action::requeue_after(Duration::from_secs(3600))),
            _ => Ok(Action::done()),
        })
    };
    let (stop, task) = spawn(controller, reconcile, counts.clone());
    eventually("every reconcile", WAIT, || {
        counts.of("ok") == 1 && counts.of("flaky") == 2 && counts.of("periodic") == 1
    })
    .await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
    let text = encode(&registry);
    for line in [
        r#"controller_runtime_reconcile_total{controller="scripted",result="success"} 2"#,
        r#"controller_runtime_reconcile_total{controller="scripted",result="error"} 1"#,
        r#"controller_runtime_reconcile_total{controller="scripted",result="requeue_after"} 1"#,
        r#"controller_runtime_reconcile_errors_total{controller="scripted"} 1"#,
        r#"controller_runtime_terminal_reconcile_errors_total{controller="scripted"} 0"#,
        r#"controller_runtime_reconcile_panics_total{controller="scripted"} 0"#,
        r#"controller_runtime_reconcile_time_seconds_count{controller="scripted"} 4"#,
        r#"controller_runtime_active_workers{controller="scripted"} 0"#,
        r#"controller_runtime_max_concurrent_reconciles{controller="scripted"} 2"#,
    ] {
        assert!(text.contains(line), "missing {line}:\n{text}");
    }
}

/// The finalizer flow through a controller that is stopped and started again (a new
/// process, with new caches): an object deleted while the first controller runs, and one
/// deleted while no controller runs, are each cleaned up exactly once, and both go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizer_cleanup_runs_exactly_once_across_a_controller_restart() {
    use kubegen::controller::finalizer::{FinalizerEvent, finalizer};
    const FINALIZER: &str = "example.com/cleanup";
    let (_server, client) = server_and_client().await;
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for name in ["early", "late"] {
        cms.create(&PostParams::default(), &cm(name))
            .await
            .expect("create");
    }
    let cleanups = Arc::new(Counts::default());
    let start = || {
        let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
        let controller = Controller::<ConfigMap>::builder(&factory).build();
        let reconcile = {
            let cms = cms.clone();
            move |obj: Arc<ConfigMap>, cleanups: Arc<Counts>| {
                let cms = cms.clone();
                async move {
                    finalizer(&cms, FINALIZER, obj, |event| async move {
                        if let FinalizerEvent::Cleanup(obj) = event {
                            cleanups.hit(obj.metadata.name.as_deref().unwrap_or(""));
                        }
                        Ok::<_, std::io::Error>(Action::done())
                    })
                    .await
                    .map_err(std::io::Error::other)
                }
            }
        };
        let (stop, task) = spawn(controller, reconcile, cleanups.clone());
        (factory, stop, task)
    };
    let has_finalizer = |name: &'static str| {
        let cms = cms.clone();
        async move {
            cms.get(name)
                .await
                .is_ok_and(|c| kubegen::controllerutil::contains_finalizer(&c, FINALIZER))
        }
    };
    let gone = |name: &'static str| {
        let cms = cms.clone();
        async move { cms.get(name).await.is_err_and(|e| e.is_not_found()) }
    };

    let (factory, stop, task) = start();
    for name in ["early", "late"] {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !has_finalizer(name).await {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no finalizer on {name}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    cms.delete("early", &Default::default())
        .await
        .expect("delete");
    let deadline = tokio::time::Instant::now() + WAIT;
    while !gone("early").await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "early not cleaned up"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.cancel();
    task.await.expect("joined").expect("ran");
    factory.shutdown().await;

    // No controller runs: the delete only marks the object (its finalizer keeps it).
    cms.delete("late", &Default::default())
        .await
        .expect("delete");
    let late = cms.get("late").await.expect("kept by its finalizer");
    assert!(late.metadata.deletion_timestamp.is_some());

    let (factory, stop, task) = start();
    let deadline = tokio::time::Instant::now() + WAIT;
    while !gone("late").await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "late not cleaned up"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.cancel();
    task.await.expect("joined").expect("ran");
    factory.shutdown().await;
    assert_eq!((cleanups.of("early"), cleanups.of("late")), (1, 1));
}
