//! Two replicas of the operator binary against one test server (issue: leader election and
//! the manager): `/readyz` is 503 before the caches sync and 200 after, `/metrics` serves
//! the controller's and the queue's series, only the leader reconciles, and when the leader
//! gets SIGTERM it exits 0 and the other replica takes over and reconciles a new Foo.

use std::{
    process::Command,
    time::{Duration, Instant},
};

use foo_operator::{CRD_YAML, Foo};
use k8s_openapi::api::{apps::v1::Deployment, coordination::v1::Lease};
use kube_core::params::PostParams;
use kubegen::client::ResourceClient;
use kubegen_testserver::TestServer;

mod support;

use support::{Replica, get};

const WAIT: Duration = Duration::from_secs(20);
const LOG: &str = "warn,kubegen::controller=debug";

fn start(kubeconfig: &std::path::Path, identity: &str) -> Replica {
    support::start(kubeconfig, identity, &[], LOG)
}

async fn until<F: Future<Output = bool>>(what: &str, check: impl FnMut() -> F) {
    support::until(what, WAIT, check).await;
}

/// Lines in which a replica reported a finished reconcile.
fn reconciles(replica: &Replica) -> Vec<(Instant, String)> {
    replica
        .log
        .lock()
        .iter()
        .filter(|(_, line)| line.contains("reconciled"))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_one_leader_and_a_takeover_on_sigterm() {
    let server = TestServer::start().await.expect("server");
    server.load_crd_yaml(CRD_YAML).expect("CRD");
    let dir = std::env::temp_dir().join(format!("foo-operator-replicas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let client = server.client().expect("client");

    // A slow server: the first replica's caches take a while to sync.
    server.set_delay(Some(Duration::from_millis(500)));
    let first = start(&kubeconfig, "replica-1");
    let (status, body) = get(&first.probes, "/readyz").await;
    assert_eq!(status, 503, "ready before its caches synced: {body}");
    server.set_delay(None);
    let second = start(&kubeconfig, "replica-2");
    for replica in [&first, &second] {
        until("/readyz 200", || async {
            get(&replica.probes, "/readyz").await.0 == 200
        })
        .await;
        let (status, metrics) = get(&replica.metrics, "/metrics").await;
        assert_eq!(status, 200);
        for series in [
            r#"workqueue_depth{name="foo-operator"}"#,
            r#"leader_election_master_status{name="foo-operator"}"#,
            r#"informer_store_item_total{name="samplecontroller.k8s.io/v1alpha1/foos"}"#,
        ] {
            assert!(
                metrics.contains(series),
                "{} lacks {series}:\n{metrics}",
                replica.identity
            );
        }
    }

    let leases = ResourceClient::<Lease>::namespaced(client.clone(), "default");
    let deadline = tokio::time::Instant::now() + WAIT;
    let holder = loop {
        let lease = leases.get("foo-operator").await.ok();
        let holder = lease
            .and_then(|l| l.spec?.holder_identity)
            .unwrap_or_default();
        if !holder.is_empty() {
            break holder;
        }
        assert!(tokio::time::Instant::now() < deadline, "no leader");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (mut leader, standby) = if holder == "replica-1" {
        (first, second)
    } else {
        (second, first)
    };

    let foos = ResourceClient::<Foo>::namespaced(client.clone(), "default");
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    foos.create(&PostParams::default(), &Foo::for_deployment("a", "a", 1))
        .await
        .expect("create");
    until("Deployment a", || async {
        deployments.get("a").await.is_ok()
    })
    .await;
    assert!(!reconciles(&leader).is_empty(), "the leader reconciled");
    let (_, metrics) = get(&leader.metrics, "/metrics").await;
    for series in [
        r#"controller_runtime_max_concurrent_reconciles{controller="foo-operator"} 2"#,
        r#"controller_runtime_reconcile_total{controller="foo-operator",result="success"}"#,
        r#"leader_election_master_status{name="foo-operator"} 1"#,
    ] {
        assert!(
            metrics.contains(series),
            "the leader lacks {series}:\n{metrics}"
        );
    }

    let signalled = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &leader.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let exit = tokio::task::spawn_blocking(move || {
        let status = leader.child.wait();
        (leader, status)
    })
    .await
    .expect("joined");
    let (_leader, status) = exit;
    assert!(
        status.expect("exit status").success(),
        "the leader exits 0 on SIGTERM"
    );

    foos.create(&PostParams::default(), &Foo::for_deployment("b", "b", 1))
        .await
        .expect("create");
    until("Deployment b", || async {
        deployments.get("b").await.is_ok()
    })
    .await;
    let standby_reconciles = reconciles(&standby);
    assert!(!standby_reconciles.is_empty(), "the standby took over");
    assert!(
        standby_reconciles.iter().all(|(at, _)| *at >= signalled),
        "the standby reconciled while the leader led: {standby_reconciles:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
