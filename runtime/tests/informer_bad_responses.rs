//! Bad input never loses data: after a healthy sync, the server's answers turn bad for a
//! while — a list page cut off mid-JSON, or a proxy's HTML error page served with status
//! 200 — for both the relist and the watch. Against the test server over HTTP; the
//! transport rewrites the responses. The informer reports each failure as a typed
//! [`ReflectorError`], keeps running, keeps every cached object the whole time, and once the
//! answers are good again it relists and catches up (client-go's reflector: a failed list
//! is retried with backoff, the store untouched until a list succeeds,
//! `tools/cache/reflector.go` `ListAndWatchWithContext`).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::cache::{
    BackoffConfig, InitialListStrategy, ListWatch, ReflectorConfig, ReflectorError,
    SharedIndexInformer, wait_for_cache_sync,
};
use kubegen::client::{
    Body, BoxFuture, Client, HttpTransport, ResourceClient, Transport, TransportError,
};
use kubegen_testserver::TestServer;
use tokio_util::sync::CancellationToken;

/// How a bad answer is made.
#[derive(Clone, Copy, Debug)]
enum Garble {
    /// The real body, cut in the middle (a connection closed mid-page).
    Truncated,
    /// A proxy's HTML error page with status 200.
    Html,
}

/// Forwards to the real transport; while `bad` is above zero, each GET's answer is
/// garbled (and `bad` counts down).
struct Garbling {
    inner: HttpTransport,
    bad: Arc<AtomicUsize>,
    how: Garble,
}

async fn collect(body: Body) -> Vec<u8> {
    let mut stream = body.into_stream();
    let mut out = Vec::new();
    // A watch never ends by itself: take what arrives within a moment.
    while let Ok(Some(Ok(chunk))) =
        tokio::time::timeout(Duration::from_millis(200), stream.next()).await
    {
        out.extend_from_slice(&chunk);
    }
    out
}

impl Transport for Garbling {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let garble = request.method() == http::Method::GET
            && self
                .bad
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
        let how = self.how;
        let response = self.inner.send(request);
        Box::pin(async move {
            let response = response.await?;
            if !garble {
                return Ok(response);
            }
            let (mut parts, body) = response.into_parts();
            let bytes = match how {
                Garble::Truncated => {
                    let mut all = collect(body).await;
                    all.truncate(all.len() / 2);
                    all
                }
                Garble::Html => {
                    parts.headers.insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static("text/html"),
                    );
                    b"<html><body><h1>502 Bad Gateway</h1></body></html>".to_vec()
                }
            };
            Ok(http::Response::from_parts(
                parts,
                Body::from_stream(futures::stream::iter([Ok(Bytes::from(bytes))])),
            ))
        })
    }
}

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some("default".into()),
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), name.to_owned())])),
        ..ConfigMap::default()
    }
}

async fn bad_answers_are_typed_errors_and_the_cache_is_kept(
    how: Garble,
    initial_list: InitialListStrategy,
) {
    let server = TestServer::start().await.unwrap();
    let config = server.config().unwrap();
    let bad = Arc::new(AtomicUsize::new(0));
    let transport = Garbling {
        inner: HttpTransport::new(&config).unwrap(),
        bad: bad.clone(),
        how,
    };
    let client = Client::builder(transport)
        .credentials(config.credentials.clone())
        .build();
    let api = ResourceClient::<ConfigMap>::namespaced(client, "default");
    for name in ["a", "b", "c", "d", "e"] {
        api.create(&PostParams::default(), &cm(name)).await.unwrap();
    }
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let reflector = ReflectorConfig {
        page_size: 2,
        initial_list,
        backoff: BackoffConfig {
            initial: Duration::from_millis(10),
            max: Duration::from_millis(50),
            ..BackoffConfig::default()
        },
        ..ReflectorConfig::default()
    };
    let informer = SharedIndexInformer::builder(ListWatch::new(api.clone()))
        .reflector(reflector)
        .watch_error_handler(Arc::new({
            let errors = errors.clone();
            move |e: &ReflectorError| {
                let kind = match e {
                    ReflectorError::List(_) => "list",
                    ReflectorError::Watch(_) => "watch",
                    ReflectorError::Decode(_) => "decode",
                    ReflectorError::StreamingListIncomplete => "incomplete",
                    _ => "other",
                };
                errors.lock().unwrap().push(format!("{kind}: {e}"));
            }
        }))
        .build();
    let stop = CancellationToken::new();
    let (informer, run) = informer.spawn(stop.clone());
    assert!(wait_for_cache_sync(&stop, &[&informer]).await);
    let synced = [
        "default/a",
        "default/b",
        "default/c",
        "default/d",
        "default/e",
    ];
    let keys = || {
        let mut k = informer.indexer().list_keys();
        k.sort();
        k
    };
    assert_eq!(keys(), synced);

    // Every GET answers badly for a while; the watch is cut and history compacted, so the
    // informer must relist through the bad answers.
    bad.store(6, Ordering::SeqCst);
    server.drop_watches();
    server.compact();
    api.create(&PostParams::default(), &cm("f")).await.unwrap();
    let watcher = {
        let informer = informer.clone();
        tokio::spawn(async move {
            // The cache never loses what it held, at any moment.
            let mut samples = 0;
            while !informer.is_stopped() {
                let held = informer.indexer().list_keys();
                for key in [
                    "default/a",
                    "default/b",
                    "default/c",
                    "default/d",
                    "default/e",
                ] {
                    assert!(held.iter().any(|k| k == key), "{key} lost: {held:?}");
                }
                samples += 1;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            samples
        })
    };
    let caught_up = tokio::time::timeout(Duration::from_secs(30), async {
        while !keys().iter().any(|k| k == "default/f") {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(
        caught_up.is_ok(),
        "{how:?}: caught up once answers were good: {:?}",
        errors.lock().unwrap()
    );
    assert_eq!(
        bad.load(Ordering::SeqCst),
        0,
        "every bad answer was consumed"
    );
    let mut expected = synced.to_vec();
    expected.push("default/f");
    assert_eq!(keys(), expected);
    let errors = errors.lock().unwrap().clone();
    // Each bad list answer is a typed decode failure of the list (never a panic, never
    // an empty list taken for the truth); a streaming list cut short says so, and falls
    // back to a paged list as client-go's reflector does.
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("list: list failed: decode")),
        "{how:?} {initial_list:?}: {errors:#?}"
    );
    if matches!(initial_list, InitialListStrategy::StreamingList) {
        assert!(
            errors.iter().any(|e| e.starts_with("incomplete")),
            "{how:?}: {errors:#?}"
        );
    }
    stop.cancel();
    run.await.unwrap();
    let samples = watcher.await.unwrap();
    assert!(samples > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_list_pages_are_typed_errors_and_the_cache_is_kept() {
    bad_answers_are_typed_errors_and_the_cache_is_kept(
        Garble::Truncated,
        InitialListStrategy::ListWatch,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_answers_to_a_paged_list_are_typed_errors_and_the_cache_is_kept() {
    bad_answers_are_typed_errors_and_the_cache_is_kept(
        Garble::Html,
        InitialListStrategy::ListWatch,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_streaming_lists_are_typed_errors_and_the_cache_is_kept() {
    bad_answers_are_typed_errors_and_the_cache_is_kept(
        Garble::Truncated,
        InitialListStrategy::StreamingList,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_answers_to_a_streaming_list_are_typed_errors_and_the_cache_is_kept() {
    bad_answers_are_typed_errors_and_the_cache_is_kept(
        Garble::Html,
        InitialListStrategy::StreamingList,
    )
    .await;
}
