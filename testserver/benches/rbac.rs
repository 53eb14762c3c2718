//! What authorization by RBAC costs the test server: the same HTTP requests, by the same
//! (non-admin) user, against a server with `--authorization-mode=AlwaysAllow` and one with
//! `RBAC`, alternating rounds, medians and the ratio RBAC / AlwaysAllow.
//!
//! The RBAC server holds a realistic policy: the bootstrap roles and bindings, plus
//! `BINDINGS` ClusterRoleBindings and as many RoleBindings spread over namespaces for
//! other users; the user is allowed by a RoleBinding in its namespace (the last place
//! kube-apiserver's rule resolver looks, after every ClusterRoleBinding). Members of
//! `system:masters` pass before RBAC is asked, so the user is not one.
//!
//! ```text
//! cargo bench -p kubegen-testserver --bench rbac        # ROUNDS=5, BINDINGS=100 by default
//! ```

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use kubegen_testserver::{AuthConfig, ClusterConfig, TestServer, UserInfo};
use serde_json::json;

/// Requests a round makes of each kind, over `CONCURRENCY` connections.
const REQUESTS: usize = 4_000;
const CONCURRENCY: usize = 8;
const TOKEN: &str = "bench-user-token";

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn server(rbac: bool, bindings: usize) -> TestServer {
    let mut auth = AuthConfig::default().token(TOKEN, UserInfo::new("bench", ["benchers"]));
    if rbac {
        auth = auth.rbac();
    }
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .auth(auth)
        .start()
        .await
        .unwrap();
    let admin = reqwest::Client::new();
    let post = |path: String, body: serde_json::Value| {
        let admin = admin.clone();
        let url = format!("{}{path}", server.url());
        let token = server.admin_token().to_string();
        async move {
            let response = admin
                .post(url)
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success(), "{}", response.status());
        }
    };
    let rbac_api = "/apis/rbac.authorization.k8s.io/v1";
    for i in 0..bindings {
        post(
            "/api/v1/namespaces".into(),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("team-{i}")}}),
        )
        .await;
        post(
            format!("{rbac_api}/clusterrolebindings"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": format!("viewers-{i}")},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "User", "name": format!("someone-{i}")}]}),
        )
        .await;
        post(
            format!("{rbac_api}/namespaces/team-{i}/rolebindings"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "editors"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
                "subjects": [{"kind": "Group", "name": format!("team-{i}")}]}),
        )
        .await;
    }
    post(
        format!("{rbac_api}/namespaces/default/rolebindings"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "bench"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"kind": "User", "name": "bench"}]}),
    )
    .await;
    server
}

/// `REQUESTS` requests made by `make(i)` over `CONCURRENCY` tasks; the wall time.
async fn timed<F, Fut>(make: F) -> Duration
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let start = Instant::now();
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|t| {
            let make = make.clone();
            tokio::spawn(async move {
                for i in (t..REQUESTS).step_by(CONCURRENCY) {
                    make(i).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    start.elapsed()
}

/// One round against `server`: creates, gets and lists per second.
async fn round(server: &TestServer, round: usize) -> [f64; 3] {
    let http = reqwest::Client::new();
    let base = format!("{}/api/v1/namespaces/default/configmaps", server.url());
    let create = {
        let (http, base) = (http.clone(), base.clone());
        move |i: usize| {
            let (http, base) = (http.clone(), base.clone());
            async move {
                let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{round}-{i}")}, "data": {"k": "v"}});
                let r = http
                    .post(&base)
                    .bearer_auth(TOKEN)
                    .json(&cm)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 201);
            }
        }
    };
    let get = {
        let (http, base) = (http.clone(), base.clone());
        move |i: usize| {
            let (http, base) = (http.clone(), base.clone());
            async move {
                let r = http
                    .get(format!("{base}/cm-{round}-{i}"))
                    .bearer_auth(TOKEN)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
                let _ = r.bytes().await.unwrap();
            }
        }
    };
    let list = {
        let (http, base) = (http.clone(), base.clone());
        move |_: usize| {
            let (http, base) = (http.clone(), base.clone());
            async move {
                let r = http
                    .get(format!("{base}?limit=10"))
                    .bearer_auth(TOKEN)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
                let _ = r.bytes().await.unwrap();
            }
        }
    };
    let per_second = |d: Duration| REQUESTS as f64 / d.as_secs_f64();
    [
        per_second(timed(create).await),
        per_second(timed(get).await),
        per_second(timed(list).await),
    ]
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rounds = env("ROUNDS", 5);
    let bindings = env("BINDINGS", 100);
    let off = server(false, bindings).await;
    let on = server(true, bindings).await;
    let (mut off_rates, mut on_rates) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        // Alternate which goes first, so drift on the machine falls on both.
        if r % 2 == 0 {
            off_rates.push(round(&off, r).await);
            on_rates.push(round(&on, r).await);
        } else {
            on_rates.push(round(&on, r).await);
            off_rates.push(round(&off, r).await);
        }
    }
    println!(
        "RBAC vs AlwaysAllow, {REQUESTS} requests per kind per round over {CONCURRENCY} connections, \
         {bindings} extra ClusterRoleBindings and RoleBindings, median of {rounds} rounds:"
    );
    for (i, kind) in ["creates", "gets", "lists (limit=10)"].iter().enumerate() {
        let off = median(off_rates.iter().map(|r| r[i]).collect());
        let on = median(on_rates.iter().map(|r| r[i]).collect());
        println!(
            "  {kind:18} AlwaysAllow {off:8.0}/s   RBAC {on:8.0}/s   ratio {:.2}",
            on / off
        );
    }
}
