//! A malformed watch event, against the test server over HTTP: the transport rewrites one
//! event on the wire into JSON that does not decode as a ConfigMap. The informer reports
//! it, skips it, keeps watching without relisting, and its cache keeps everything else.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    cache::{
        ListWatch, ReflectorError, ResourceEventHandler, SharedIndexInformer, meta_namespace_key,
        namespace_indexers, wait_for_cache_sync,
    },
    client::{Body, BoxFuture, Client, HttpTransport, ResourceClient, Transport, TransportError},
};
use kubegen_testserver::TestServer;
use tokio_util::sync::CancellationToken;

/// What a watch line naming `poison` is replaced with: valid JSON, but `metadata.name`
/// is a number, so it does not decode as a ConfigMap.
const POISONED: &[u8] =
    br#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":42}}}"#;

/// Forwards to the real transport; in watch responses, replaces every line mentioning the
/// object `poison` with [`POISONED`], and records the path and query of every GET.
struct Poisoning {
    inner: HttpTransport,
    gets: Arc<Mutex<Vec<String>>>,
}

fn rewrite(lines: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines.split_inclusive(|b| *b == b'\n') {
        if line.windows(8).any(|w| w == b"\"poison\"") {
            out.extend_from_slice(POISONED);
            out.push(b'\n');
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

/// Re-chunks `body` at line ends (so a line is never split) and rewrites each line.
fn poison(body: Body) -> Body {
    let state = (body.into_stream(), Vec::<u8>::new());
    Body::from_stream(futures::stream::unfold(
        state,
        |(mut chunks, mut buf)| async move {
            loop {
                match chunks.next().await {
                    Some(Ok(chunk)) => {
                        buf.extend_from_slice(&chunk);
                        if let Some(end) = buf.iter().rposition(|b| *b == b'\n') {
                            let rest = buf.split_off(end + 1);
                            let lines = std::mem::replace(&mut buf, rest);
                            return Some((Ok(Bytes::from(rewrite(&lines))), (chunks, buf)));
                        }
                    }
                    Some(Err(e)) => return Some((Err(e), (chunks, buf))),
                    None if buf.is_empty() => return None,
                    None => {
                        let rest = rewrite(&std::mem::take(&mut buf));
                        return Some((Ok(Bytes::from(rest)), (chunks, buf)));
                    }
                }
            }
        },
    ))
}

impl Transport for Poisoning {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let uri = request.uri().to_string();
        let watch = uri.contains("watch=true");
        if request.method() == http::Method::GET {
            self.gets.lock().unwrap().push(uri);
        }
        let response = self.inner.send(request);
        Box::pin(async move {
            let response = response.await?;
            if !watch {
                return Ok(response);
            }
            let (parts, body) = response.into_parts();
            Ok(http::Response::from_parts(parts, poison(body)))
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

/// Records the keys of added objects.
#[derive(Clone, Default)]
struct Adds(Arc<Mutex<Vec<String>>>);

impl ResourceEventHandler<ConfigMap> for Adds {
    fn on_add(&self, obj: &Arc<ConfigMap>, _: bool) {
        let key = meta_namespace_key(obj.as_ref()).unwrap();
        self.0.lock().unwrap().push(key);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_watch_event_is_skipped_and_the_informer_keeps_its_cache_and_watch() {
    let server = TestServer::start().await.unwrap();
    let config = server.config().unwrap();
    let gets = Arc::new(Mutex::new(Vec::new()));
    let transport = Poisoning {
        inner: HttpTransport::new(&config).unwrap(),
        gets: gets.clone(),
    };
    let client = Client::builder(transport)
        .credentials(config.credentials.clone())
        .rate_limit(-1.0, 0)
        .build();
    let api = ResourceClient::<ConfigMap>::namespaced(client, "default");
    for name in ["a", "b"] {
        api.create(&PostParams::default(), &cm(name)).await.unwrap();
    }

    let decode_errors = Arc::new(Mutex::new(0usize));
    let informer = SharedIndexInformer::builder(ListWatch::new(api.clone()))
        .indexers(namespace_indexers())
        .watch_error_handler(Arc::new({
            let decode_errors = decode_errors.clone();
            move |e: &ReflectorError| {
                if matches!(e, ReflectorError::Decode(_)) {
                    *decode_errors.lock().unwrap() += 1;
                }
            }
        }))
        .build();
    let adds = Adds::default();
    informer.add_event_handler(adds.clone()).unwrap();
    let stop = CancellationToken::new();
    let (informer, run) = informer.spawn(stop.clone());
    assert!(wait_for_cache_sync(&stop, &[&informer]).await);

    api.create(&PostParams::default(), &cm("poison"))
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("c")).await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(10), async {
        while !adds.0.lock().unwrap().iter().any(|k| k == "default/c") {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(seen.is_ok(), "the event after the malformed one arrives");

    assert_eq!(
        *decode_errors.lock().unwrap(),
        1,
        "the bad event is reported"
    );
    let mut keys = informer.indexer().list_keys();
    keys.sort();
    assert_eq!(keys, ["default/a", "default/b", "default/c"]);
    let mut added = adds.0.lock().unwrap().clone();
    added.sort();
    assert_eq!(added, ["default/a", "default/b", "default/c"]);
    let gets = gets.lock().unwrap().clone();
    let lists = gets.iter().filter(|u| !u.contains("watch=true")).count();
    let watches = gets.len() - lists;
    // The default streaming list is the one watch: no list, no relist, no re-watch.
    assert_eq!((lists, watches), (0, 1), "no relist, no re-watch: {gets:?}");
    stop.cancel();
    run.await.unwrap();
}
