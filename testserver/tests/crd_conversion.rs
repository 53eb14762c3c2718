//! A CRD with a conversion webhook (`spec.conversion.strategy: Webhook`) over HTTP, as
//! apiextensions-apiserver serves it: objects are stored in the storage version (v2,
//! `spec.replicas`) and every verb of the other version (v1, `spec.size`) goes through the
//! webhook — a hyper server on tokio-rustls in the test, with its own rcgen CA, reached
//! through a registered Service. A conversion the webhook refuses answers 500 with its
//! message (a watch ends with an ERROR event); kubectl gets the v1 view. The runtime's own
//! conversion webhook (`kubegen::webhook::Server` with a hub-and-spoke `Conversion`) serves
//! the same CRD in the last test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{convert::Infallible, net::SocketAddr, sync::Arc, time::Duration};

use base64::Engine as _;
use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use kubegen_testserver::{ClusterConfig, TestServer};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};

const SVC_NS: &str = "system";
const SVC_NAME: &str = "converter";
const V1: &str = "/apis/example.com/v1/namespaces/default/foos";
const V2: &str = "/apis/example.com/v2/namespaces/default/foos";

/// A CA and a certificate it signed for the Service's DNS name.
fn certificate() -> (String, rustls::ServerConfig) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "conversion-test-ca");
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let params = CertificateParams::new(vec![format!("{SVC_NAME}.{SVC_NS}.svc")]).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    (ca_cert.pem(), config)
}

/// The test server's URL and token, for the webhook that races a patch (one server per
/// test binary uses it).
static RACE: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();

/// An object labelled `race: bump`, converted to v2 (a patch on its way to storage), is
/// first written by the webhook itself (annotation `bumped`), once: the patch's write
/// then conflicts and the patch is applied again to the new object.
async fn race(review: &Value) {
    let request = &review["request"];
    if request["desiredAPIVersion"] != "example.com/v2" {
        return;
    }
    for obj in request["objects"].as_array().into_iter().flatten() {
        if obj.pointer("/metadata/labels/race") == Some(&json!("bump"))
            && obj.pointer("/metadata/annotations/bumped").is_none()
            && let Some((url, token)) = RACE.get()
        {
            let name = obj["metadata"]["name"].as_str().unwrap_or_default();
            let resp = reqwest::Client::new()
                .patch(format!("{url}{V2}/{name}"))
                .bearer_auth(token)
                .header("content-type", "application/merge-patch+json")
                .body(r#"{"metadata":{"annotations":{"bumped":"1"}}}"#)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), 200);
        }
    }
}

/// v1 `spec.size` ↔ v2 `spec.replicas`; an object labelled `convert: fail` is refused.
fn review_answer(review: &Value) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    let response = if objects
        .iter()
        .any(|o| o.pointer("/metadata/labels/convert") == Some(&json!("fail")))
    {
        json!({"uid": request["uid"], "result": {"status": "Failure",
            "message": "objects labelled convert=fail cannot be converted"}})
    } else {
        let converted: Vec<Value> = objects
            .into_iter()
            .map(|mut o| {
                o["apiVersion"] = json!(desired);
                if let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) {
                    let (from, to) = if desired == "example.com/v2" {
                        ("size", "replicas")
                    } else {
                        ("replicas", "size")
                    };
                    if let Some(v) = spec.remove(from) {
                        spec.insert(to.into(), v);
                    }
                }
                o
            })
            .collect();
        json!({"uid": request["uid"], "result": {"status": "Success"}, "convertedObjects": converted})
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response})
}

/// Starts the conversion webhook; its address and CA's PEM.
async fn converter() -> (SocketAddr, String) {
    let (ca_pem, config) = certificate();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = service_fn(|req: Request<Incoming>| async move {
                    let bytes = req.into_body().collect().await.unwrap().to_bytes();
                    let review: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                    race(&review).await;
                    let body = review_answer(&review).to_string();
                    Ok::<_, Infallible>(
                        Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(body)))
                            .unwrap(),
                    )
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (addr, ca_pem)
}

fn crd(ca_pem: &str) -> Value {
    // v1 is the stricter: its schema, not v2's, judges a v1 request
    let version = |name: &str, field: &str, limit: i64, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
            "subresources": {"status": {}},
            "additionalPrinterColumns": [{"name": field.to_uppercase(), "type": "integer",
                "jsonPath": format!(".spec.{field}")}],
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {field: {"type": "integer", "maximum": limit}}},
                "status": {"type": "object", "properties": {"observed": {"type": "integer"}}}}}}})
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Foo", "plural": "foos", "singular": "foo", "listKind": "FooList"},
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {"namespace": SVC_NS, "name": SVC_NAME, "path": "/convert"},
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem)}}},
            "versions": [version("v1", "size", 1000, false), version("v2", "replicas", 100_000, true)]}})
}

/// A test server with the CRD and the webhook's Service.
async fn setup(tls: bool) -> TestServer {
    let (addr, ca_pem) = converter().await;
    let server = TestServer::builder()
        .tls(tls)
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    server.register_service(SVC_NS, SVC_NAME, 443, addr);
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    if tls {
        let text = crd(&ca_pem).to_string();
        kubegen_testserver::load_crds(server.engine(), "crd", &text).unwrap();
    } else {
        let (code, body) = send(&server, "POST", crds, Some(crd(&ca_pem))).await;
        assert_eq!(code, 201, "{body}");
    }
    server
}

async fn send_typed(
    server: &TestServer,
    method: &str,
    path: &str,
    body: Option<Value>,
    content_type: &str,
) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .request(method.parse().unwrap(), format!("{}{path}", server.url()))
        .bearer_auth(server.admin_token())
        .header("content-type", content_type);
    if let Some(body) = body {
        req = req.body(body.to_string());
    }
    let resp = req.send().await.unwrap();
    let code = resp.status().as_u16();
    (code, resp.json().await.unwrap_or(Value::Null))
}

async fn send(server: &TestServer, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    send_typed(server, method, path, body, "application/json").await
}

fn foo_v1(name: &str, size: i64) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Foo",
        "metadata": {"name": name, "namespace": "default"}, "spec": {"size": size}})
}

/// The `spec` of `name` as stored (the v2 view needs no conversion).
async fn stored_spec(server: &TestServer, name: &str) -> Value {
    let (code, obj) = send(server, "GET", &format!("{V2}/{name}"), None).await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(obj["apiVersion"], "example.com/v2");
    obj["spec"].clone()
}

/// One JSON watch event from a chunked body (events may share or split chunks).
struct Events {
    stream: futures::stream::BoxStream<'static, reqwest::Result<Bytes>>,
    buf: Vec<u8>,
}

impl Events {
    async fn open(server: &TestServer, path: &str) -> Events {
        let resp = reqwest::Client::new()
            .get(format!("{}{path}", server.url()))
            .bearer_auth(server.admin_token())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        Events {
            stream: resp.bytes_stream().boxed(),
            buf: Vec::new(),
        }
    }

    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Some(serde_json::from_slice(&line).unwrap());
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.stream.next())
                .await
                .expect("an event in time")?
                .unwrap();
            self.buf.extend_from_slice(&chunk);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_verb_in_v1_is_served_through_the_webhook_and_stored_in_v2() {
    let server = setup(false).await;

    // create in v1, stored in v2
    let (code, created) = send(&server, "POST", V1, Some(foo_v1("a", 3))).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["apiVersion"], "example.com/v1");
    assert_eq!(created["spec"], json!({"size": 3}));
    assert_eq!(stored_spec(&server, "a").await, json!({"replicas": 3}));
    // get and list in v1
    let (code, got) = send(&server, "GET", &format!("{V1}/a"), None).await;
    assert_eq!((code, &got["spec"]), (200, &json!({"size": 3})), "{got}");
    assert_eq!(got["apiVersion"], "example.com/v1");
    let (code, list) = send(&server, "GET", V1, None).await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["apiVersion"], "example.com/v1");
    assert_eq!(list["kind"], "FooList");
    assert_eq!(list["items"][0]["apiVersion"], "example.com/v1");
    assert_eq!(list["items"][0]["spec"], json!({"size": 3}));

    // a watch in v1 sees the initial state and the changes in v1
    let mut events = Events::open(&server, &format!("{V1}?watch=true&timeoutSeconds=20")).await;
    let added = events.next().await.unwrap();
    assert_eq!(added["type"], "ADDED");
    assert_eq!(added["object"]["apiVersion"], "example.com/v1");
    assert_eq!(added["object"]["spec"], json!({"size": 3}));

    // update in v1
    let mut changed = got.clone();
    changed["spec"]["size"] = json!(5);
    let (code, updated) = send(&server, "PUT", &format!("{V1}/a"), Some(changed)).await;
    assert_eq!(
        (code, &updated["spec"]),
        (200, &json!({"size": 5})),
        "{updated}"
    );
    assert_eq!(stored_spec(&server, "a").await, json!({"replicas": 5}));
    let modified = events.next().await.unwrap();
    assert_eq!(modified["type"], "MODIFIED");
    assert_eq!(modified["object"]["spec"], json!({"size": 5}));

    // a stale update is still a conflict
    let (code, _) = send(&server, "PUT", &format!("{V1}/a"), Some(got.clone())).await;
    assert_eq!(code, 409);

    // the status subresource in v1
    let mut with_status = updated.clone();
    with_status["status"] = json!({"observed": 5});
    let (code, status) = send(&server, "PUT", &format!("{V1}/a/status"), Some(with_status)).await;
    assert_eq!(code, 200, "{status}");
    assert_eq!(status["status"], json!({"observed": 5}));
    assert_eq!(status["spec"], json!({"size": 5}));
    events.next().await.unwrap();
    let (code, status) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/a/status"),
        Some(json!({"status": {"observed": 6}, "spec": {"size": 100}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(code, 200, "{status}");
    assert_eq!(status["status"], json!({"observed": 6}));
    assert_eq!(status["spec"], json!({"size": 5}), "status ignores spec");
    events.next().await.unwrap();

    // merge and JSON patches apply to the v1 object
    let (code, merged) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/a"),
        Some(json!({"spec": {"size": 7}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(
        (code, &merged["spec"]),
        (200, &json!({"size": 7})),
        "{merged}"
    );
    assert_eq!(stored_spec(&server, "a").await, json!({"replicas": 7}));
    let (code, jsoned) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/a"),
        Some(json!([{"op": "replace", "path": "/spec/size", "value": 8}])),
        "application/json-patch+json",
    )
    .await;
    assert_eq!(
        (code, &jsoned["spec"]),
        (200, &json!({"size": 8})),
        "{jsoned}"
    );
    // a patch naming a stale resourceVersion is the client's precondition: 409
    let (code, _) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/a"),
        Some(
            json!({"metadata": {"resourceVersion": got["metadata"]["resourceVersion"]},
            "spec": {"size": 1}}),
        ),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(code, 409);
    // a strategic merge patch is not offered for custom resources
    let (code, _) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/a"),
        Some(json!({"spec": {"size": 1}})),
        "application/strategic-merge-patch+json",
    )
    .await;
    assert_eq!(code, 415);
    // server-side apply in v1
    let (code, applied) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/a?fieldManager=test&force=true"),
        Some(foo_v1("a", 9)),
        "application/apply-patch+yaml",
    )
    .await;
    assert_eq!(
        (code, &applied["spec"]),
        (200, &json!({"size": 9})),
        "{applied}"
    );
    assert_eq!(stored_spec(&server, "a").await, json!({"replicas": 9}));
    let (code, created) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/c?fieldManager=test"),
        Some(foo_v1("c", 2)),
        "application/apply-patch+yaml",
    )
    .await;
    assert_eq!(
        (code, &created["spec"]),
        (201, &json!({"size": 2})),
        "{created}"
    );
    assert_eq!(stored_spec(&server, "c").await, json!({"replicas": 2}));
    for _ in 0..4 {
        let ev = events.next().await.unwrap();
        assert_eq!(ev["object"]["apiVersion"], "example.com/v1", "{ev}");
        assert!(ev["object"]["spec"].get("size").is_some(), "{ev}");
    }

    // the v1 schema judges v1 writes: its limit, its field names; unknown fields pruned
    let (code, status) = send(&server, "POST", V1, Some(foo_v1("big", 5000))).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["details"]["causes"][0]["field"], "spec.size",
        "{status}"
    );
    let mut big = applied.clone();
    big["spec"]["size"] = json!(5000);
    assert_eq!(
        send(&server, "PUT", &format!("{V1}/a"), Some(big)).await.0,
        422
    );
    let (code, status) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/a"),
        Some(json!({"spec": {"size": 5000}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(code, 422, "{status}");
    let mut extra = foo_v1("pruned", 1);
    extra["spec"]["bogus"] = json!(true);
    let (code, pruned) = send(&server, "POST", V1, Some(extra)).await;
    assert_eq!(
        (code, &pruned["spec"]),
        (201, &json!({"size": 1})),
        "{pruned}"
    );
    assert_eq!(
        send(&server, "DELETE", &format!("{V1}/pruned"), None)
            .await
            .0,
        200
    );
    for _ in 0..2 {
        events.next().await.unwrap();
    }

    // delete and deletecollection
    let (code, deleted) = send(&server, "DELETE", &format!("{V1}/a"), None).await;
    // a custom resource's delete answers with the object (ReturnDeletedObject), in v1
    assert_eq!(
        (code, &deleted["spec"]),
        (200, &json!({"size": 9})),
        "{deleted}"
    );
    assert_eq!(deleted["apiVersion"], "example.com/v1");
    let gone = events.next().await.unwrap();
    assert_eq!(gone["type"], "DELETED");
    assert_eq!(gone["object"]["spec"], json!({"size": 9}));
    assert_eq!(send(&server, "GET", &format!("{V2}/a"), None).await.0, 404);
    let (code, deleted) = send(&server, "DELETE", V1, None).await;
    assert_eq!(code, 200, "{deleted}");
    assert_eq!(deleted["apiVersion"], "example.com/v1");
    assert_eq!(deleted["items"][0]["spec"], json!({"size": 2}));
    assert_eq!(send(&server, "GET", &format!("{V1}/c"), None).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_conversion_answers_with_the_webhooks_message() {
    let server = setup(false).await;
    let refused = json!({"apiVersion": "example.com/v2", "kind": "Foo",
        "metadata": {"name": "x", "namespace": "default", "labels": {"convert": "fail"}},
        "spec": {"replicas": 1}});
    // the storage version needs no conversion
    assert_eq!(send(&server, "POST", V2, Some(refused)).await.0, 201);
    let want = "conversion webhook for example.com/v2, Kind=Foo failed: objects labelled convert=fail cannot be converted";
    let (code, status) = send(&server, "GET", &format!("{V1}/x"), None).await;
    assert_eq!(code, 500, "{status}");
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["message"], want);
    let (code, status) = send(&server, "GET", V1, None).await;
    assert_eq!((code, status["message"].as_str()), (500, Some(want)));
    // a create in v1 refused on its way to storage
    let mut bad = foo_v1("y", 1);
    bad["metadata"]["labels"] = json!({"convert": "fail"});
    let (code, status) = send(&server, "POST", V1, Some(bad)).await;
    assert_eq!(code, 500, "{status}");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains("objects labelled convert=fail cannot be converted")),
        "{status}"
    );
    assert_eq!(send(&server, "GET", &format!("{V2}/y"), None).await.0, 404);
    // a watch ends with an ERROR event carrying the Status
    let mut events = Events::open(&server, &format!("{V1}?watch=true&timeoutSeconds=20")).await;
    let error = events.next().await.unwrap();
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["message"], want);
    assert!(events.next().await.is_none(), "the watch ends");
}

/// `kubectl get foos.v1.example.com` shows the v1 view: the v1 printer column and, as
/// JSON, `spec.size`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gets_the_v1_view() {
    let server = setup(true).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let kubectl = |args: Vec<&'static str>, stdin: Option<String>| {
        let kubeconfig = kubeconfig.clone();
        let cache = dir.path().join("cache");
        tokio::task::spawn_blocking(move || {
            use std::io::Write;
            let mut child = std::process::Command::new("/usr/bin/kubectl")
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .arg("--cache-dir")
                .arg(&cache)
                .args(args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            if let (Some(mut input), Some(text)) = (child.stdin.take(), stdin) {
                input.write_all(text.as_bytes()).unwrap();
            }
            let out = child.wait_with_output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            (out.status.success(), text)
        })
    };
    let (ok, text) = kubectl(vec!["create", "-f", "-"], Some(foo_v1("k", 4).to_string()))
        .await
        .unwrap();
    assert!(ok, "{text}");
    let (ok, text) = kubectl(vec!["get", "foos.v1.example.com", "-n", "default"], None)
        .await
        .unwrap();
    assert!(ok, "{text}");
    assert!(text.contains("SIZE") && text.contains('4'), "{text}");
    let (ok, text) = kubectl(
        vec![
            "get",
            "foos.v1.example.com",
            "k",
            "-n",
            "default",
            "-o",
            "json",
        ],
        None,
    )
    .await
    .unwrap();
    assert!(ok, "{text}");
    let obj: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(obj["apiVersion"], "example.com/v1");
    assert_eq!(obj["spec"], json!({"size": 4}));
    let (ok, text) = kubectl(
        vec![
            "get",
            "foos.v2.example.com",
            "k",
            "-n",
            "default",
            "-o",
            "json",
        ],
        None,
    )
    .await
    .unwrap();
    assert!(ok, "{text}");
    let obj: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(obj["spec"], json!({"replicas": 4}));
}

/// With dynamic admission configured (a ValidatingAdmissionPolicy on the storage version),
/// the v1 writes are admitted on the converted object: `spec.replicas` is what the policy
/// sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_sees_the_storage_version() {
    let server = setup(false).await;
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "max-replicas"},
        "spec": {"failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": ["example.com"],
                "apiVersions": ["v2"], "operations": ["CREATE", "UPDATE"],
                "resources": ["foos"]}]},
            "validations": [{"expression": "object.spec.replicas <= 10",
                "message": "at most 10 replicas"}]}});
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "max-replicas"},
        "spec": {"policyName": "max-replicas", "validationActions": ["Deny"]}});
    let vaps = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
    let (code, body) = send(&server, "POST", vaps, Some(policy)).await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = send(
        &server,
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        Some(binding),
    )
    .await;
    assert_eq!(code, 201, "{body}");

    let (code, status) = send(&server, "POST", V1, Some(foo_v1("big", 50))).await;
    assert_eq!(code, 422, "{status}");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 10 replicas")),
        "{status}"
    );
    let (code, created) = send(&server, "POST", V1, Some(foo_v1("ok", 5))).await;
    assert_eq!(
        (code, &created["spec"]),
        (201, &json!({"size": 5})),
        "{created}"
    );
    let (code, status) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/ok"),
        Some(json!({"spec": {"size": 60}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(code, 422, "{status}");
    let (code, patched) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/ok"),
        Some(json!({"spec": {"size": 6}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(
        (code, &patched["spec"]),
        (200, &json!({"size": 6})),
        "{patched}"
    );
    assert_eq!(stored_spec(&server, "ok").await, json!({"replicas": 6}));
    let (code, deleted) = send(&server, "DELETE", &format!("{V1}/ok"), None).await;
    assert_eq!(
        (code, &deleted["spec"]),
        (200, &json!({"size": 6})),
        "{deleted}"
    );
}

/// A patch whose write lost a race (the object changed between the read and the write;
/// here the conversion webhook itself writes it) is applied again to the new object, as
/// `GuaranteedUpdate` retries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_that_lost_a_race_is_applied_again() {
    let server = setup(false).await;
    RACE.set((server.url(), server.admin_token().to_string()))
        .unwrap();
    assert_eq!(send(&server, "POST", V1, Some(foo_v1("r", 1))).await.0, 201);
    let (code, patched) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/r"),
        Some(json!({"metadata": {"labels": {"race": "bump"}}, "spec": {"size": 11}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["spec"], json!({"size": 11}));
    assert_eq!(patched["metadata"]["annotations"], json!({"bumped": "1"}));
    assert_eq!(stored_spec(&server, "r").await, json!({"replicas": 11}));
}

/// Tables of a v1 list and a v1 watch have v1's printer column, filled from the
/// converted objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_tables_show_the_v1_columns() {
    let server = setup(false).await;
    assert_eq!(send(&server, "POST", V1, Some(foo_v1("t", 3))).await.0, 201);
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let get = |path: String| {
        reqwest::Client::new()
            .get(format!("{}{path}", server.url()))
            .bearer_auth(server.admin_token())
            .header("accept", table)
            .send()
    };
    let listed: Value = get(V1.to_string()).await.unwrap().json().await.unwrap();
    assert_eq!(listed["kind"], "Table", "{listed}");
    let columns: Vec<&str> = listed["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    let size = columns.iter().position(|c| *c == "SIZE").expect("SIZE");
    assert_eq!(listed["rows"][0]["cells"][size], 3, "{listed}");
    let resp = get(format!("{V1}?watch=true&timeoutSeconds=5"))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut events = Events {
        stream: resp.bytes_stream().boxed(),
        buf: Vec::new(),
    };
    let added = events.next().await.unwrap();
    assert_eq!(added["object"]["kind"], "Table", "{added}");
    assert_eq!(added["object"]["rows"][0]["cells"][size], 3, "{added}");
}

/// The Foo versions as an operator writes them, for `kubegen::webhook::Conversion`: v2
/// (the storage version) is the hub, v1 a spoke.
mod foos {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    pub mod v1 {
        use super::*;
        #[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
        #[resource(
            group = "example.com",
            version = "v1",
            kind = "Foo",
            plural = "foos",
            namespaced
        )]
        pub struct Foo {
            pub metadata: ObjectMeta,
            #[serde(default)]
            pub spec: FooSpec,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub status: Option<Value>,
        }
        #[derive(Clone, Debug, Default, Serialize, Deserialize)]
        pub struct FooSpec {
            pub size: i64,
        }
    }

    pub mod v2 {
        use super::*;
        #[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
        #[resource(
            group = "example.com",
            version = "v2",
            kind = "Foo",
            plural = "foos",
            namespaced
        )]
        pub struct Foo {
            pub metadata: ObjectMeta,
            #[serde(default)]
            pub spec: FooSpec,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub status: Option<Value>,
        }
        #[derive(Clone, Debug, Default, Serialize, Deserialize)]
        pub struct FooSpec {
            pub replicas: i64,
        }
    }

    impl TryFrom<v1::Foo> for v2::Foo {
        type Error = String;
        fn try_from(f: v1::Foo) -> Result<Self, String> {
            if f.spec.size < 0 {
                return Err(format!("size {} is negative", f.spec.size));
            }
            Ok(v2::Foo {
                metadata: f.metadata,
                spec: v2::FooSpec {
                    replicas: f.spec.size,
                },
                status: f.status,
            })
        }
    }

    impl From<v2::Foo> for v1::Foo {
        fn from(f: v2::Foo) -> Self {
            v1::Foo {
                metadata: f.metadata,
                spec: v1::FooSpec {
                    size: f.spec.replicas,
                },
                status: f.status,
            }
        }
    }
}

/// The runtime's conversion webhook (`kubegen::webhook::Server` with a hub-and-spoke
/// `Conversion`, its self-signed CA in the CRD) behind the test server: v1 writes and
/// reads go through it, a failed `TryFrom` comes back as the webhook's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubegen_conversion_webhook_serves_v1() {
    use kubegen::webhook::{CONVERT_PATH, Conversion, Server, certs::SelfSignedConfig};
    let conversion = Conversion::<foos::v2::Foo>::new().spoke::<foos::v1::Foo>();
    let hook = Server::builder()
        .address(([127, 0, 0, 1], 0).into())
        .self_signed(SelfSignedConfig::for_service(SVC_NAME, SVC_NS))
        .conversion(CONVERT_PATH, conversion)
        .build()
        .unwrap();
    let addr = hook.local_addr().unwrap();
    let ca_pem = String::from_utf8(hook.ca_bundle()).unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn({
        let stop = stop.clone();
        async move { hook.run(stop).await }
    });
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    server.register_service(SVC_NS, SVC_NAME, 443, addr);
    let mut definition = crd(&ca_pem);
    definition["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["path"] =
        json!(CONVERT_PATH);
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (code, body) = send(&server, "POST", crds, Some(definition)).await;
    assert_eq!(code, 201, "{body}");

    let (code, created) = send(&server, "POST", V1, Some(foo_v1("k", 4))).await;
    assert_eq!(
        (code, &created["spec"]),
        (201, &json!({"size": 4})),
        "{created}"
    );
    assert_eq!(stored_spec(&server, "k").await, json!({"replicas": 4}));
    let (code, patched) = send_typed(
        &server,
        "PATCH",
        &format!("{V1}/k"),
        Some(json!({"spec": {"size": 6}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(
        (code, &patched["spec"]),
        (200, &json!({"size": 6})),
        "{patched}"
    );
    let (code, list) = send(&server, "GET", V1, None).await;
    assert_eq!(
        (code, &list["items"][0]["spec"]),
        (200, &json!({"size": 6}))
    );
    let (code, status) = send(&server, "POST", V1, Some(foo_v1("neg", -1))).await;
    assert_eq!(code, 500, "{status}");
    assert!(
        status["message"].as_str().is_some_and(|m| m
            .starts_with("conversion webhook for example.com/v1, Kind=Foo failed: ")
            && m.contains("size -1 is negative")),
        "{status}"
    );
    stop.cancel();
    running.await.unwrap().unwrap();
}
