//! CBOR on the wire (KEP-4222): a client with `Config::content_type = ContentType::Cbor`
//! against the in-memory API server over HTTP — typed and dynamic verbs, watches as
//! `application/cbor-seq`, an informer fed by CBOR lists and watches, and client-go's
//! fallback to JSON for good after a 415 (client-go `rest/request.go`, `transformResponse`
//! calling `clientContentConfigProvider.UnsupportedMediaType`).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{
    ApiResource, DynamicObject, GroupVersionKind, ObjectMeta, WatchEvent,
    params::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams},
};
use kubegen::{
    cache::{InitialListStrategy, ReflectorConfig},
    client::{
        Body, BoxFuture, Client, ContentType, DynamicClient, HttpTransport, ResourceClient, Strip,
        Transport, TransportError,
    },
    informers::SharedInformerFactory,
};
use kubegen_testserver::TestServer;
use serde_json::json;

mod informer_support;

use informer_support::{eventually, start_and_sync};

/// What went over the wire: method, path, request Content-Type, Accept, response
/// Content-Type.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    content_type: String,
    accept: String,
    response_type: String,
}

/// An [`HttpTransport`] that records every exchange.
#[derive(Clone)]
struct Recording {
    inner: Arc<HttpTransport>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

fn header(h: &http::HeaderMap, name: http::header::HeaderName) -> String {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

impl Transport for Recording {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let mut seen = Seen {
            method: request.method().to_string(),
            path: request.uri().path().to_owned(),
            content_type: header(request.headers(), http::header::CONTENT_TYPE),
            accept: header(request.headers(), http::header::ACCEPT),
            response_type: String::new(),
        };
        let (inner, log) = (self.inner.clone(), self.seen.clone());
        Box::pin(async move {
            let resp = inner.send(request).await?;
            seen.response_type = header(resp.headers(), http::header::CONTENT_TYPE);
            log.lock().unwrap().push(seen);
            Ok(resp)
        })
    }
}

impl Recording {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn server() -> TestServer {
    TestServer::builder()
        .cluster(kubegen_testserver::ClusterConfig::none())
        .start()
        .await
        .unwrap()
}

/// A CBOR client for `server` whose exchanges are recorded.
fn cbor_client(server: &TestServer) -> (Client, Recording) {
    let config = server
        .config()
        .unwrap()
        .with_content_type(ContentType::Cbor);
    let recording = Recording {
        inner: Arc::new(HttpTransport::new(&config).unwrap()),
        seen: Arc::default(),
    };
    let client = Client::builder(recording.clone())
        .credentials(config.credentials.clone())
        .content_type(config.content_type)
        .build();
    (client, recording)
}

fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn typed_verbs_and_watches_go_over_cbor() {
    let server = server().await;
    let (client, wire) = cbor_client(&server);
    let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "default");
    let mut events = api
        .watch(&WatchParams::default().timeout(5), "0")
        .await
        .unwrap();

    let created = api
        .create(&PostParams::default(), &cm("a", "1"))
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some());
    let mut got = api.get("a").await.unwrap();
    assert_eq!(got, created);
    got.data = Some(BTreeMap::from([("v".to_owned(), "2".to_owned())]));
    let updated = api.update(&PostParams::default(), &got).await.unwrap();
    assert_eq!(updated.data.as_ref().unwrap()["v"], "2");
    let applied = api
        .patch(
            "a",
            &PatchParams::apply("cbor-test").force(),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"v": "3"}})),
        )
        .await
        .unwrap();
    assert_eq!(applied.data.as_ref().unwrap()["v"], "3");
    let merged = api
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"m": "4"}})),
        )
        .await
        .unwrap();
    assert_eq!(merged.data.as_ref().unwrap()["m"], "4");
    let list = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items, vec![merged.clone()]);
    assert!(merged.metadata.managed_fields.is_some());

    let mut names = Vec::new();
    while names.len() < 4 {
        match events.next().await.unwrap().unwrap() {
            WatchEvent::Added(c) | WatchEvent::Modified(c) => {
                names.push(
                    c.data
                        .unwrap_or_default()
                        .get("v")
                        .cloned()
                        .unwrap_or_default(),
                );
            }
            WatchEvent::Bookmark(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(names, ["1", "2", "3", "3"]);
    api.delete("a", &DeleteParams::default()).await.unwrap();
    assert_eq!(client.content_type(), ContentType::Cbor, "no fallback");

    let seen = wire.seen();
    let of = |method: &str| {
        seen.iter()
            .filter(|s| s.method == method)
            .collect::<Vec<_>>()
    };
    for s in of("POST").into_iter().chain(of("PUT")) {
        assert_eq!(s.content_type, "application/cbor", "{s:?}");
        assert_eq!(s.response_type, "application/cbor", "{s:?}");
    }
    let patches = of("PATCH");
    assert_eq!(patches[0].content_type, "application/apply-patch+cbor");
    // A merge patch has no CBOR form; its answer is CBOR all the same.
    assert_eq!(patches[1].content_type, "application/merge-patch+json");
    assert!(
        patches
            .iter()
            .all(|s| s.response_type == "application/cbor"),
        "{patches:?}"
    );
    let gets = of("GET");
    assert!(
        gets.iter()
            .all(|s| s.accept.starts_with("application/cbor")),
        "{gets:?}"
    );
    assert!(
        gets.iter()
            .any(|s| s.response_type == "application/cbor-seq"),
        "the watch: {gets:?}"
    );
}

#[tokio::test]
async fn the_dynamic_client_reads_and_writes_custom_resources_in_cbor() {
    let server = server().await;
    let (client, wire) = cbor_client(&server);
    let crds = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    );
    let crd: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.cbor.example.com"},
        "spec": {
            "group": "cbor.example.com", "scope": "Namespaced",
            "names": {"kind": "Foo", "plural": "foos", "singular": "foo"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    }))
    .unwrap();
    DynamicClient::all(client.clone(), &crds)
        .create(&PostParams::default(), &crd)
        .await
        .unwrap();
    let foos = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cbor.example.com", "v1", "Foo"),
        "foos",
    );
    let dc = DynamicClient::namespaced(client.clone(), &foos, "default");
    let foo = DynamicObject::new("f", &foos)
        .data(json!({"spec": {"n": 3, "x": 1.5, "tags": ["a", "b"]}}));
    let created = dc.create(&PostParams::default(), &foo).await.unwrap();
    assert_eq!(
        created.data["spec"],
        json!({"n": 3, "x": 1.5, "tags": ["a", "b"]})
    );
    let got = dc.get("f", &Default::default()).await.unwrap();
    assert_eq!(got.data["spec"]["n"], 3);
    assert_eq!(
        dc.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    let mut watch = dc
        .watch(&WatchParams::default().timeout(2), "0")
        .await
        .unwrap();
    match watch.next().await.unwrap().unwrap() {
        WatchEvent::Added(o) => assert_eq!(o.metadata.name.as_deref(), Some("f")),
        other => panic!("unexpected {other:?}"),
    }
    dc.delete("f", &DeleteParams::default()).await.unwrap();
    let seen = wire.seen();
    let foo_replies: Vec<_> = seen
        .iter()
        .filter(|s| s.path.ends_with("/foos") || s.path.ends_with("/foos/f"))
        .collect();
    assert!(
        foo_replies
            .iter()
            .all(|s| s.response_type.starts_with("application/cbor")),
        "{foo_replies:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_syncs_and_follows_changes_over_cbor_list_and_watch() {
    informer_over_cbor(InitialListStrategy::ListWatch, "application/cbor").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_syncs_over_a_cbor_streaming_list() {
    informer_over_cbor(InitialListStrategy::StreamingList, "application/cbor-seq").await;
}

/// An informer stripping managedFields syncs five ConfigMaps with `strategy` (its initial
/// state answered as `initial_type`) and follows a create through its CBOR watch.
async fn informer_over_cbor(strategy: InitialListStrategy, initial_type: &str) {
    let server = server().await;
    let (client, wire) = cbor_client(&server);
    let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "default");
    for i in 0..5 {
        api.create(&PostParams::default(), &cm(&format!("before-{i}"), "x"))
            .await
            .unwrap();
    }
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("default")
        .strip(Strip::MANAGED_FIELDS)
        .build();
    let informer = factory.informer_for_with::<ConfigMap>(|b| {
        b.reflector(ReflectorConfig {
            initial_list: strategy,
            ..ReflectorConfig::default()
        })
    });
    start_and_sync(&factory).await;
    assert_eq!(informer.indexer().len(), 5);
    api.create(&PostParams::default(), &cm("after", "y"))
        .await
        .unwrap();
    eventually("the watched add", Duration::from_secs(10), || {
        informer.indexer().get_by_key("default/after").is_some()
    })
    .await;
    let cached = informer.indexer().get_by_key("default/after").unwrap();
    assert!(
        cached.metadata.managed_fields.is_none(),
        "stripped while decoding CBOR"
    );
    factory.shutdown().await;
    let seen = wire.seen();
    let reads: Vec<_> = seen.iter().filter(|s| s.method == "GET").collect();
    assert_eq!(
        reads[0].response_type, initial_type,
        "the initial state: {reads:?}"
    );
    assert!(
        reads
            .iter()
            .all(|s| s.response_type.starts_with("application/cbor")),
        "{reads:?}"
    );
    assert!(
        reads
            .iter()
            .any(|s| s.response_type == "application/cbor-seq"),
        "the watch: {reads:?}"
    );
}

/// A server without CBOR: 415 UnsupportedMediaType for a CBOR body, a JSON echo otherwise;
/// it records every request's Content-Type.
async fn json_only_server() -> (String, Arc<Mutex<Vec<String>>>) {
    use axum::{Router, body::Bytes, http::HeaderMap, response::IntoResponse, routing::post};
    let types = Arc::new(Mutex::new(Vec::new()));
    let log = types.clone();
    let app = Router::new().route(
        "/api/v1/namespaces/default/configmaps",
        post(move |headers: HeaderMap, body: Bytes| {
            let log = log.clone();
            async move {
                let ct = headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                log.lock().unwrap().push(ct.clone());
                let json_header = [("content-type", "application/json")];
                if ct != "application/json" {
                    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "UnsupportedMediaType", "code": 415,
                        "message": format!("the body of the request was in an unknown format - accepted media types include: application/json (got {ct:?})")});
                    return (http::StatusCode::UNSUPPORTED_MEDIA_TYPE, json_header, status.to_string())
                        .into_response();
                }
                let mut obj: serde_json::Value = serde_json::from_slice(&body).unwrap();
                obj["metadata"]["uid"] = json!("u");
                (http::StatusCode::CREATED, json_header, obj.to_string()).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), types)
}

#[tokio::test]
async fn a_415_falls_back_to_json_for_the_rest_of_the_clients_life() {
    let (url, types) = json_only_server().await;
    let config =
        kubegen::client::Config::new(url.parse().unwrap()).with_content_type(ContentType::Cbor);
    assert_eq!(config.content_type, ContentType::Cbor);
    let client = Client::try_from_config(config).unwrap();
    let clone = client.clone();
    let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "default");
    // The 415 is not the caller's: the same create goes again in JSON.
    let created = api
        .create(&PostParams::default(), &cm("a", "1"))
        .await
        .unwrap();
    assert_eq!(created.metadata.uid.as_deref(), Some("u"));
    assert_eq!(client.content_type(), ContentType::Json);
    assert_eq!(
        clone.content_type(),
        ContentType::Json,
        "clones share the switch"
    );
    api.create(&PostParams::default(), &cm("b", "2"))
        .await
        .unwrap();
    assert_eq!(
        *types.lock().unwrap(),
        ["application/cbor", "application/json", "application/json"],
        "CBOR once, then JSON for good"
    );
}
