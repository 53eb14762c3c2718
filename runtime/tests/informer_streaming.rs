//! Streaming lists (`sendInitialEvents`) against the test server over HTTP: the informer
//! syncs from the initial events, completes at the `k8s.io/initial-events-end` bookmark,
//! never asks for initial events again when a watch resumes, and lists instead when the
//! server refuses streaming.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    cache::{
        BackoffConfig, InitialListStrategy, ListWatch, ReflectorConfig, ResourceEventHandler,
        SharedIndexInformer, meta_namespace_key, namespace_indexers, wait_for_cache_sync,
    },
    client::{Body, BoxFuture, Client, HttpTransport, ResourceClient, Transport, TransportError},
};
use kubegen_testserver::{FailRule, Verb};
use kubegen_testserver::{TestServer, bench::collection};
use tokio_util::sync::CancellationToken;

mod informer_support;

use informer_support::eventually;

/// Forwards to the real transport and records the path and query of every GET (lists and
/// watches).
struct Recording {
    inner: HttpTransport,
    uris: Arc<Mutex<Vec<String>>>,
}

impl Transport for Recording {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        if request.method() == http::Method::GET {
            self.uris.lock().unwrap().push(request.uri().to_string());
        }
        self.inner.send(request)
    }
}

/// A client for `server` whose requests are recorded in the returned log.
fn recording_client(server: &TestServer) -> (Client, Arc<Mutex<Vec<String>>>) {
    let config = server.config().unwrap();
    let uris = Arc::new(Mutex::new(Vec::new()));
    let transport = Recording {
        inner: HttpTransport::new(&config).unwrap(),
        uris: uris.clone(),
    };
    let client = Client::builder(transport)
        .credentials(config.credentials.clone())
        .rate_limit(-1.0, 0)
        .build();
    (client, uris)
}

fn is_watch(uri: &str) -> bool {
    uri.contains("watch=true") || uri.contains("watch=1")
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

/// Records every notification as a line: `add default/a initial`, `update default/a unchanged`.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl ResourceEventHandler<ConfigMap> for Log {
    fn on_add(&self, obj: &Arc<ConfigMap>, initial: bool) {
        let key = meta_namespace_key(obj.as_ref()).unwrap();
        let suffix = if initial { " initial" } else { "" };
        self.0.lock().unwrap().push(format!("add {key}{suffix}"));
    }
    fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        let key = meta_namespace_key(new.as_ref()).unwrap();
        let same = if old == new { " unchanged" } else { "" };
        self.0.lock().unwrap().push(format!("update {key}{same}"));
    }
}

impl Log {
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    async fn wait_for(&self, line: &str) {
        let found = tokio::time::timeout(Duration::from_secs(10), async {
            while !self.lines().iter().any(|l| l == line) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        assert!(found.is_ok(), "never saw {line:?}; got {:?}", self.lines());
    }
}

fn streaming_config() -> ReflectorConfig {
    ReflectorConfig {
        initial_list: InitialListStrategy::StreamingList,
        backoff: BackoffConfig {
            initial: Duration::from_millis(10),
            max: Duration::from_millis(50),
            ..BackoffConfig::default()
        },
        ..ReflectorConfig::default()
    }
}

/// How long a condition may take to hold.
const WAIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_syncs_from_initial_events_and_resumes_without_resending_them() {
    let server = TestServer::start().await.unwrap();
    let (client, uris) = recording_client(&server);
    let api = ResourceClient::<ConfigMap>::namespaced(client, "default");
    for name in ["a", "b", "c"] {
        api.create(&PostParams::default(), &cm(name)).await.unwrap();
    }
    // Any LIST fails: the informer can only sync through the streaming watch.
    server.fail(
        FailRule::on(Verb::List)
            .resource("configmaps")
            .code(500)
            .times(1_000),
    );

    let informer = SharedIndexInformer::builder(ListWatch::new(api.clone()))
        .indexers(namespace_indexers())
        .reflector(streaming_config())
        .build();
    let log = Log::default();
    informer.add_event_handler(log.clone()).unwrap();
    let stop = CancellationToken::new();
    let (informer, run) = informer.spawn(stop.clone());
    let synced = tokio::time::timeout(
        Duration::from_secs(10),
        wait_for_cache_sync(&stop, &[&informer]),
    )
    .await;
    assert_eq!(synced, Ok(true), "requests: {:?}", uris.lock().unwrap());
    assert_eq!(informer.indexer().len(), 3);
    {
        let uris = uris.lock().unwrap();
        assert!(
            uris.iter().all(|u| is_watch(u)),
            "no LIST was sent: {uris:?}"
        );
        assert!(uris[0].contains("sendInitialEvents=true"), "{uris:?}");
        assert!(uris[0].contains("allowWatchBookmarks=true"), "{uris:?}");
    }
    let initial_rv = informer.last_sync_resource_version();
    assert!(!initial_rv.is_empty(), "the end bookmark's resourceVersion");

    // The stream goes on as the watch; then the server drops it and the informer resumes.
    api.create(&PostParams::default(), &cm("d")).await.unwrap();
    log.wait_for("add default/d").await;
    let watches_before = uris.lock().unwrap().len();
    server.drop_watches();
    eventually("a resumed watch", WAIT, || {
        uris.lock().unwrap().len() > watches_before
    })
    .await;
    api.create(&PostParams::default(), &cm("e")).await.unwrap();
    log.wait_for("add default/e").await;

    let uris = uris.lock().unwrap().clone();
    let resumed = &uris[watches_before..];
    assert!(
        resumed
            .iter()
            .all(|u| is_watch(u) && !u.contains("sendInitialEvents")),
        "a resumed watch never asks for initial events again: {resumed:?}"
    );
    let mut lines = log.lines();
    lines.sort();
    assert_eq!(
        lines,
        [
            "add default/a initial",
            "add default/b initial",
            "add default/c initial",
            "add default/d",
            "add default/e"
        ],
        "each object delivered once"
    );
    assert_eq!(informer.indexer().len(), 5);
    stop.cancel();
    run.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_refused_by_the_server_falls_back_to_list_and_watch() {
    let server = TestServer::start().await.unwrap();
    let (client, uris) = recording_client(&server);
    let api = ResourceClient::<ConfigMap>::namespaced(client, "default");
    for name in ["a", "b"] {
        api.create(&PostParams::default(), &cm(name)).await.unwrap();
    }
    // The server refuses the streaming watch (as one without the feature would).
    server.fail(FailRule::on(Verb::Watch).resource("configmaps").code(403));

    let informer = SharedIndexInformer::builder(ListWatch::new(api.clone()))
        .indexers(namespace_indexers())
        .reflector(streaming_config())
        .build();
    let log = Log::default();
    informer.add_event_handler(log.clone()).unwrap();
    let stop = CancellationToken::new();
    let (informer, run) = informer.spawn(stop.clone());
    let synced = tokio::time::timeout(
        Duration::from_secs(10),
        wait_for_cache_sync(&stop, &[&informer]),
    )
    .await;
    assert_eq!(synced, Ok(true), "requests: {:?}", uris.lock().unwrap());
    assert_eq!(informer.indexer().len(), 2);
    api.create(&PostParams::default(), &cm("c")).await.unwrap();
    log.wait_for("add default/c").await;
    // Once refused, streaming is not asked for again: a forced relist lists.
    // Force a relist: while responses are delayed, drop the watch, write, and compact, so
    // the resume is answered 410 Gone.
    let before = uris.lock().unwrap().len();
    server.set_delay(Some(Duration::from_millis(300)));
    server.drop_watches();
    tokio::time::sleep(Duration::from_millis(50)).await;
    server
        .engine()
        .create(
            &collection(&server, ("", "v1", "configmaps"), Some("default")),
            serde_json::to_value(cm("d")).unwrap(),
            &Default::default(),
        )
        .unwrap();
    server.compact();
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.set_delay(None);
    log.wait_for("add default/d").await;

    let uris = uris.lock().unwrap().clone();
    assert!(uris[0].contains("sendInitialEvents=true"), "{uris:?}");
    assert!(
        !is_watch(&uris[1]),
        "the refusal is followed by a LIST: {uris:?}"
    );
    assert!(
        uris[1..].iter().all(|u| !u.contains("sendInitialEvents")),
        "streaming is never asked for again: {uris:?}"
    );
    assert!(
        uris[2..].iter().any(|u| is_watch(u)),
        "the list is followed by a watch: {uris:?}"
    );
    assert!(
        uris[before..].iter().any(|u| !is_watch(u)),
        "the forced relist is a LIST: {:?}",
        &uris[before..]
    );
    let mut lines = log.lines();
    lines.sort();
    // As in client-go, relisted objects that did not change reach handlers that are not
    // resyncing as updates with identical objects.
    assert_eq!(
        lines,
        [
            "add default/a initial",
            "add default/b initial",
            "add default/c",
            "add default/d",
            "update default/a unchanged",
            "update default/b unchanged",
            "update default/c unchanged"
        ]
    );
    stop.cancel();
    run.await.unwrap();
}
