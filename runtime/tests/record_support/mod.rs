//! Helpers the event recorder tests against the test server share (the core/v1 recorder's
//! `record_testserver` and the `events.k8s.io/v1` recorder's `record_events_testserver`):
//! an API server with a client, listing the Events written, and waiting for them.
#![allow(dead_code, clippy::unwrap_used)]

use std::time::Duration;

use kube_core::params::ListParams;
use kubegen::{
    client::{Client, ResourceClient},
    record::RecordedEvent,
};
use kubegen_testserver::{ClusterConfig, TestServer};

/// An API server alone (no cluster: these tests count every Event in the namespace and
/// fail event writes, which the cluster's controllers would also write and consume) and a
/// client for it.
pub async fn server_and_client() -> (TestServer, Client) {
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let client = server.client().unwrap();
    (server, client)
}

/// The Events (of type `E`: core/v1 or `events.k8s.io/v1`) in `default`, sorted by name.
pub async fn events<E: RecordedEvent>(client: &Client) -> Vec<E> {
    let api: ResourceClient<E> = ResourceClient::namespaced(client.clone(), "default");
    let mut items = api.list(&ListParams::default()).await.unwrap().items;
    items.sort_by(|a, b| a.meta().name.cmp(&b.meta().name));
    items
}

/// Polls [`events`] until `done` holds (10 s at most; then fails, saying `what`).
pub async fn until<E: RecordedEvent + std::fmt::Debug>(
    client: &Client,
    what: &str,
    done: impl Fn(&[E]) -> bool,
) -> Vec<E> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let evs = events(client).await;
        if done(&evs) {
            return evs;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what}: {evs:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
