//! The manager against the test server: probes and metrics over HTTP, controllers only on
//! the elected replica, takeover on shutdown, and a lost lease ending `run`.

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::params::PostParams;
use kubegen::{
    client::{Client, ResourceClient},
    controller::Action,
    leaderelection::LeaderElectionConfig,
    manager::{LeaderElectionOptions, Manager, ManagerError},
};
use kubegen_testserver::{FailRule, Verb};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

mod informer_support;

use informer_support::{cm, eventually, http_get as get, server_and_client};

const WAIT: Duration = Duration::from_secs(10);

fn election(identity: &str) -> LeaderElectionOptions {
    LeaderElectionOptions {
        namespace: "default".into(),
        name: "cm-operator".into(),
        identity: identity.into(),
        config: LeaderElectionConfig {
            lease_duration: Duration::from_secs(2),
            renew_deadline: Duration::from_millis(1500),
            retry_period: Duration::from_millis(200),
            release_on_cancel: true,
            ..LeaderElectionConfig::default()
        },
    }
}

/// Who reconciled what, and whether two replicas ever reconciled one object at once.
#[derive(Default)]
struct Log {
    by: Mutex<Vec<(String, String)>>,
    running: Mutex<HashMap<String, usize>>,
    overlaps: AtomicUsize,
}

/// A manager with leader election and a ConfigMap controller logging to `log`.
fn replica(client: &Client, identity: &str, log: &Arc<Log>) -> Manager {
    let mut manager = Manager::builder(client.clone())
        .leader_election(election(identity))
        .probe_address(([127, 0, 0, 1], 0).into())
        .metrics_address(([127, 0, 0, 1], 0).into())
        .build()
        .expect("manager");
    let controller = manager.controller::<ConfigMap>().named("cm").build();
    let id = identity.to_owned();
    let reconcile = move |obj: Arc<ConfigMap>, log: Arc<Log>| {
        let id = id.clone();
        async move {
            let name = obj.metadata.name.clone().unwrap_or_default();
            {
                let mut running = log.running.lock();
                let n = running.entry(name.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    log.overlaps.fetch_add(1, Ordering::SeqCst);
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            *log.running.lock().entry(name.clone()).or_default() -= 1;
            log.by.lock().push((id, name));
            Ok::<_, std::io::Error>(Action::done())
        }
    };
    manager.add_controller(controller, reconcile, log.clone());
    manager
}

/// `/healthz` 200; `/readyz` 503 while the caches sync (the server answers slowly), then
/// 200; `/metrics` carries the controller's, the queue's, the informers' and the leader
/// election's series.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_and_metrics_over_http() {
    let (server, client) = server_and_client().await;
    let log = Arc::new(Log::default());
    let manager = replica(&client, "a", &log);
    let probes = format!("http://{}", manager.probe_addr().expect("probe address"));
    let metrics = format!(
        "http://{}",
        manager.metrics_addr().expect("metrics address")
    );
    server.set_delay(Some(Duration::from_millis(400)));
    let stop = CancellationToken::new();
    let run = tokio::spawn(manager.run(stop.clone()));
    let (status, body) = get(format!("{probes}/readyz")).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("[-]informers failed"), "{body}");
    let (status, body) = get(format!("{probes}/healthz")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("[+]leaderElection ok"), "{body}");
    server.set_delay(None);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (status, _) = get(format!("{probes}/readyz")).await;
        if status == 200 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    ResourceClient::<ConfigMap>::namespaced(client, "default")
        .create(&PostParams::default(), &cm("x"))
        .await
        .expect("create");
    eventually("the reconcile", WAIT, || !log.by.lock().is_empty()).await;
    let (status, body) = get(format!("{metrics}/metrics")).await;
    assert_eq!(status, 200);
    for series in [
        r#"controller_runtime_reconcile_total{controller="cm",result="success"}"#,
        r#"controller_runtime_max_concurrent_reconciles{controller="cm"} 1"#,
        r#"workqueue_adds_total{name="cm"}"#,
        r#"informer_store_item_total{name="v1/configmaps"}"#,
        r#"leader_election_master_status{name="cm-operator"} 1"#,
    ] {
        assert!(body.contains(series), "missing {series}:\n{body}");
    }
    assert_eq!(get(format!("{probes}/nope")).await.0, 404);
    stop.cancel();
    run.await.expect("joined").expect("clean shutdown");
}

/// Two replicas: only the leader reconciles; when it shuts down (releasing the lease) the
/// other takes over and reconciles a new object; no object is ever reconciled by both at
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_reconciles_and_the_standby_takes_over() {
    let (_server, client) = server_and_client().await;
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &cm("first"))
        .await
        .expect("create");
    let log = Arc::new(Log::default());
    let (stop_a, stop_b) = (CancellationToken::new(), CancellationToken::new());
    let a = tokio::spawn(replica(&client, "a", &log).run(stop_a.clone()));
    eventually("a reconciles", WAIT, || {
        log.by
            .lock()
            .iter()
            .any(|(by, name)| by == "a" && name == "first")
    })
    .await;
    let b_manager = replica(&client, "b", &log);
    let b_probes = format!("http://{}", b_manager.probe_addr().expect("probe"));
    let b = tokio::spawn(b_manager.run(stop_b.clone()));
    // b's caches warm and it is ready, but it does not reconcile.
    let deadline = tokio::time::Instant::now() + WAIT;
    while get(format!("{b_probes}/readyz")).await.0 != 200 {
        assert!(tokio::time::Instant::now() < deadline, "b never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        log.by.lock().iter().all(|(by, _)| by == "a"),
        "{:?}",
        log.by.lock()
    );

    stop_a.cancel();
    a.await.expect("joined").expect("a stopped cleanly");
    cms.create(&PostParams::default(), &cm("second"))
        .await
        .expect("create");
    eventually("b reconciles the new object", WAIT, || {
        log.by
            .lock()
            .iter()
            .any(|(by, name)| by == "b" && name == "second")
    })
    .await;
    stop_b.cancel();
    b.await.expect("joined").expect("b stopped cleanly");
    assert_eq!(log.overlaps.load(Ordering::SeqCst), 0);
}

/// A leader whose renewals fail stops its controllers and `run` ends with
/// `LeaderElectionLost` (controller-runtime exits: the process restarts and stands again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lease_ends_run() {
    let (server, client) = server_and_client().await;
    let log = Arc::new(Log::default());
    let manager = replica(&client, "a", &log);
    let probes = format!("http://{}", manager.probe_addr().expect("probe"));
    let run = tokio::spawn(manager.run(CancellationToken::new()));
    let deadline = tokio::time::Instant::now() + WAIT;
    while get(format!("{probes}/readyz")).await.0 != 200 {
        assert!(tokio::time::Instant::now() < deadline, "never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.fail(
        FailRule::on(Verb::Update)
            .resource("leases")
            .code(500)
            .times(10_000),
    );
    let result = tokio::time::timeout(WAIT, run)
        .await
        .expect("run ended")
        .expect("joined");
    assert!(
        matches!(result, Err(ManagerError::LeaderElectionLost)),
        "{result:?}"
    );
}

/// The manager's client records client-go's REST client series into the manager's
/// registry without being asked (controller-runtime's `pkg/metrics/client_go_adapter.go`
/// registers `rest_client_requests_total{code,method,host}` for every client of the
/// process): three creates, a 404 and throttled requests show on `/metrics` with their
/// counts, the host label being the API server's address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_managers_client_requests_are_counted_on_metrics() {
    let (server, _admin) = server_and_client().await;
    // Throttled (a bucket that never runs dry here), so the limiter's waits are recorded.
    let config = server
        .config()
        .expect("config")
        .with_rate_limit(1000.0, 100);
    let client = Client::try_from_config(config).expect("client");
    assert!(!client.has_metrics());
    let manager = Manager::builder(client)
        .metrics_address(([127, 0, 0, 1], 0).into())
        .build()
        .expect("manager");
    let metrics = format!(
        "http://{}",
        manager.metrics_addr().expect("metrics address")
    );
    let cms = ResourceClient::<ConfigMap>::namespaced(manager.client().clone(), "default");
    let stop = CancellationToken::new();
    let run = tokio::spawn(manager.run(stop.clone()));
    for name in ["r1", "r2", "r3"] {
        cms.create(&PostParams::default(), &cm(name))
            .await
            .expect("create");
    }
    assert!(cms.get("missing").await.is_err());
    let host = server.addr().to_string();
    let (status, body) = get(format!("{metrics}/metrics")).await;
    assert_eq!(status, 200);
    for series in [
        format!(r#"rest_client_requests_total{{code="201",method="POST",host="{host}"}} 3"#),
        format!(r#"rest_client_requests_total{{code="404",method="GET",host="{host}"}} 1"#),
        format!(r#"rest_client_request_duration_seconds_count{{verb="POST",host="{host}"}} 3"#),
        format!(
            r#"rest_client_rate_limiter_duration_seconds_count{{verb="POST",host="{host}"}} 3"#
        ),
    ] {
        assert!(body.contains(&series), "missing {series}:\n{body}");
    }
    stop.cancel();
    run.await.expect("joined").expect("clean shutdown");
}
