use std::time::Duration;

use kubegen_testserver::TestServer;
use kubegen_testserver::{FailRule, Verb};
use serde_json::json;

use crate::common::*;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn injected_failures_hit_the_next_matching_requests() {
    let (s, api) = server().await;
    s.fail(
        FailRule::on(Verb::List)
            .resource("configmaps")
            .code(429)
            .times(2)
            .retry_after(3),
    );
    let resp = api
        .http
        .get(format!("{}{CMS}", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 429);
    assert_eq!(resp.headers()["retry-after"], "3");
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(body["details"]["retryAfterSeconds"], 3);
    assert_eq!(
        api.get("/api/v1/namespaces/default/pods").await.0,
        200,
        "other resource"
    );
    assert_eq!(api.get(CMS).await.0, 429);
    assert_eq!(api.get(CMS).await.0, 200, "only two");
    s.fail(FailRule::any_verb().code(503));
    assert_eq!(api.post(CMS, &cm("a", json!({}))).await.0, 503);
    assert_eq!(
        api.get(&format!("{CMS}/a")).await.0,
        404,
        "failed create stored nothing"
    );
    s.fail(FailRule::on(Verb::Create).code(500));
    let (code, st) = api.post(CMS, &cm("a", json!({}))).await;
    assert_eq!((code, st["reason"].as_str()), (500, Some("InternalError")));
}

#[tokio::test]
async fn bearer_token_is_required_when_configured() {
    let s = TestServer::builder().token("secret").start().await.unwrap();
    let mut api = Api {
        base: s.url(),
        http: reqwest::Client::new(),
        token: None,
    };
    let (code, st) = api.get("/api/v1/namespaces").await;
    assert_eq!((code, st["reason"].as_str()), (401, Some("Unauthorized")));
    api.token = Some("wrong".into());
    assert_eq!(api.get("/api/v1/namespaces").await.0, 401);
    api.token = Some("secret".into());
    assert_eq!(api.get("/api/v1/namespaces").await.0, 200);
    assert!(s.kubeconfig().contains("token: secret"));
}

#[tokio::test]
async fn restart_drops_connections_but_keeps_state() {
    let (s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    let mut w = api.watch(&format!("{CMS}?watch=1&resourceVersion=0")).await;
    w.next_change().await.unwrap();
    s.restart();
    assert!(w.next().await.is_none(), "watch connection dropped");
    assert_eq!(api.get(&format!("{CMS}/a")).await.0, 200, "state kept");
}

#[tokio::test]
async fn delayed_responses_still_answer() {
    let (s, api) = server().await;
    s.set_delay(Some(Duration::from_millis(20)));
    assert_eq!(api.get(CMS).await.0, 200);
    s.set_delay(None);
}

#[tokio::test]
async fn compaction_makes_earlier_versions_gone() {
    let (s, api) = server().await;
    let (_, a) = api.post(CMS, &cm("a", json!({}))).await;
    api.post(CMS, &cm("b", json!({}))).await;
    s.compact();
    let mut w = api
        .watch(&format!("{CMS}?watch=1&resourceVersion={}", rv(&a)))
        .await;
    assert_eq!(w.next().await.unwrap()["object"]["code"], 410);
}

#[tokio::test]
async fn kubeconfig_file_points_at_the_server() {
    let (s, _api) = server().await;
    let dir = std::env::temp_dir().join(format!("kubegen-ts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kubeconfig");
    s.write_kubeconfig(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("server: {}", s.url())));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Over HTTP too: with a watch delivery delay, a watch event arrives late while the create
/// and get responses do not wait.
#[tokio::test]
async fn watch_delivery_delay_holds_events_over_http_but_not_responses() {
    let (s, api) = server().await;
    let mut w = api.watch(&format!("{CMS}?watch=1")).await;
    s.set_watch_delivery_delay(Some(Duration::from_millis(600)));
    let start = std::time::Instant::now();
    assert_eq!(api.post(CMS, &cm("a", json!({}))).await.0, 201);
    assert_eq!(api.get(&format!("{CMS}/a")).await.0, 200);
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "{:?}",
        start.elapsed()
    );
    let ev = w.next_change().await.unwrap();
    assert_eq!(ev["object"]["metadata"]["name"], "a");
    assert!(
        start.elapsed() >= Duration::from_millis(600),
        "{:?}",
        start.elapsed()
    );
}

/// Over HTTP: a stalled watch sends nothing past its timeoutSeconds; once the stall is
/// cleared it closes.
#[tokio::test]
async fn a_stalled_watch_stays_silent_over_http() {
    let (s, api) = server().await;
    let mut w = api.watch(&format!("{CMS}?watch=1&timeoutSeconds=1")).await;
    s.stall_watches(None);
    api.post(CMS, &cm("a", json!({}))).await;
    let silent = tokio::time::timeout(Duration::from_millis(1500), w.next()).await;
    assert!(silent.is_err(), "sent {silent:?} while stalled");
    s.resume_watches();
    assert_eq!(w.next_change().await.unwrap()["type"], "ADDED");
    assert!(w.next().await.is_none(), "closed after its timeout");
}
