use futures::StreamExt;
use kubegen::client::Transport;
use kubegen_testserver::{ApiError, InProcess};
use serde_json::{Value, json};

use crate::common::*;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn request(method: &str, path: &str, body: Option<Value>) -> http::Request<Vec<u8>> {
    http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())
        .unwrap()
}

async fn send(t: &InProcess, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let resp = t.send(request(method, path, body)).await.unwrap();
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn in_process_transport_shares_the_http_servers_state() {
    let (s, api) = server().await;
    let t = s.transport();
    let (code, _) = send(&t, "POST", CMS, Some(cm("a", json!({})))).await;
    assert_eq!(code, 201);
    assert_eq!(api.get(&format!("{CMS}/a")).await.0, 200);
    let (code, status) = send(&t, "GET", &format!("{CMS}/missing"), None).await;
    assert_eq!((code, status["reason"].as_str()), (404, Some("NotFound")));
}

#[tokio::test]
async fn action_log_records_verb_resource_namespace_name_subresource_and_body() {
    let t = InProcess::new();
    send(&t, "POST", CMS, Some(cm("a", json!({})))).await;
    send(&t, "GET", &format!("{CMS}/a"), None).await;
    send(&t, "GET", "/api/v1/configmaps", None).await;
    send(
        &t,
        "PUT",
        "/apis/apps/v1/namespaces/default/deployments/web/status",
        Some(json!({})),
    )
    .await;
    send(&t, "DELETE", &format!("{CMS}/a"), None).await;
    let actions = t.actions();
    let summary: Vec<(String, String, String, String, String)> = actions
        .iter()
        .map(|a| {
            (
                a.request.verb.to_string(),
                a.request.resource.clone(),
                a.request.namespace.clone(),
                a.request.name.clone(),
                a.request.subresource.clone(),
            )
        })
        .collect();
    let s = |a: &str, b: &str, c: &str, d: &str, e: &str| {
        (a.into(), b.into(), c.into(), d.into(), e.into())
    };
    assert_eq!(
        summary,
        vec![
            s("create", "configmaps", "default", "", ""),
            s("get", "configmaps", "default", "a", ""),
            s("list", "configmaps", "", "", ""),
            s("update", "deployments", "default", "web", "status"),
            s("delete", "configmaps", "default", "a", ""),
        ]
    );
    assert_eq!(actions[0].body.as_ref().unwrap()["metadata"]["name"], "a");
    t.clear_actions();
    assert!(t.actions().is_empty());
}

#[tokio::test]
async fn reactors_answer_or_fall_through() {
    let t = InProcess::new();
    t.prepend_reactor("create", "configmaps", |a| {
        if a.body
            .as_ref()
            .is_some_and(|b| b["metadata"]["name"] == "forbidden")
        {
            Some(Err(ApiError::forbidden("no")))
        } else {
            None
        }
    });
    t.prepend_reactor("get", "secrets", |_| {
        Some(Ok(json!({"kind": "Secret", "metadata": {"name": "fake"}})))
    });
    assert_eq!(
        send(&t, "POST", CMS, Some(cm("forbidden", json!({}))))
            .await
            .0,
        403
    );
    assert_eq!(
        send(&t, "POST", CMS, Some(cm("fine", json!({})))).await.0,
        201,
        "fell through"
    );
    let (code, obj) = send(
        &t,
        "GET",
        "/api/v1/namespaces/default/secrets/anything",
        None,
    )
    .await;
    assert_eq!(
        (code, obj["metadata"]["name"].as_str()),
        (200, Some("fake"))
    );
    assert_eq!(
        send(&t, "GET", &format!("{CMS}/forbidden"), None).await.0,
        404,
        "nothing stored"
    );
}

#[tokio::test]
async fn in_process_watch_streams_events() {
    let t = InProcess::new();
    let resp = t
        .send(request("GET", &format!("{CMS}?watch=true"), None))
        .await
        .unwrap();
    let mut body = resp.into_body().into_stream();
    send(&t, "POST", CMS, Some(cm("a", json!({})))).await;
    let chunk = body.next().await.unwrap().unwrap();
    let ev: Value = serde_json::from_slice(&chunk).unwrap();
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["metadata"]["name"], "a");
}

async fn next_event(
    body: &mut futures::stream::BoxStream<
        'static,
        Result<bytes::Bytes, kubegen::client::TransportError>,
    >,
) -> Option<Value> {
    body.next()
        .await
        .map(|chunk| serde_json::from_slice(&chunk.unwrap()).unwrap())
}

#[tokio::test(start_paused = true)]
async fn watch_timeout_and_bookmarks_follow_the_clock() {
    let t = InProcess::with_config(
        kubegen_testserver::EngineConfig::default()
            .bookmark_interval(std::time::Duration::from_secs(60)),
    );
    let (_, a) = send(&t, "POST", CMS, Some(cm("a", json!({})))).await;
    let rv = a["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let resp = t
        .send(request(
            "GET",
            &format!(
                "{CMS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=150&resourceVersion={rv}"
            ),
            None,
        ))
        .await
        .unwrap();
    let mut body = resp.into_body().into_stream();
    let start = tokio::time::Instant::now();
    // two bookmarks (at 60s and 120s of virtual time), then the 150s timeout ends the stream
    let b1 = next_event(&mut body).await.unwrap();
    assert_eq!(b1["type"], "BOOKMARK");
    assert_eq!(b1["object"]["metadata"]["resourceVersion"], rv);
    assert_eq!(start.elapsed().as_secs(), 60);
    assert_eq!(next_event(&mut body).await.unwrap()["type"], "BOOKMARK");
    assert!(next_event(&mut body).await.is_none());
    assert_eq!(start.elapsed().as_secs(), 150);
}

#[tokio::test(start_paused = true)]
async fn injected_delay_holds_the_response_for_the_configured_time() {
    let t = InProcess::new();
    t.shared()
        .faults
        .set_delay(Some(std::time::Duration::from_secs(5)));
    let start = tokio::time::Instant::now();
    assert_eq!(send(&t, "GET", CMS, None).await.0, 200);
    assert_eq!(start.elapsed().as_secs(), 5);
}

async fn open_watch(
    t: &InProcess,
    query: &str,
) -> futures::stream::BoxStream<'static, Result<bytes::Bytes, kubegen::client::TransportError>> {
    let resp = t
        .send(request("GET", &format!("{CMS}?watch=true&{query}"), None))
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    resp.into_body().into_stream()
}

/// The "stall" fault: a watch that stays open and sends nothing — no events, no
/// bookmarks, not even its close at `timeoutSeconds` — as a client behind a half-dead
/// connection sees it (kube-rs #1945). Other requests and new watches are served; when the
/// stall is cleared the watch delivers what it held back and then closes (its timeout has
/// passed).
#[tokio::test(start_paused = true)]
async fn a_stalled_watch_sends_nothing_not_even_its_close_until_cleared() {
    use std::time::Duration;
    let t = InProcess::with_config(
        kubegen_testserver::EngineConfig::default().bookmark_interval(Duration::from_secs(10)),
    );
    let mut body = open_watch(&t, "allowWatchBookmarks=true&timeoutSeconds=30").await;
    t.shared().faults.stall_watches(None);
    assert_eq!(send(&t, "POST", CMS, Some(cm("a", json!({})))).await.0, 201);
    assert_eq!(send(&t, "GET", &format!("{CMS}/a"), None).await.0, 200);
    assert!(
        tokio::time::timeout(Duration::from_secs(3600), body.next())
            .await
            .is_err(),
        "a stalled watch sent something"
    );
    // A watch opened during the stall is served (only the open connections hang).
    let mut late = open_watch(&t, "resourceVersion=0").await;
    let ev = next_event(&mut late).await.unwrap();
    assert_eq!(
        (
            ev["type"].as_str(),
            ev["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("a"))
    );
    t.shared().faults.resume_watches();
    let mut types = Vec::new();
    while let Some(ev) = next_event(&mut body).await {
        types.push(ev["type"].as_str().unwrap().to_string());
    }
    assert!(types.contains(&"ADDED".to_string()), "{types:?}");
}

/// A stall for a duration ends by itself: the held event arrives when it is over.
#[tokio::test(start_paused = true)]
async fn a_timed_stall_delivers_when_it_ends() {
    use std::time::Duration;
    let t = InProcess::new();
    let mut body = open_watch(&t, "").await;
    t.shared()
        .faults
        .stall_watches(Some(Duration::from_secs(5)));
    let start = tokio::time::Instant::now();
    send(&t, "POST", CMS, Some(cm("a", json!({})))).await;
    assert_eq!(next_event(&mut body).await.unwrap()["type"], "ADDED");
    assert_eq!(start.elapsed(), Duration::from_secs(5));
}

/// The "delay delivery" fault: watch events arrive late by the delay, in order; the
/// responses to creates and gets are not delayed.
#[tokio::test(start_paused = true)]
async fn delayed_delivery_holds_watch_events_but_not_responses() {
    use std::time::Duration;
    let t = InProcess::new();
    let mut body = open_watch(&t, "").await;
    t.shared()
        .faults
        .set_watch_delivery_delay(Some(Duration::from_secs(2)));
    let start = tokio::time::Instant::now();
    assert_eq!(send(&t, "POST", CMS, Some(cm("a", json!({})))).await.0, 201);
    assert_eq!(send(&t, "POST", CMS, Some(cm("b", json!({})))).await.0, 201);
    assert_eq!(send(&t, "GET", &format!("{CMS}/a"), None).await.0, 200);
    assert_eq!(send(&t, "GET", CMS, None).await.0, 200);
    assert_eq!(start.elapsed(), Duration::ZERO, "responses are not delayed");
    let a = next_event(&mut body).await.unwrap();
    assert_eq!(a["object"]["metadata"]["name"], "a");
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    let b = next_event(&mut body).await.unwrap();
    assert_eq!(b["object"]["metadata"]["name"], "b");
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    t.shared().faults.set_watch_delivery_delay(None);
    let later = tokio::time::Instant::now();
    send(&t, "POST", CMS, Some(cm("c", json!({})))).await;
    assert_eq!(
        next_event(&mut body).await.unwrap()["object"]["metadata"]["name"],
        "c"
    );
    assert_eq!(later.elapsed(), Duration::ZERO);
}
