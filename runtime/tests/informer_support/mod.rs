//! Helpers the informer tests against the test server share: a server with a client,
//! starting a factory until its caches have synced, and waiting for a condition.
#![allow(dead_code, clippy::unwrap_used)]

use std::time::Duration;

use kubegen::{client::Client, informers::SharedInformerFactory};
use kubegen_testserver::TestServer;
use tokio_util::sync::CancellationToken;

/// A running test server and a client for it.
pub async fn server_and_client() -> (TestServer, Client) {
    // An API server alone: these tests play the controllers themselves (they write
    // Deployment status, count every event), which the cluster's own controllers would
    // race (`testserver/tests/cluster.rs` tests those).
    let server = TestServer::builder()
        .cluster(kubegen_testserver::ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let client = server.client().unwrap();
    (server, client)
}

/// Starts every informer requested from `factory` and waits (10 s at most) until each has
/// synced.
pub async fn start_and_sync(factory: &SharedInformerFactory) {
    factory.start();
    let stop = CancellationToken::new();
    let result = tokio::time::timeout(Duration::from_secs(10), factory.wait_for_cache_sync(&stop))
        .await
        .expect("synced in time");
    assert!(result.values().all(|ok| *ok), "{result:?}");
}

/// Polls `check` until it holds; panics naming `what` after `within`.
pub async fn eventually(what: &str, within: Duration, mut check: impl FnMut() -> bool) {
    let held = tokio::time::timeout(within, async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(held.is_ok(), "timed out waiting for {what}");
}

/// A plain HTTP/1.1 GET (`http://host:port/path`), as a probe sends it.
pub async fn http_get(url: String) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("status line");
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, body.to_owned())
}

/// The ConfigMap `default/name` holding `k: v`.
pub fn cm(name: &str) -> k8s_openapi::api::core::v1::ConfigMap {
    k8s_openapi::api::core::v1::ConfigMap {
        metadata: kube_core::ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..kube_core::ObjectMeta::default()
        },
        data: Some(std::collections::BTreeMap::from([(
            "k".to_owned(),
            "v".to_owned(),
        )])),
        ..Default::default()
    }
}
