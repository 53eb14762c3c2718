use std::time::Duration;

use kubegen_testserver::EngineConfig;
use serde_json::json;

use crate::common::*;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn watch_from_zero_starts_with_current_state_as_added() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    let mut w = api
        .watch(&format!("{CMS}?watch=true&resourceVersion=0"))
        .await;
    let ev = w.next_change().await.unwrap();
    assert_eq!(
        (
            ev["type"].as_str(),
            ev["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("a"))
    );
    api.post(CMS, &cm("b", json!({}))).await;
    let ev = w.next_change().await.unwrap();
    assert_eq!(ev["object"]["metadata"]["name"], "b");
    let mut legacy = api
        .watch("/api/v1/watch/namespaces/default/configmaps")
        .await;
    assert_eq!(legacy.next_change().await.unwrap()["type"], "ADDED");
}

#[tokio::test]
async fn watch_resumes_after_a_resource_version() {
    let (_s, api) = server().await;
    let (_, a) = api.post(CMS, &cm("a", json!({}))).await;
    let mut upd = a.clone();
    upd["data"]["k"] = json!("2");
    api.put(&format!("{CMS}/a"), &upd).await;
    api.delete(&format!("{CMS}/a"), None).await;
    let mut w = api
        .watch(&format!("{CMS}?watch=1&resourceVersion={}", rv(&a)))
        .await;
    let e1 = w.next_change().await.unwrap();
    let e2 = w.next_change().await.unwrap();
    assert_eq!(e1["type"], "MODIFIED");
    assert_eq!(e2["type"], "DELETED");
    assert!(rv(&e2["object"]) > rv(&e1["object"]));
}

#[tokio::test]
async fn watch_from_a_compacted_version_gets_410_error_event() {
    let (_s, api) = server_with(EngineConfig::default().history_limit(2)).await;
    let (_, a) = api.post(CMS, &cm("a", json!({}))).await;
    for i in 0..4 {
        api.post(CMS, &cm(&format!("x{i}"), json!({}))).await;
    }
    let mut w = api
        .watch(&format!("{CMS}?watch=1&resourceVersion={}", rv(&a)))
        .await;
    let ev = w.next().await.unwrap();
    assert_eq!(ev["type"], "ERROR");
    assert_eq!(ev["object"]["kind"], "Status");
    assert_eq!(ev["object"]["code"], 410);
    assert!(matches!(
        ev["object"]["reason"].as_str(),
        Some("Expired") | Some("Gone")
    ));
    assert!(w.next().await.is_none(), "stream ends after the error");
}

#[tokio::test]
async fn selector_transitions_arrive_as_deleted_and_added() {
    let (_s, api) = server().await;
    let (_, a) = api.post(CMS, &cm("a", json!({"app": "web"}))).await;
    let mut w = api
        .watch(&format!(
            "{CMS}?watch=1&labelSelector=app%3Dweb&resourceVersion={}",
            rv(&a)
        ))
        .await;
    let mut off = a.clone();
    off["metadata"]["labels"] = json!({"app": "db"});
    let (_, off) = api.put(&format!("{CMS}/a"), &off).await;
    let ev = w.next_change().await.unwrap();
    assert_eq!(ev["type"], "DELETED");
    assert_eq!(
        ev["object"]["metadata"]["labels"]["app"], "web",
        "previous state"
    );
    assert_eq!(
        ev["object"]["metadata"]["resourceVersion"],
        off["metadata"]["resourceVersion"]
    );
    let mut on = off.clone();
    on["metadata"]["labels"] = json!({"app": "web"});
    api.put(&format!("{CMS}/a"), &on).await;
    assert_eq!(w.next_change().await.unwrap()["type"], "ADDED");
    api.post(CMS, &cm("other", json!({"app": "db"}))).await;
    api.post(CMS, &cm("match", json!({"app": "web"}))).await;
    let ev = w.next_change().await.unwrap();
    assert_eq!(
        ev["object"]["metadata"]["name"], "match",
        "non-matching objects are filtered"
    );
}

#[tokio::test]
async fn bookmarks_arrive_when_allowed() {
    let (_s, api) = server().await;
    let (_, a) = api.post(CMS, &cm("a", json!({}))).await;
    let mut w = api
        .watch(&format!(
            "{CMS}?watch=1&allowWatchBookmarks=true&resourceVersion={}",
            rv(&a)
        ))
        .await;
    let ev = w.next().await.unwrap();
    assert_eq!(ev["type"], "BOOKMARK");
    assert_eq!(ev["object"]["kind"], "ConfigMap");
    assert!(rv(&ev["object"]) >= rv(&a));
}

#[tokio::test]
async fn send_initial_events_ends_with_annotated_bookmark() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    api.post(CMS, &cm("b", json!({}))).await;
    let mut w = api
        .watch(&format!(
            "{CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        ))
        .await;
    assert_eq!(w.next().await.unwrap()["type"], "ADDED");
    assert_eq!(w.next().await.unwrap()["type"], "ADDED");
    let end = w.next().await.unwrap();
    assert_eq!(end["type"], "BOOKMARK");
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    let (code, status) = api
        .get(&format!(
            "{CMS}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
        ))
        .await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
}

#[tokio::test]
async fn timeout_seconds_ends_the_watch() {
    let (_s, api) = server().await;
    let mut w = api.watch(&format!("{CMS}?watch=1&timeoutSeconds=1")).await;
    assert!(w.next().await.is_none());
}

#[tokio::test]
async fn dropping_watches_ends_open_streams() {
    let (s, api) = server().await;
    let mut w = api.watch(&format!("{CMS}?watch=1")).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.drop_watches();
    assert!(w.next().await.is_none());
}

#[tokio::test]
async fn watch_of_a_single_object_by_name() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    api.post(CMS, &cm("b", json!({}))).await;
    let mut w = api
        .watch(&format!("{CMS}?watch=1&fieldSelector=metadata.name%3Db"))
        .await;
    let ev = w.next_change().await.unwrap();
    assert_eq!(ev["object"]["metadata"]["name"], "b");
}
