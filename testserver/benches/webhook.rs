//! What a validating admission webhook adds to a create on the test server: the same
//! 1,000 ConfigMap creates against a server without webhooks and against one whose
//! ValidatingWebhookConfiguration sends every ConfigMap create to a `kubegen::webhook`
//! validator over TLS (a fresh connection per call, as kube-apiserver's webhook client
//! may), alternating rounds; medians of wall time and process CPU (the test server, the
//! webhook server and the HTTP client share the process; the client's share is the same in
//! both) and the ratio with / without.
//!
//! ```text
//! cargo bench -p kubegen-testserver --bench webhook     # ROUNDS=5 by default
//! ```

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use base64::Engine as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen::webhook::{Admission, Denied, Server, Validator, Warnings, validate_path};
use kubegen_testserver::{ClusterConfig, TestServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Creates a round makes, over `CONCURRENCY` connections.
const CREATES: usize = 1_000;
const CONCURRENCY: usize = 8;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The process's user + system CPU time (`/proc/self/stat` fields 14 and 15, in the
/// kernel's USER_HZ = 100 ticks a second).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // After the command name: field 3 (state) is index 0, so utime (14) is index 11.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Refuses ConfigMaps holding a `password` key; allows the rest.
struct NoPasswords;

impl Validator<ConfigMap> for NoPasswords {
    async fn validate_create(&self, cm: &ConfigMap) -> Result<Warnings, Denied> {
        match cm.data.as_ref().is_some_and(|d| d.contains_key("password")) {
            true => Err(Denied::new("passwords belong in Secrets")),
            false => Ok(Warnings::new()),
        }
    }
}

async fn server() -> TestServer {
    TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap()
}

/// Registers a ValidatingWebhookConfiguration for ConfigMap creates, calling `hooks`.
async fn register(server: &TestServer, hooks: &Server) {
    let addr = hooks.local_addr().unwrap();
    server.register_service("system", "webhook-service", 443, addr);
    let ca = base64::engine::general_purpose::STANDARD.encode(hooks.ca_bundle());
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "bench"},
        "webhooks": [{
            "name": "vconfigmap.bench.kubegen.io",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {
                "service": {"namespace": "system", "name": "webhook-service",
                    "path": validate_path::<ConfigMap>()},
                "caBundle": ca,
            },
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["configmaps"]}],
        }],
    });
    let response = reqwest::Client::new()
        .post(format!(
            "{}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            server.url()
        ))
        .bearer_auth(server.admin_token())
        .json(&config)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
}

/// One round against `server`: (wall, CPU) of `CREATES` creates.
async fn round(server: &TestServer, round: usize) -> (Duration, Duration) {
    let http = reqwest::Client::new();
    let base = format!("{}/api/v1/namespaces/default/configmaps", server.url());
    let token = server.admin_token().to_string();
    let (start, cpu_start) = (Instant::now(), cpu());
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|t| {
            let (http, base, token) = (http.clone(), base.clone(), token.clone());
            tokio::spawn(async move {
                for i in (t..CREATES).step_by(CONCURRENCY) {
                    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": format!("cm-{round}-{i}")}, "data": {"k": "v"}});
                    let r = http
                        .post(&base)
                        .bearer_auth(&token)
                        .json(&cm)
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(r.status(), 201);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    (start.elapsed(), cpu().saturating_sub(cpu_start))
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rounds = env("ROUNDS", 5);
    let plain = server().await;
    let hooked = server().await;
    let hooks = Server::builder()
        .address(([127, 0, 0, 1], 0).into())
        .self_signed(kubegen::webhook::certs::SelfSignedConfig::for_service(
            "webhook-service",
            "system",
        ))
        .admission(
            validate_path::<ConfigMap>(),
            Admission::validating::<ConfigMap, _>(NoPasswords),
        )
        .build()
        .unwrap();
    register(&hooked, &hooks).await;
    let stop = CancellationToken::new();
    let serving = tokio::spawn(hooks.run(stop.clone()));

    let (mut without, mut with) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        // Alternate which goes first, so drift on the machine falls on both.
        if r % 2 == 0 {
            without.push(round(&plain, r).await);
            with.push(round(&hooked, r).await);
        } else {
            with.push(round(&hooked, r).await);
            without.push(round(&plain, r).await);
        }
    }
    stop.cancel();
    let _ = serving.await;
    let wall = |v: &[(Duration, Duration)]| median(v.iter().map(|x| x.0).collect());
    let cpu = |v: &[(Duration, Duration)]| median(v.iter().map(|x| x.1).collect());
    println!(
        "{CREATES} ConfigMap creates over {CONCURRENCY} connections, median of {rounds} rounds:"
    );
    let per_create = |d: Duration| d.as_secs_f64() * 1e6 / CREATES as f64;
    for (what, a, b) in [
        ("wall", wall(&without), wall(&with)),
        ("CPU", cpu(&without), cpu(&with)),
    ] {
        println!(
            "  {what:5} without webhook {:8.1} ms ({:6.0} µs/create)   with a validating webhook {:8.1} ms ({:6.0} µs/create)   ratio {:.2}",
            a.as_secs_f64() * 1e3,
            per_create(a),
            b.as_secs_f64() * 1e3,
            per_create(b),
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}
