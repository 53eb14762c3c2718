//! The conversion webhook round trip against a real HTTPS webhook in the test process
//! (hyper over tokio-rustls, a CA and serving certificate from rcgen through
//! `crate::tls`), with kube-apiserver's behaviour and texts
//! (apiextensions-apiserver `pkg/apiserver/conversion/webhook_converter.go`,
//! `converter.go`): a v1 (`spec.size`) ↔ v2 (`spec.replicas`) conversion, a list in one
//! review, a `Failure` result, an answer for another uid, an untrusted certificate, and a
//! CRD served in two versions whose objects are stored in the storage version.

#![allow(clippy::unwrap_used)]

use std::{
    convert::Infallible,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use super::*;
use crate::{AuthConfig, engine::EngineConfig};

/// What the test webhook answers.
#[derive(Clone, Copy)]
enum Mode {
    /// Converts v1 `spec.size` ↔ v2 `spec.replicas` and adds a label.
    Convert,
    /// `result.status: Failure` with a message.
    Fail,
    /// A successful answer for another uid.
    WrongUid,
}

struct Hook {
    addr: SocketAddr,
    ca_pem: String,
    calls: Arc<AtomicUsize>,
}

fn convert_one(obj: &Value, desired: &str) -> Value {
    let mut out = obj.clone();
    out["apiVersion"] = json!(desired);
    let spec = out["spec"]
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut new_spec = serde_json::Map::new();
    for (k, v) in spec {
        let k = match (desired, k.as_str()) {
            ("example.com/v2", "size") => "replicas".to_owned(),
            ("example.com/v1", "replicas") => "size".to_owned(),
            _ => k,
        };
        new_spec.insert(k, v);
    }
    out["spec"] = Value::Object(new_spec);
    out["metadata"]["labels"]["converted-to"] = json!(desired.replace('/', "_"));
    // Changes to other metadata are ignored by the API server.
    out["metadata"]["generation"] = json!(99);
    out
}

fn answer(review: &Value, mode: Mode) -> Value {
    let uid = review["request"]["uid"].clone();
    let desired = review["request"]["desiredAPIVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let objects = review["request"]["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let response = match mode {
        Mode::Convert => json!({"uid": uid, "result": {"status": "Success"},
            "convertedObjects": objects.iter().map(|o| convert_one(o, &desired)).collect::<Vec<_>>()}),
        Mode::Fail => {
            json!({"uid": uid, "result": {"status": "Failure", "message": "size must be even"}})
        }
        Mode::WrongUid => json!({"uid": "not-the-request", "result": {"status": "Success"},
            "convertedObjects": objects}),
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response})
}

async fn start_hook(mode: Mode) -> Hook {
    let tls = crate::tls::generate([127, 0, 0, 1].into(), None).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let acceptor = tls.acceptor.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                // An untrusting client aborts the handshake: nothing to serve.
                let Ok(stream) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = service_fn(move |req: Request<Incoming>| {
                    let counter = counter.clone();
                    async move {
                        counter.fetch_add(1, Ordering::SeqCst);
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let review: Value = serde_json::from_slice(&body).unwrap();
                        let out = serde_json::to_vec(&answer(&review, mode)).unwrap();
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(out))))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Hook {
        addr,
        ca_pem: tls.ca_pem,
        calls,
    }
}

fn webhook(hook: &Hook, ca_pem: &str) -> Webhook {
    let client = ClientConfig::from_json(&json!({
        "url": format!("https://127.0.0.1:{}/convert", hook.addr.port()),
        "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem),
    }))
    .unwrap();
    Webhook {
        client,
        review_versions: vec!["v1".into()],
    }
}

fn shared() -> Arc<Shared> {
    let engine = crate::apiserver::new_engine(EngineConfig::default());
    Shared::new(engine, &AuthConfig::default())
}

fn foo_v1(name: &str, size: i64) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Foo",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "resourceVersion": "7",
            "labels": {"app": "x"}},
        "spec": {"size": size}})
}

/// webhook_converter.go + converter.go: one review holds every object of a list not
/// already in the desired version; objects already there are not sent; the answer's
/// objects replace them in place with the original metadata but the webhook's labels.
#[tokio::test]
async fn converts_a_list_in_one_review() {
    let hook = start_hook(Mode::Convert).await;
    let shared = shared();
    let already = json!({"apiVersion": "example.com/v2", "kind": "Foo",
        "metadata": {"name": "c", "namespace": "default"}, "spec": {"replicas": 5}});
    let out = convert(
        &shared,
        &webhook(&hook, &hook.ca_pem),
        vec![foo_v1("a", 1), already.clone(), foo_v1("b", 2)],
        "example.com/v2",
    )
    .await
    .unwrap();
    assert_eq!(
        hook.calls.load(Ordering::SeqCst),
        1,
        "one review for the list"
    );
    assert_eq!(out.len(), 3);
    assert_eq!(out[0]["apiVersion"], "example.com/v2");
    assert_eq!(out[0]["spec"], json!({"replicas": 1}));
    assert_eq!(out[1], already, "not sent, unchanged");
    assert_eq!(out[2]["spec"], json!({"replicas": 2}));
    assert_eq!(
        out[0]["metadata"],
        json!({"name": "a", "namespace": "default", "uid": "uid-a", "resourceVersion": "7",
            "labels": {"app": "x", "converted-to": "example.com_v2"}}),
        "labels from the webhook, the rest of metadata restored"
    );
    // Nothing to convert: no call.
    let same = convert(
        &shared,
        &webhook(&hook, &hook.ca_pem),
        vec![already],
        "example.com/v2",
    )
    .await
    .unwrap();
    assert_eq!(same.len(), 1);
    assert_eq!(hook.calls.load(Ordering::SeqCst), 1);
}

/// webhook_converter.go: a `Failure` result's message is the error, as
/// `conversion webhook for <gvk> failed: <message>`, answered as 500.
#[tokio::test]
async fn failure_result_is_returned_to_the_client() {
    let hook = start_hook(Mode::Fail).await;
    let err = convert(
        &shared(),
        &webhook(&hook, &hook.ca_pem),
        vec![foo_v1("a", 3)],
        "example.com/v2",
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "conversion webhook for example.com/v1, Kind=Foo failed: size must be even"
    );
}

/// webhook_converter.go `getConvertedObjectsFromResponse`: a v1 answer must carry the
/// request's uid.
#[tokio::test]
async fn answer_for_another_uid_is_refused() {
    let hook = start_hook(Mode::WrongUid).await;
    let err = convert(
        &shared(),
        &webhook(&hook, &hook.ca_pem),
        vec![foo_v1("a", 3)],
        "example.com/v2",
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, 500);
    assert!(
        err.message.starts_with(
            "conversion webhook for example.com/v1, Kind=Foo failed: expected response.uid=\""
        ),
        "{}",
        err.message
    );
    assert!(
        err.message.ends_with("\", got \"not-the-request\""),
        "{}",
        err.message
    );
}

/// A certificate the caBundle does not trust fails the call with Go's x509 text, inside
/// kube-apiserver's `Post "<url>?timeout=30s": ...`.
#[tokio::test]
async fn untrusted_certificate_fails_the_call() {
    let hook = start_hook(Mode::Convert).await;
    // A CA of another name: the hook's certificate has no issuer in the bundle.
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "some-other-ca");
    let key = rcgen::KeyPair::generate().unwrap();
    let other_ca = params.self_signed(&key).unwrap().pem();
    let err = convert(
        &shared(),
        &webhook(&hook, &other_ca),
        vec![foo_v1("a", 3)],
        "example.com/v2",
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        format!(
            "conversion webhook for example.com/v1, Kind=Foo failed: Post \"https://127.0.0.1:{}/convert?timeout=30s\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            hook.addr.port()
        )
    );
    assert_eq!(hook.calls.load(Ordering::SeqCst), 0);
}

const CRD: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "foos.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Foo", "plural": "foos"},
        "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
            "clientConfig": {"url": "URL", "caBundle": "CA"}}},
        "versions": [
            {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object",
                "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}},
            {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object",
                "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}]}}"#;

/// The flow the handlers follow (see the module docs): a request in v2 is planned on the
/// storage version v1; its body is converted to v1 and stored in v1; reads come back
/// converted to v2. A v1 request needs no plan.
#[tokio::test]
async fn stored_in_the_storage_version_served_in_the_request_version() {
    let hook = start_hook(Mode::Convert).await;
    let shared = shared();
    let engine = shared.engine.clone();
    let crd = CRD
        .replace(
            "URL",
            &format!("https://127.0.0.1:{}/convert", hook.addr.port()),
        )
        .replace(
            "CA",
            &base64::engine::general_purpose::STANDARD.encode(&hook.ca_pem),
        );
    crate::load_crds(&engine, "crd", &crd).unwrap();
    let v1 = engine.registry().get("example.com", "v1", "foos").unwrap();
    let v2 = engine.registry().get("example.com", "v2", "foos").unwrap();
    assert!(Plan::for_request(&engine, &v1).unwrap().is_none());
    let plan = Plan::for_request(&engine, &v2).unwrap().unwrap();
    assert_eq!(plan.storage.version, "v1");

    // create in v2
    let body = json!({"apiVersion": "example.com/v2", "kind": "Foo",
        "metadata": {"name": "a", "namespace": "default"}, "spec": {"replicas": 4}});
    let to_store = plan.to_storage(&shared, body).await.unwrap();
    assert_eq!(to_store["spec"], json!({"size": 4}));
    let target = crate::engine::Target {
        rt: plan.storage.clone(),
        namespace: Some("default".into()),
        name: None,
        subresource: None,
    };
    let created = engine
        .create(&target, to_store, &crate::engine::WriteOptions::default())
        .unwrap();
    assert_eq!(created["apiVersion"], "example.com/v1", "stored in v1");
    let shown = plan.one_to_request(&shared, created).await.unwrap();
    assert_eq!(shown["apiVersion"], "example.com/v2");
    assert_eq!(shown["spec"], json!({"replicas": 4}));

    // get in v2
    let stored = engine
        .get(&crate::engine::Target {
            name: Some("a".into()),
            ..target.clone()
        })
        .unwrap();
    assert_eq!(stored["spec"], json!({"size": 4}));
    let got = plan.one_to_request(&shared, stored).await.unwrap();
    assert_eq!(got["spec"], json!({"replicas": 4}));
    assert!(
        got["metadata"]["uid"]
            .as_str()
            .is_some_and(|u| !u.is_empty())
    );
}

/// validation.go `validateCustomResourceConversion`: strategy Webhook without a webhook
/// makes the CRD invalid (422).
#[tokio::test]
async fn webhook_strategy_without_webhook_is_refused() {
    let engine = crate::apiserver::new_engine(EngineConfig::default());
    let crd = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Foo", "plural": "foos"},
            "conversion": {"strategy": "Webhook"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}"#;
    let err = crate::load_crds(&engine, "crd", crd)
        .unwrap_err()
        .to_string();
    for cause in [
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
        "spec.conversion.conversionReviewVersions: Required value: must include at least one of v1, v1beta1",
    ] {
        assert!(err.contains(cause), "{err}");
    }
    assert!(
        err.contains(
            "CustomResourceDefinition.apiextensions.k8s.io \"foos.example.com\" is invalid: "
        ),
        "{err}"
    );
}
