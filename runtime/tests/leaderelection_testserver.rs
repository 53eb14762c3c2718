//! Leader election against the test server, with short durations (lease 2 s, renew
//! deadline 1.5 s, retry 200 ms): client-go `leaderelection_test.go` behaviours — one
//! leader at a time, takeover after a crash within the lease, at once after a release,
//! stepping down by the renew deadline when renewals fail — and the Lease as kubectl shows it.

use std::{process::Command, time::Duration};

use k8s_openapi::api::coordination::v1::Lease;
use kubegen::{
    client::{Client, ResourceClient},
    leaderelection::{JITTER_FACTOR, LeaderElectionConfig, LeaderElector, LeaseLock},
    metrics::PrometheusMetrics,
};
use kubegen_testserver::{FailRule, Verb};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod election_support;
mod informer_support;

use election_support::Terms;

use informer_support::server_and_client;

const LEASE: Duration = Duration::from_secs(2);
const RENEW_DEADLINE: Duration = Duration::from_millis(1500);
const RETRY: Duration = Duration::from_millis(200);
/// Scheduling slack on a loaded 2-core machine.
const SLACK: Duration = Duration::from_millis(500);

fn config(terms: &Terms, identity: &str, release: bool) -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: LEASE,
        renew_deadline: RENEW_DEADLINE,
        retry_period: RETRY,
        ..terms.config(identity, release)
    }
}

fn candidate(client: &Client, terms: &Terms, identity: &str, release: bool) -> LeaderElector {
    let lock = LeaseLock::new(client.clone(), "default", "my-operator", identity);
    LeaderElector::new(lock, config(terms, identity, release)).expect("valid config")
}

async fn until(what: &str, within: Duration, check: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Two candidates: exactly one leads; when the leader's process dies (its task aborted,
/// no release), the other takes over once the lease has expired on its own clock: within
/// lease duration + a (jittered) retry period, never before the crash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_at_a_time_and_takeover_after_a_crash() {
    let (_server, client) = server_and_client().await;
    let terms = Terms::default();
    let (a, b) = (
        candidate(&client, &terms, "a", false),
        candidate(&client, &terms, "b", false),
    );
    let stop = CancellationToken::new();
    let task_a = tokio::spawn({
        let (a, stop) = (a.clone(), stop.clone());
        async move { a.run(stop).await }
    });
    until("a leader", LEASE, || a.is_leader()).await;
    let task_b = tokio::spawn({
        let (b, stop) = (b.clone(), stop.clone());
        async move { b.run(stop).await }
    });
    tokio::time::sleep(LEASE + SLACK).await;
    assert_eq!(terms.leaders(), ["a"], "b stands by while a renews");
    assert!(!b.is_leader());
    assert_eq!(b.leader(), "a");

    task_a.abort();
    let crashed = Instant::now();
    terms.end("a", crashed);
    until("b to take over", LEASE * 3, || b.is_leader()).await;
    let took = terms.started("b").expect("b led") - crashed;
    assert!(
        took <= LEASE + RETRY.mul_f64(1.0 + JITTER_FACTOR) + SLACK,
        "takeover took {took:?}"
    );
    terms.assert_disjoint();
    stop.cancel();
    task_b.await.expect("b stopped");
    let lease = ResourceClient::<Lease>::namespaced(client, "default")
        .get("my-operator")
        .await
        .expect("lease");
    let spec = lease.spec.expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("b"));
    assert_eq!(
        spec.lease_transitions,
        Some(1),
        "a created it, b took it over"
    );
}

/// `ReleaseOnCancel`: a leader that stops writes an expired, holder-less record, so the
/// standby takes over within a retry period instead of a whole lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_on_cancel_hands_over_at_once() {
    let (_server, client) = server_and_client().await;
    let terms = Terms::default();
    let (a, b) = (
        candidate(&client, &terms, "a", true),
        candidate(&client, &terms, "b", true),
    );
    let (stop_a, stop_b) = (CancellationToken::new(), CancellationToken::new());
    let task_a = tokio::spawn({
        let (a, stop) = (a.clone(), stop_a.clone());
        async move { a.run(stop).await }
    });
    until("a leader", LEASE, || a.is_leader()).await;
    let task_b = tokio::spawn({
        let (b, stop) = (b.clone(), stop_b.clone());
        async move { b.run(stop).await }
    });
    until("b to observe a", LEASE, || b.leader() == "a").await;
    stop_a.cancel();
    let released = Instant::now();
    task_a.await.expect("a stopped");
    assert!(!a.is_leader());
    until("b to take over", LEASE, || b.is_leader()).await;
    let took = terms.started("b").expect("b led") - released;
    assert!(took < LEASE, "took {took:?}: the release was not honoured");
    terms.assert_disjoint();
    stop_b.cancel();
    task_b.await.expect("b stopped");
}

/// Renewals failing (500s on every Lease update): the leader stops leading — its token
/// fires — once the renew deadline has passed, and the `/healthz` watchdog fails once it
/// has not renewed for a lease duration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_renewals_step_the_leader_down_by_the_renew_deadline() {
    let (server, client) = server_and_client().await;
    let terms = Terms::default();
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = PrometheusMetrics::new(&mut registry);
    let lock = LeaseLock::new(client.clone(), "default", "my-operator", "a");
    let elector = LeaderElector::new(
        lock,
        config(&terms, "a", false).metrics("my-operator", &metrics),
    )
    .expect("valid");
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (elector, stop) = (elector.clone(), stop.clone());
        async move { elector.run(stop).await }
    });
    until("leading", LEASE, || elector.is_leader()).await;
    assert_eq!(elector.check(Duration::ZERO), Ok(()));
    assert!(encode(&registry).contains(r#"leader_election_master_status{name="my-operator"} 1"#));

    server.fail(
        FailRule::on(Verb::Update)
            .resource("leases")
            .code(500)
            .times(10_000),
    );
    let failing = Instant::now();
    until("stepping down", RETRY + RENEW_DEADLINE + SLACK * 2, || {
        terms.0.lock().first().is_some_and(|t| t.2.is_some())
    })
    .await;
    let stepped_down = terms.0.lock()[0].2.expect("ended") - failing;
    assert!(
        stepped_down >= RENEW_DEADLINE.saturating_sub(RETRY),
        "stepped down after {stepped_down:?}, before its deadline"
    );
    task.await.expect("run returned after losing the lease");
    assert!(encode(&registry).contains(r#"leader_election_master_status{name="my-operator"} 0"#));
    // It still sees itself in the last record it observed; past the lease, the watchdog
    // reports it.
    until("the watchdog", LEASE + SLACK, || {
        elector.check(Duration::ZERO).is_err()
    })
    .await;
    stop.cancel();
}

fn encode(registry: &prometheus_client::registry::Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).expect("encode");
    text
}

/// The Lease is an ordinary object: `kubectl get lease` shows the holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_the_holder() {
    let (server, client) = server_and_client().await;
    let terms = Terms::default();
    let a = candidate(&client, &terms, "pod-a", false);
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (a, stop) = (a.clone(), stop.clone());
        async move { a.run(stop).await }
    });
    until("leading", LEASE, || a.is_leader()).await;
    let dir = std::env::temp_dir().join(format!("kubegen-lease-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let output = tokio::task::spawn_blocking(move || {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["get", "lease", "my-operator", "-n", "default", "-o"])
            .arg("jsonpath={.spec.holderIdentity}")
            .output()
    })
    .await
    .expect("joined")
    .expect("kubectl is installed");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "pod-a");
    stop.cancel();
    task.await.expect("stopped");
}
