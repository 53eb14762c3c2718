//! CBOR (KEP-4222; apimachinery `pkg/runtime/serializer/cbor/cbor.go`): `application/cbor`
//! bodies and replies prefixed with the self-described tag 55799 (`0xd9 0xd9 0xf7`),
//! `application/cbor-seq` watch streams of `{type, object}` data items, negotiated as
//! apiserver `pkg/endpoints/handlers/negotiation/negotiate.go` does (406 when no Accept
//! fits, 415 for an unknown request Content-Type), for built-ins, custom resources and
//! server-side apply (`application/apply-patch+cbor`).

use serde_json::{Value, json};

use crate::common::{Api, cm, server};

const CBOR: &str = "application/cbor";
const SELF_DESCRIBED: [u8; 3] = [0xd9, 0xd9, 0xf7];

fn to_cbor(v: &Value) -> Vec<u8> {
    let mut out = SELF_DESCRIBED.to_vec();
    ciborium::into_writer(v, &mut out).unwrap();
    out
}

/// One self-described data item as the JSON value it stands for.
fn from_cbor(body: &[u8]) -> Value {
    assert_eq!(
        body.get(..3),
        Some(&SELF_DESCRIBED[..]),
        "cbor.go: self-described prefix"
    );
    let mut rest = &body[3..];
    let v: Value = ciborium::from_reader(&mut rest).unwrap();
    assert!(rest.is_empty(), "one data item");
    v
}

async fn send(
    api: &Api,
    method: &str,
    path: &str,
    content_type: &str,
    accept: &str,
    body: Option<Vec<u8>>,
) -> (u16, String, Vec<u8>) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = api
        .http
        .request(method, format!("{}{path}", api.base))
        .header("content-type", content_type)
        .header("accept", accept);
    if let Some(b) = body {
        req = req.body(b);
    }
    let resp = req.send().await.unwrap();
    let code = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (code, ct, resp.bytes().await.unwrap().to_vec())
}

/// GET `path` in CBOR and in JSON: the same value.
async fn same_in_cbor_and_json(api: &Api, path: &str) -> Value {
    let (code, ct, body) = send(api, "GET", path, CBOR, CBOR, None).await;
    assert_eq!((code, ct.as_str()), (200, CBOR), "{path}");
    let (code, json) = api.get(path).await;
    assert_eq!(code, 200);
    let cbor = from_cbor(&body);
    assert_eq!(cbor, json, "{path}: CBOR and JSON replies differ");
    cbor
}

/// The events of a `cbor-seq` watch body: each one data item with its own prefix.
fn events(body: &[u8]) -> Vec<Value> {
    let mut rest = body;
    let mut out = Vec::new();
    while !rest.is_empty() {
        assert_eq!(&rest[..3], &SELF_DESCRIBED, "every event is self-described");
        rest = &rest[3..];
        out.push(ciborium::from_reader(&mut rest).unwrap());
    }
    out
}

async fn watch_names(
    api: &Api,
    path: &str,
    accept: &str,
    create: impl AsyncFnOnce(),
) -> Vec<String> {
    let resp = api
        .http
        .get(format!("{}{path}?watch=true&timeoutSeconds=2", api.base))
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["content-type"], "application/cbor-seq");
    create().await;
    let body = resp.bytes().await.unwrap();
    events(&body)
        .into_iter()
        .filter(|e| e["type"] == "ADDED")
        .map(|e| {
            e["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn a_configmap_is_written_and_read_in_cbor() {
    let (_s, api) = server().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let (code, ct, body) = send(
        &api,
        "POST",
        cms,
        CBOR,
        CBOR,
        Some(to_cbor(&cm("c", json!({"app": "x"})))),
    )
    .await;
    assert_eq!(
        (code, ct.as_str()),
        (201, CBOR),
        "{}",
        String::from_utf8_lossy(&body)
    );
    let created = from_cbor(&body);
    assert_eq!(created["metadata"]["labels"]["app"], "x");
    let got = same_in_cbor_and_json(&api, &format!("{cms}/c")).await;
    assert_eq!(got, created);
    let list = same_in_cbor_and_json(&api, cms).await;
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["items"][0]["metadata"]["name"], "c");

    // PUT with a CBOR body.
    let mut update = created.clone();
    update["data"] = json!({"k": "v"});
    let (code, _, body) = send(
        &api,
        "PUT",
        &format!("{cms}/c"),
        CBOR,
        CBOR,
        Some(to_cbor(&update)),
    )
    .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(from_cbor(&body)["data"]["k"], "v");

    // Server-side apply with an apply-patch+cbor body, answered in JSON when asked.
    let intent = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "applied"}});
    let (code, ct, body) = send(
        &api,
        "PATCH",
        &format!("{cms}/c?fieldManager=cbor&force=true"),
        "application/apply-patch+cbor",
        "application/json",
        Some(to_cbor(&intent)),
    )
    .await;
    assert_eq!(
        (code, ct.as_str()),
        (200, "application/json"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    let applied: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(applied["data"]["k"], "applied");
    let managers: Vec<&str> = applied["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"cbor"), "{managers:?}");

    // A malformed CBOR body is a 400, not a 415.
    let (code, _, _) = send(
        &api,
        "POST",
        cms,
        CBOR,
        CBOR,
        Some(vec![0xd9, 0xd9, 0xf7, 0xa1]),
    )
    .await;
    assert_eq!(code, 400);
}

#[tokio::test]
async fn watches_stream_cbor_sequences_of_watch_events() {
    let (_s, api) = server().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    // client-go asks with its one Accept; `application/cbor-seq` is acceptable for streams.
    for (accept, name) in [(CBOR, "w1"), ("application/cbor-seq", "w2")] {
        let names = watch_names(&api, cms, accept, async || {
            api.post(cms, &cm(name, json!({}))).await;
        })
        .await;
        assert!(names.contains(&name.to_string()), "{accept}: {names:?}");
    }
}

#[tokio::test]
async fn custom_resources_are_served_in_cbor() {
    let (_s, api) = server().await;
    let crd = json!({
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
    });
    // The CRD itself in CBOR.
    let (code, _, body) = send(
        &api,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        CBOR,
        CBOR,
        Some(to_cbor(&crd)),
    )
    .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    let foos = "/apis/cbor.example.com/v1/namespaces/default/foos";
    let foo = json!({"apiVersion": "cbor.example.com/v1", "kind": "Foo", "metadata": {"name": "f"}, "spec": {"n": 3, "x": 1.5, "s": ["a"]}});
    let (code, ct, body) = send(&api, "POST", foos, CBOR, CBOR, Some(to_cbor(&foo))).await;
    assert_eq!(
        (code, ct.as_str()),
        (201, CBOR),
        "{}",
        String::from_utf8_lossy(&body)
    );
    assert_eq!(from_cbor(&body)["spec"], foo["spec"]);
    same_in_cbor_and_json(&api, &format!("{foos}/f")).await;
    let list = same_in_cbor_and_json(&api, foos).await;
    assert_eq!(list["kind"], "FooList");
    let names = watch_names(&api, foos, CBOR, async || {
        let g =
            json!({"apiVersion": "cbor.example.com/v1", "kind": "Foo", "metadata": {"name": "g"}});
        let (code, _, _) = send(&api, "POST", foos, CBOR, CBOR, Some(to_cbor(&g))).await;
        assert_eq!(code, 201);
    })
    .await;
    assert!(names.contains(&"g".to_string()), "{names:?}");
    let intent = json!({"apiVersion": "cbor.example.com/v1", "kind": "Foo", "metadata": {"name": "f"}, "spec": {"n": 4}});
    let (code, _, body) = send(
        &api,
        "PATCH",
        &format!("{foos}/f?fieldManager=cbor&force=true"),
        "application/apply-patch+cbor",
        CBOR,
        Some(to_cbor(&intent)),
    )
    .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(from_cbor(&body)["spec"]["n"], 4);
}

#[tokio::test]
async fn unknown_request_types_are_415_and_unknown_accepts_406() {
    let (_s, api) = server().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    // negotiate.go: a Content-Type without a decoder is UnsupportedMediaType.
    let (code, ct, body) = send(
        &api,
        "POST",
        cms,
        "application/x-unknown",
        CBOR,
        Some(b"{}".to_vec()),
    )
    .await;
    assert_eq!(code, 415);
    let status: Value = if ct.starts_with(CBOR) {
        from_cbor(&body)
    } else {
        serde_json::from_slice(&body).unwrap()
    };
    assert_eq!(status["reason"], "UnsupportedMediaType");
    // No serializer for the Accept: NotAcceptable, listing CBOR among the offers.
    let (code, _, body) = send(&api, "GET", cms, CBOR, "text/html", None).await;
    assert_eq!(code, 406);
    let status: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status["reason"], "NotAcceptable");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("application/cbor"),
        "{status}"
    );
    // `application/cbor-seq` names a stream: not acceptable for a list.
    let (code, _, _) = send(&api, "GET", cms, CBOR, "application/cbor-seq", None).await;
    assert_eq!(code, 406);
}
