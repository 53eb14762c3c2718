//! The `Client` layer over an in-memory `Transport`: retries on 429/503 honouring
//! Retry-After, bounded and only when safe; client-side throttling; headers it adds.
#![allow(clippy::unwrap_used)] // test helpers may unwrap, like the tests

mod client_support;

use std::time::Duration;

use client_support::*;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::params::{ListParams, PostParams};
use kubegen::client::{Client, Credentials, ResourceClient};
use tokio::time::Instant;

fn mock(replies: Vec<Reply>) -> (std::sync::Arc<Script>, MockTransport) {
    let script = Script::new(replies);
    (script.clone(), MockTransport(script))
}

fn cm_json() -> serde_json::Value {
    serde_json::json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}})
}

fn cm() -> ConfigMap {
    let mut c = ConfigMap::default();
    c.metadata.name = Some("c".into());
    c
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_is_retried_after_the_servers_retry_after() {
    let (script, t) = mock(vec![
        Reply::status(429, "TooManyRequests").header("retry-after", "3"),
        Reply::status(429, "TooManyRequests").header("retry-after", "2"),
        Reply::json(200, cm_json()),
    ]);
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(Client::new(t));
    let start = Instant::now();
    cms.get("c").await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert_eq!(script.requests().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn retries_are_bounded_and_the_last_answer_is_returned() {
    let replies = (0..10)
        .map(|_| Reply::status(429, "TooManyRequests").header("retry-after", "1"))
        .collect();
    let (script, t) = mock(replies);
    let client = Client::builder(t).max_retries(3).build();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    let err = cms.get("c").await.unwrap_err();
    assert!(err.is_too_many_requests());
    assert_eq!(script.requests().len(), 4, "1 try + 3 retries");
}

#[tokio::test(start_paused = true)]
async fn unavailable_is_retried_for_idempotent_requests_only() {
    let (script, t) = mock(vec![
        Reply::status(503, "ServiceUnavailable"),
        Reply::json(200, cm_json()),
        Reply::status(503, "ServiceUnavailable"),
    ]);
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(Client::new(t));
    let start = Instant::now();
    cms.get("c").await.unwrap();
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(1),
        "no Retry-After: one second"
    );
    let err = cms.create(&PostParams::default(), &cm()).await.unwrap_err();
    assert!(err.is_service_unavailable());
    let methods: Vec<_> = script.requests().iter().map(|r| r.method.clone()).collect();
    assert_eq!(
        methods,
        ["GET", "GET", "POST"],
        "a POST is not repeated on 503"
    );
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_is_retried_even_for_create() {
    let (script, t) = mock(vec![
        Reply::status(429, "TooManyRequests").header("retry-after", "1"),
        Reply::json(201, cm_json()),
    ]);
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(Client::new(t));
    cms.create(&PostParams::default(), &cm()).await.unwrap();
    let reqs = script.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body, reqs[1].body, "the same body is sent again");
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_capped() {
    let (_script, t) = mock(vec![
        Reply::status(429, "TooManyRequests").header("retry-after", "100000"),
        Reply::json(200, cm_json()),
    ]);
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(Client::new(t));
    let start = Instant::now();
    cms.get("c").await.unwrap();
    assert_eq!(start.elapsed(), kubegen::client::MAX_RETRY_AFTER);
}

#[tokio::test(start_paused = true)]
async fn client_side_throttling_holds_requests_to_qps_after_the_burst() {
    let replies = (0..30).map(|_| Reply::json(200, cm_json())).collect();
    let (script, t) = mock(replies);
    let client = Client::builder(t).rate_limit(5.0, 10).build();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    let start = Instant::now();
    for _ in 0..10 {
        cms.get("c").await.unwrap();
    }
    assert_eq!(start.elapsed(), Duration::ZERO, "burst");
    for _ in 0..20 {
        cms.get("c").await.unwrap();
    }
    let e = start.elapsed();
    assert!(
        e >= Duration::from_millis(3999) && e <= Duration::from_millis(4001),
        "20 requests at 5 QPS take 4s, took {e:?}"
    );
    assert_eq!(script.requests().len(), 30);
}

#[tokio::test(start_paused = true)]
async fn negative_qps_disables_throttling() {
    let replies = (0..50).map(|_| Reply::json(200, cm_json())).collect();
    let (_script, t) = mock(replies);
    let client = Client::builder(t).rate_limit(-1.0, 10).build();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    let start = Instant::now();
    for _ in 0..50 {
        cms.get("c").await.unwrap();
    }
    assert_eq!(start.elapsed(), Duration::ZERO);
}

/// A default `Config` (what `Client::try_default()` builds) does not throttle: 50 requests
/// at once take no time, where client-go's 5 QPS / burst 10 would hold them for 8 s
/// (servers limit clients with API Priority and Fairness; controller-runtime's config
/// getters disable the client-side limiter since #3119). Opting in restores the limit.
#[tokio::test(start_paused = true)]
async fn the_default_config_does_not_throttle_and_client_gos_limit_is_an_opt_in() {
    let config = kubegen::client::Config::new("https://example.test:6443".parse().unwrap());
    for (config, expected) in [
        (config.clone(), Duration::ZERO),
        (
            config.with_rate_limit(kubegen::client::DEFAULT_QPS, kubegen::client::DEFAULT_BURST),
            Duration::from_secs(8),
        ),
    ] {
        let replies = (0..50).map(|_| Reply::json(200, cm_json())).collect();
        let (_script, t) = mock(replies);
        let client = Client::builder(t)
            .rate_limit(config.qps, config.burst)
            .build();
        let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
        let start = Instant::now();
        for _ in 0..50 {
            cms.get("c").await.unwrap();
        }
        let took = start.elapsed();
        assert!(
            took.abs_diff(expected) <= Duration::from_millis(1),
            "{took:?}, expected {expected:?}"
        );
    }
}

#[tokio::test]
async fn bearer_token_and_accept_headers_are_sent() {
    let (script, t) = mock(vec![Reply::json(
        200,
        serde_json::json!({"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[]}),
    )]);
    let client = Client::builder(t)
        .credentials(Credentials::Bearer("tok-123".to_string().into()))
        .build();
    let cms: ResourceClient<ConfigMap> = ResourceClient::all(client);
    cms.list(&ListParams::default()).await.unwrap();
    let r = &script.requests()[0];
    assert_eq!(r.header("authorization").as_deref(), Some("Bearer tok-123"));
    assert_eq!(r.header("accept").as_deref(), Some("application/json"));
    assert_eq!(r.uri, "/api/v1/configmaps?");
}

#[tokio::test]
async fn a_plain_401_is_not_retried_for_static_tokens() {
    let (script, t) = mock(vec![Reply::status(401, "Unauthorized")]);
    let client = Client::builder(t)
        .credentials(Credentials::Bearer("bad".to_string().into()))
        .build();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    assert!(cms.get("c").await.unwrap_err().is_unauthorized());
    assert_eq!(script.requests().len(), 1);
}

#[tokio::test]
async fn a_second_401_after_refreshing_credentials_is_returned() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "t").unwrap();
    let (script, t) = mock(vec![
        Reply::status(401, "Unauthorized"),
        Reply::status(401, "Unauthorized"),
        Reply::json(200, cm_json()),
    ]);
    let client = Client::builder(t)
        .credentials(Credentials::TokenFile(token))
        .build();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    assert!(cms.get("c").await.unwrap_err().is_unauthorized());
    assert_eq!(script.requests().len(), 2, "refreshed once, then gave up");
}
