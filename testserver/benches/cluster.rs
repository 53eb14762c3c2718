//! What a test on the cluster in a process costs (issue 38's figures):
//!
//! 1. a 3-replica Deployment reaching Available after `kubectl create deployment`, timed
//!    as a user sees it: `kubectl create` then `kubectl rollout status` against a
//!    `TestServer` with the default pod start latency (median of rounds);
//! 2. 1,000 pods across 100 Deployments (10 replicas each) reaching Running on 10 nodes,
//!    created through the in-process front: wall time, and the process's CPU time (server,
//!    controllers and the polling client together, from `/proc/self/stat`).
//!
//! ```text
//! cargo bench -p kubegen-testserver --bench cluster            # ROUNDS=5 by default
//! ```

#![allow(clippy::unwrap_used, clippy::print_stdout)] // a benchmark: a failure is a failed run

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
use kubegen::client::{
    Client, ResourceClient,
    params::{ListParams, PostParams},
};
use kubegen_testserver::{ClusterConfig, TestServer};
use serde_json::json;

/// User plus system CPU time of this process so far (Linux `/proc/self/stat`, in
/// `USER_HZ` = 100 ticks per second).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse().ok())
        .collect();
    Duration::from_millis(fields.iter().sum::<u64>() * 10)
}

fn kubectl(kubeconfig: &Path, args: &[&str]) {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn deployment_available(round: usize) -> Duration {
    let server = TestServer::start().await.unwrap();
    let dir = std::env::temp_dir().join(format!(
        "kubegen-bench-cluster-{}-{round}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let started = Instant::now();
    let kc = kubeconfig.clone();
    tokio::task::spawn_blocking(move || {
        kubectl(
            &kc,
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx",
                "--replicas=3",
            ],
        );
        kubectl(
            &kc,
            &["rollout", "status", "deployment/web", "--timeout=120s"],
        );
    })
    .await
    .unwrap();
    let took = started.elapsed();
    let _ = std::fs::remove_dir_all(&dir);
    took
}

async fn thousand_pods() -> (Duration, Duration) {
    // Ten nodes: a node takes 110 pods (the kubelet's `maxPods`), so three would leave
    // 670 of the 1,000 pods Pending.
    let server = TestServer::builder()
        .cluster(ClusterConfig::default().nodes(10))
        .start()
        .await
        .unwrap();
    let client = Client::new(server.transport());
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    let pods = ResourceClient::<Pod>::namespaced(client, "default");
    let (wall, cpu) = (Instant::now(), cpu_time());
    for i in 0..100 {
        let name = format!("app-{i}");
        let d: Deployment = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"replicas": 10, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}},
        }))
        .unwrap();
        deployments
            .create(&PostParams::default(), &d)
            .await
            .unwrap();
    }
    loop {
        let list = pods.list(&ListParams::default()).await.unwrap();
        let running = list
            .items
            .iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .count();
        if running >= 1000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (wall.elapsed(), cpu_time().saturating_sub(cpu))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let mut available = Vec::new();
    for round in 0..rounds {
        available.push(deployment_available(round).await);
    }
    println!(
        "3-replica Deployment Available after kubectl create (default latency): median {:.2} s over {rounds} rounds ({:?})",
        median(available.clone()).as_secs_f64(),
        available
            .iter()
            .map(|d| format!("{:.2}", d.as_secs_f64()))
            .collect::<Vec<_>>()
    );
    let (wall, cpu) = thousand_pods().await;
    println!(
        "1,000 pods over 100 Deployments Running: wall {:.1} s, process CPU {:.1} s",
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
}
