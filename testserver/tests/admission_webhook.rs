//! Admission webhooks called by the test server as kube-apiserver calls them
//! (`k8s.io/apiserver/pkg/admission/plugin/webhook`: `generic/webhook.go` ShouldCallHook,
//! `mutating/dispatcher.go`, `validating/dispatcher.go`, `request/admissionreview.go`,
//! `errors/statuserror.go`), against a webhook server inside the test: hyper on
//! tokio-rustls with a certificate from its own rcgen CA, reached through a registered
//! Service (or a URL), its CA in the configuration's `caBundle`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    convert::Infallible,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use kubegen_testserver::{ClusterConfig, TestServer};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};

/// The Service the configurations name.
const SVC_NS: &str = "system";
const SVC_NAME: &str = "hook";

/// A webhook server: its address, the PEM of the CA that signed its certificate, and the
/// AdmissionRequests it received, with the path they came to.
struct HookServer {
    addr: SocketAddr,
    ca_pem: String,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
    /// TLS connections accepted.
    connections: Arc<std::sync::atomic::AtomicUsize>,
}

impl HookServer {
    fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }

    /// The requests that came to `path`, oldest first.
    fn requests(&self, path: &str) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, r)| r.clone())
            .collect()
    }
}

/// A CA and a certificate it signed for the Service's DNS name and 127.0.0.1.
fn certificate() -> (String, rustls::ServerConfig) {
    // A name of its own for each CA: a certificate is then checked against the bundle's
    // CAs by issuer name, and one from another CA has no issuer there.
    static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("webhook-test-ca-{serial}"));
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let params = CertificateParams::new(vec![
        format!("{SVC_NAME}.{SVC_NS}.svc"),
        "127.0.0.1".to_string(),
    ])
    .unwrap();
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

/// An AdmissionReview answer for `request`.
fn answer(request: &Value, response: Value) -> Value {
    let mut response = response;
    response["uid"] = request["uid"].clone();
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

fn json_patch(ops: Value) -> Value {
    json!({
        "allowed": true,
        "patchType": "JSONPatch",
        "patch": base64::engine::general_purpose::STANDARD.encode(ops.to_string()),
    })
}

/// The test server's URL and token, for the hook that races the write it admits.
static RACE: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();

/// What each path answers.
async fn respond(path: &str, request: &Value) -> Result<String, ()> {
    let labelled = request.pointer("/object/metadata/labels").is_some();
    let body = match path {
        "/allow" => answer(request, json!({"allowed": true})),
        "/warn" => answer(
            request,
            json!({"allowed": true, "warnings": ["replicas is deprecated", "second warning"],
                "auditAnnotations": {"checked": "yes"}}),
        ),
        "/deny" => answer(
            request,
            json!({"allowed": false, "status": {"code": 422, "message": "replicas must be between 0 and 10"}}),
        ),
        "/deny-bare" => answer(request, json!({"allowed": false})),
        "/label" if request.pointer("/object/metadata/labels/mutated").is_some() => {
            answer(request, json!({"allowed": true}))
        }
        "/label" if labelled => answer(
            request,
            json_patch(json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}])),
        ),
        "/label" => answer(
            request,
            json_patch(
                json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]),
            ),
        ),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            answer(request, json!({"allowed": true}))
        }
        "/bump" => {
            // Writes the object under admission once, from inside the hook: the write
            // being admitted then conflicts and is admitted again.
            if request.pointer("/oldObject/data/bumped").is_none()
                && request.pointer("/object/data/bumped").is_none()
                && let Some((url, token)) = RACE.get()
            {
                let name = request["name"].as_str().unwrap_or_default();
                let resp = reqwest::Client::new()
                    .patch(format!("{url}{CMS}/{name}"))
                    .bearer_auth(token)
                    .header("content-type", "application/merge-patch+json")
                    .body(r#"{"data":{"bumped":"1"}}"#)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status().as_u16(), 200);
            }
            answer(request, json!({"allowed": true}))
        }
        "/garbage" => return Ok("this is not JSON".to_string()),
        "/wrong-uid" => {
            let mut a = answer(request, json!({"allowed": true}));
            a["response"]["uid"] = json!("not-the-uid");
            a
        }
        _ => return Err(()),
    };
    Ok(body.to_string())
}

/// Starts a webhook server on the test's runtime.
async fn hook_server() -> HookServer {
    let (ca_pem, config) = certificate();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let record = seen.clone();
    let connections: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
    let accepted = connections.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let record = record.clone();
            let accepted = accepted.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let service = service_fn(move |req: Request<Incoming>| {
                    let record = record.clone();
                    async move {
                        let path = req.uri().path().to_string();
                        let bytes = req.into_body().collect().await.unwrap().to_bytes();
                        let review: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                        let request = review["request"].clone();
                        record.lock().unwrap().push((path.clone(), request.clone()));
                        let (code, body) = match respond(&path, &request).await {
                            Ok(body) => (200, body),
                            Err(()) => (404, "no such hook".to_string()),
                        };
                        Ok::<_, Infallible>(
                            Response::builder()
                                .status(code)
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from(body)))
                                .unwrap(),
                        )
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    HookServer {
        addr,
        ca_pem,
        seen,
        connections,
    }
}

/// A test server without controllers, with the webhook server's Service registered.
async fn server(hooks: &HookServer) -> TestServer {
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    server.register_service(SVC_NS, SVC_NAME, 443, hooks.addr);
    server
}

/// One webhook of a configuration: by the Service, at `path`, for ConfigMap CREATEs,
/// with `extra` merged over it.
fn webhook(hooks: &HookServer, name: &str, path: &str, extra: Value) -> Value {
    let mut hook = json!({
        "name": name,
        "clientConfig": {
            "service": {"namespace": SVC_NS, "name": SVC_NAME, "path": path},
            "caBundle": hooks.ca_bundle(),
        },
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    if let (Some(h), Some(e)) = (hook.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            h.insert(k.clone(), v.clone());
        }
    }
    hook
}

/// An HTTP reply: code, JSON body and `Warning` headers.
struct Reply {
    code: u16,
    body: Value,
    warnings: Vec<String>,
}

async fn send(server: &TestServer, method: &str, path: &str, body: Option<Value>) -> Reply {
    send_typed(server, method, path, body, "application/json").await
}

async fn send_typed(
    server: &TestServer,
    method: &str,
    path: &str,
    body: Option<Value>,
    content_type: &str,
) -> Reply {
    let client = reqwest::Client::new();
    let mut req = client
        .request(method.parse().unwrap(), format!("{}{path}", server.url()))
        .bearer_auth(server.admin_token())
        .header("content-type", content_type);
    if let Some(body) = body {
        req = req.body(body.to_string());
    }
    let resp = req.send().await.unwrap();
    let code = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let body = resp.json().await.unwrap_or(Value::Null);
    Reply {
        code,
        body,
        warnings,
    }
}

async fn configure(server: &TestServer, kind: &str, name: &str, webhooks: Vec<Value>) {
    let plural = format!("{}s", kind.to_lowercase());
    let reply = send(
        server,
        "POST",
        &format!("/apis/admissionregistration.k8s.io/v1/{plural}"),
        Some(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": webhooks,
        })),
    )
    .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
}

async fn validating(server: &TestServer, name: &str, webhooks: Vec<Value>) {
    configure(server, "ValidatingWebhookConfiguration", name, webhooks).await;
}

async fn mutating(server: &TestServer, name: &str, webhooks: Vec<Value>) {
    configure(server, "MutatingWebhookConfiguration", name, webhooks).await;
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

/// A denial answers with the hook's code and kube-apiserver's `admission webhook "x"
/// denied the request: ...` (errors/statuserror.go ToStatusErr); nothing is stored. A
/// denial without a status is a 403 "without explanation".
#[tokio::test]
async fn a_validating_denial_carries_the_hooks_message_and_code_and_stores_nothing() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    validating(
        &server,
        "deny",
        vec![webhook(&hooks, "deny.example.com", "/deny", json!({}))],
    )
    .await;
    let reply = send(&server, "POST", CMS, Some(configmap("a"))).await;
    assert_eq!(reply.code, 422, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        "admission webhook \"deny.example.com\" denied the request: replicas must be between 0 and 10"
    );
    assert_eq!(
        send(&server, "GET", &format!("{CMS}/a"), None).await.code,
        404
    );

    validating(
        &server,
        "deny2",
        vec![webhook(
            &hooks,
            "bare.example.com",
            "/deny-bare",
            json!({"rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["secrets"]}]}),
        )],
    )
    .await;
    let reply = send(
        &server,
        "POST",
        "/api/v1/namespaces/default/secrets",
        Some(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})),
    )
    .await;
    assert_eq!(reply.code, 403);
    assert_eq!(reply.body["reason"], "Forbidden");
    assert_eq!(
        reply.body["message"],
        "admission webhook \"bare.example.com\" denied the request without explanation"
    );
}

/// An allowed request's warnings become `Warning: 299 - "..."` headers
/// (validating/dispatcher.go `warning.AddWarning`), its audit annotations the audit
/// event's as `<hook>/<key>`.
#[tokio::test]
async fn warnings_of_an_allowed_request_become_warning_headers() {
    let hooks = hook_server().await;
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .audit()
        .start()
        .await
        .unwrap();
    server.register_service(SVC_NS, SVC_NAME, 443, hooks.addr);
    validating(
        &server,
        "warn",
        vec![webhook(&hooks, "warn.example.com", "/warn", json!({}))],
    )
    .await;
    let reply = send(&server, "POST", CMS, Some(configmap("a"))).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(
        reply.warnings,
        [
            "299 - \"replicas is deprecated\"",
            "299 - \"second warning\""
        ]
    );
    let events = server.audit_events();
    let create = events
        .iter()
        .rev()
        .find(|e| e.verb == "create" && e.annotations.keys().any(|k| k.starts_with("warn.")))
        .expect("the create's event");
    assert_eq!(
        create
            .annotations
            .get("warn.example.com/checked")
            .map(String::as_str),
        Some("yes")
    );
}

/// A mutating hook's JSONPatch is applied and stored, and validating hooks see the
/// mutated object; a hook with `reinvocationPolicy: IfNeeded` is called again after a
/// later hook changed the object (mutating/dispatcher.go), one with `Never` is not.
#[tokio::test]
async fn mutations_are_stored_and_reinvocation_calls_a_hook_again() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    mutating(
        &server,
        "a-first",
        vec![
            webhook(
                &hooks,
                "again.example.com",
                "/allow",
                json!({"reinvocationPolicy": "IfNeeded"}),
            ),
            webhook(&hooks, "once.example.com", "/warn", json!({})),
        ],
    )
    .await;
    mutating(
        &server,
        "b-second",
        vec![webhook(&hooks, "label.example.com", "/label", json!({}))],
    )
    .await;
    validating(
        &server,
        "check",
        vec![webhook(&hooks, "check.example.com", "/allow", json!({}))],
    )
    .await;
    let reply = send(&server, "POST", CMS, Some(configmap("a"))).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(reply.body["metadata"]["labels"]["mutated"], "yes");
    let stored = send(&server, "GET", &format!("{CMS}/a"), None).await;
    assert_eq!(stored.body["metadata"]["labels"]["mutated"], "yes");
    // "/allow" serves the IfNeeded mutating hook (twice) and the validating one (once,
    // with the mutated object).
    let allow = hooks.requests("/allow");
    assert_eq!(allow.len(), 3, "{allow:#?}");
    assert!(allow[0]["object"]["metadata"].get("labels").is_none());
    assert_eq!(allow[1]["object"]["metadata"]["labels"]["mutated"], "yes");
    assert_eq!(allow[2]["object"]["metadata"]["labels"]["mutated"], "yes");
    assert_eq!(hooks.requests("/warn").len(), 1, "Never is not reinvoked");
    assert_eq!(hooks.requests("/label").len(), 1);
}

/// Hooks whose namespaceSelector, objectSelector, rules or scope do not match are not
/// called (predicates/namespace, predicates/object, predicates/rules).
#[tokio::test]
async fn non_matching_selectors_rules_and_scope_skip_the_hook() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "watched", "labels": {"webhooks": "on"}}});
    assert_eq!(
        send(&server, "POST", "/api/v1/namespaces", Some(ns))
            .await
            .code,
        201
    );
    let deny = |name: &str, extra: Value| webhook(&hooks, name, "/deny", extra);
    validating(
        &server,
        "skips",
        vec![
            deny(
                "ns.example.com",
                json!({"namespaceSelector": {"matchLabels": {"webhooks": "on"}}}),
            ),
            deny(
                "obj.example.com",
                json!({"objectSelector": {"matchExpressions": [{"key": "checked", "operator": "Exists"}]}}),
            ),
            deny(
                "rules.example.com",
                json!({"rules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}),
            ),
            deny(
                "scope.example.com",
                json!({"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster"}]}),
            ),
        ],
    )
    .await;
    let reply = send(&server, "POST", CMS, Some(configmap("a"))).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert!(hooks.requests("/deny").is_empty());

    // Each selector does match what it names.
    let reply = send(
        &server,
        "POST",
        "/api/v1/namespaces/watched/configmaps",
        Some(configmap("b")),
    )
    .await;
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("\"ns.example.com\"")
    );
    let mut labelled = configmap("c");
    labelled["metadata"]["labels"] = json!({"checked": "yes"});
    let reply = send(&server, "POST", CMS, Some(labelled)).await;
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("\"obj.example.com\"")
    );
    let reply = send(
        &server,
        "POST",
        "/api/v1/namespaces",
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n2"}})),
    )
    .await;
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("\"scope.example.com\"")
    );
}

/// matchConditions decide the call: a false condition skips the hook, a true one calls
/// it; an error follows failurePolicy (generic/webhook.go: Fail is a 403).
#[tokio::test]
async fn match_conditions_decide_the_call() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    validating(
        &server,
        "conditions",
        vec![
            webhook(
                &hooks,
                "cel.example.com",
                "/deny",
                json!({"matchConditions": [
                    {"name": "named-bad", "expression": "object.metadata.name.startsWith('bad')"},
                    {"name": "by-admin", "expression": "request.userInfo.username == 'admin'"},
                ]}),
            ),
            webhook(
                &hooks,
                "broken.example.com",
                "/allow",
                json!({"matchConditions": [{"name": "err", "expression": "object.nosuch.field == 1"}], "failurePolicy": "Ignore"}),
            ),
        ],
    )
    .await;
    assert_eq!(
        send(&server, "POST", CMS, Some(configmap("good")))
            .await
            .code,
        201
    );
    let reply = send(&server, "POST", CMS, Some(configmap("bad-one"))).await;
    assert_eq!(reply.code, 422, "{}", reply.body);
    assert_eq!(hooks.requests("/deny").len(), 1);
    assert!(
        hooks.requests("/allow").is_empty(),
        "an error under Ignore skips"
    );
}

/// Calls that fail — a timeout, garbage, the wrong uid, a certificate the bundle does not
/// trust — end the request with kube-apiserver's 500 under `failurePolicy: Fail` and are
/// ignored under `Ignore` (validating/dispatcher.go; request/admissionreview.go).
#[tokio::test]
async fn failed_calls_follow_the_failure_policy() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    let other_ca = base64::engine::general_purpose::STANDARD.encode(certificate().0);
    let cases = [
        (
            "slow",
            "/slow",
            json!({"timeoutSeconds": 1}),
            "context deadline exceeded",
        ),
        (
            "garbage",
            "/garbage",
            json!({}),
            "couldn't decode the response",
        ),
        (
            "uid",
            "/wrong-uid",
            json!({}),
            "received invalid webhook response: expected response.uid=",
        ),
        (
            "untrusted",
            "/allow",
            json!({"clientConfig": {"service": {"namespace": SVC_NS, "name": SVC_NAME, "path": "/allow"}, "caBundle": other_ca}}),
            "x509: certificate signed by unknown authority",
        ),
    ];
    for (name, path, extra, text) in &cases {
        let hook_name = format!("{name}.example.com");
        let mut rule = extra.clone();
        rule["rules"] = json!([{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]);
        rule["objectSelector"] = json!({"matchLabels": {"case": name}});
        validating(
            &server,
            name,
            vec![webhook(&hooks, &hook_name, path, rule.clone())],
        )
        .await;
        let mut cm = configmap(name);
        cm["metadata"]["labels"] = json!({"case": name});
        let reply = send(&server, "POST", CMS, Some(cm.clone())).await;
        assert_eq!(reply.code, 500, "{name}: {}", reply.body);
        assert_eq!(reply.body["reason"], "InternalError");
        let message = reply.body["message"].as_str().unwrap();
        let prefix = format!("Internal error occurred: failed calling webhook \"{hook_name}\": ");
        assert!(message.starts_with(&prefix), "{name}: {message}");
        assert!(message.contains(text), "{name}: {message}");
        if *path != "/wrong-uid" {
            assert!(
                message.contains("failed to call webhook: Post \"https://hook.system.svc:443/"),
                "{name}: {message}"
            );
        }
        assert_eq!(
            send(&server, "GET", &format!("{CMS}/{name}"), None)
                .await
                .code,
            404
        );

        // The same hook with Ignore: the request goes on.
        let mut ignoring = rule;
        ignoring["failurePolicy"] = json!("Ignore");
        let config =
            format!("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}");
        assert_eq!(send(&server, "DELETE", &config, None).await.code, 200);
        validating(
            &server,
            name,
            vec![webhook(&hooks, &hook_name, path, ignoring)],
        )
        .await;
        let reply = send(&server, "POST", CMS, Some(cm)).await;
        assert_eq!(reply.code, 201, "{name}: {}", reply.body);
    }
}

/// A dry run reaching a hook with side effects is refused whatever the failurePolicy
/// (`admission webhook "x" does not support dry run`, errors.NewDryRunUnsupportedErr); a
/// hook with `sideEffects: None` is called with `dryRun: true`.
#[tokio::test]
async fn a_dry_run_to_a_hook_with_side_effects_is_refused() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    validating(
        &server,
        "effects",
        vec![webhook(
            &hooks,
            "effects.example.com",
            "/allow",
            json!({"sideEffects": "Some", "failurePolicy": "Ignore"}),
        )],
    )
    .await;
    let reply = send(
        &server,
        "POST",
        &format!("{CMS}?dryRun=All"),
        Some(configmap("a")),
    )
    .await;
    assert_eq!(reply.code, 400, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        "admission webhook \"effects.example.com\" does not support dry run"
    );
    assert!(hooks.requests("/allow").is_empty());
    validating(
        &server,
        "no-effects",
        vec![webhook(&hooks, "none.example.com", "/warn", json!({}))],
    )
    .await;
    send(
        &server,
        "DELETE",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/effects",
        None,
    )
    .await;
    let reply = send(
        &server,
        "POST",
        &format!("{CMS}?dryRun=All"),
        Some(configmap("a")),
    )
    .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(hooks.requests("/warn")[0]["dryRun"], true);
    assert_eq!(
        send(&server, "GET", &format!("{CMS}/a"), None).await.code,
        404
    );
}

/// The AdmissionReview carries kube-apiserver's fields: a fresh uid per call, kind,
/// resource, requestKind, requestResource, name, namespace, operation, userInfo, object,
/// oldObject, dryRun and options (request/admissionreview.go CreateAdmissionObjects); an
/// update and a patch send the old object, a delete sends it as oldObject with no object,
/// and a `configmaps`-less `*/status` rule sees only status writes.
#[tokio::test]
async fn reviews_carry_kube_apiservers_fields_for_create_update_patch_delete_and_status() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    validating(
        &server,
        "all",
        vec![
            webhook(
                &hooks,
                "all.example.com",
                "/allow",
                json!({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}),
            ),
            webhook(
                &hooks,
                "status.example.com",
                "/warn",
                json!({"rules": [{"operations": ["UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/status"]}]}),
            ),
        ],
    )
    .await;
    let reply = send(
        &server,
        "POST",
        &format!("{CMS}?fieldManager=tester"),
        Some(configmap("a")),
    )
    .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    let created = &hooks.requests("/allow")[0];
    assert!(!created["uid"].as_str().unwrap().is_empty());
    assert_eq!(
        created["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        created["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(created["requestKind"], created["kind"]);
    assert_eq!(created["requestResource"], created["resource"]);
    assert_eq!(created["name"], "a");
    assert_eq!(created["namespace"], "default");
    assert_eq!(created["operation"], "CREATE");
    assert_eq!(created["userInfo"]["username"], "admin");
    assert_eq!(created["object"]["data"]["k"], "v");
    assert!(
        created["object"]["metadata"]["uid"].is_string(),
        "the final object"
    );
    assert_eq!(
        created["object"]["metadata"]["uid"],
        reply.body["metadata"]["uid"]
    );
    assert!(created["oldObject"].is_null());
    assert_eq!(created["dryRun"], false);
    assert_eq!(created["options"]["kind"], "CreateOptions");
    assert_eq!(created["options"]["fieldManager"], "tester");

    let mut changed = reply.body.clone();
    changed["data"]["k"] = json!("w");
    let reply = send(&server, "PUT", &format!("{CMS}/a"), Some(changed)).await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    let reply = send_typed(
        &server,
        "PATCH",
        &format!("{CMS}/a"),
        Some(json!({"data": {"k": "x"}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.body["data"]["k"], "x");
    let reply = send(&server, "DELETE", &format!("{CMS}/a"), None).await;
    assert_eq!(reply.code, 200, "{}", reply.body);

    let seen = hooks.requests("/allow");
    assert_eq!(seen.len(), 4, "{seen:#?}");
    let uids: std::collections::BTreeSet<String> = seen
        .iter()
        .map(|r| r["uid"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(uids.len(), 4, "a fresh uid per call");
    let (update, patch, delete) = (&seen[1], &seen[2], &seen[3]);
    assert_eq!(update["operation"], "UPDATE");
    assert_eq!(update["oldObject"]["data"]["k"], "v");
    assert_eq!(update["object"]["data"]["k"], "w");
    assert_eq!(update["options"]["kind"], "UpdateOptions");
    assert_eq!(patch["operation"], "UPDATE");
    assert_eq!(patch["oldObject"]["data"]["k"], "w");
    assert_eq!(patch["object"]["data"]["k"], "x");
    assert_eq!(delete["operation"], "DELETE");
    assert!(delete["object"].is_null());
    assert_eq!(delete["oldObject"]["data"]["k"], "x");
    assert_eq!(delete["options"]["kind"], "DeleteOptions");
    assert!(hooks.requests("/warn").is_empty(), "no status write yet");

    // A status write: the `*/status` rule matches (a Namespace's status here).
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "s"}});
    let reply = send(&server, "POST", "/api/v1/namespaces", Some(ns)).await;
    assert_eq!(reply.code, 201);
    let mut status = reply.body.clone();
    status["status"] = json!({"phase": "Active"});
    let reply = send(&server, "PUT", "/api/v1/namespaces/s/status", Some(status)).await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    let status_reviews = hooks.requests("/warn");
    assert_eq!(status_reviews.len(), 1);
    assert_eq!(status_reviews[0]["subResource"], "status");
    assert_eq!(status_reviews[0]["requestSubResource"], "status");
    assert_eq!(status_reviews[0]["kind"]["kind"], "Namespace");
    assert!(status_reviews[0]["oldObject"].is_object());
    assert_eq!(reply.warnings.len(), 2);
}

/// A hook named by URL, and a denial of a delete: the object stays.
#[tokio::test]
async fn a_hook_by_url_can_refuse_a_delete() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    assert_eq!(
        send(&server, "POST", CMS, Some(configmap("keep")))
            .await
            .code,
        201
    );
    let mut hook = webhook(
        &hooks,
        "keep.example.com",
        "/deny",
        json!({"rules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}),
    );
    hook["clientConfig"] = json!({
        "url": format!("https://127.0.0.1:{}/deny", hooks.addr.port()),
        "caBundle": hooks.ca_bundle(),
    });
    validating(&server, "keep", vec![hook]).await;
    let reply = send(&server, "DELETE", &format!("{CMS}/keep"), None).await;
    assert_eq!(reply.code, 422, "{}", reply.body);
    assert_eq!(
        send(&server, "GET", &format!("{CMS}/keep"), None)
            .await
            .code,
        200
    );
    let reply = send(&server, "DELETE", &format!("{CMS}?labelSelector="), None).await;
    assert_eq!(reply.code, 422, "deletecollection asks too: {}", reply.body);
    assert_eq!(
        send(&server, "GET", &format!("{CMS}/keep"), None)
            .await
            .code,
        200
    );
}

/// kubectl (over TLS, which it needs to send the token) against the test server: a
/// create refused by a validating webhook shows the webhook's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_is_refused_with_the_webhooks_message() {
    let hooks = hook_server().await;
    let server = TestServer::builder()
        .tls(true)
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    server.register_service(SVC_NS, SVC_NAME, 443, hooks.addr);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let kubectl = |args: &'static [&'static str], stdin: Option<String>| {
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
            child.wait_with_output().unwrap()
        })
    };
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "deny"},
        "webhooks": [webhook(&hooks, "deny.example.com", "/deny", json!({}))],
    });
    let applied = kubectl(&["apply", "-f", "-"], Some(config.to_string()))
        .await
        .unwrap();
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let output = kubectl(
        &[
            "create",
            "configmap",
            "bad",
            "-n",
            "default",
            "--from-literal=k=v",
        ],
        None,
    )
    .await
    .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("admission webhook \"deny.example.com\" denied the request: replicas must be between 0 and 10"),
        "{text}"
    );
}

/// A CRD served in v1 (storage) and v2, without a conversion webhook.
fn two_version_crd() -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema},
                {"name": "v2", "served": true, "storage": false, "schema": schema},
            ],
        },
    })
}

/// `matchPolicy: Equivalent` (the default): a hook whose rules name v1 is called for a
/// request in v2, with the resource, kind and object in v1 and the request's own in
/// requestKind and requestResource (generic/webhook.go); `Exact` is not called.
#[tokio::test]
async fn equivalent_versions_are_sent_in_the_matched_version() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(
        send(&server, "POST", crds, Some(two_version_crd()))
            .await
            .code,
        201
    );
    let v1_rule = json!([{"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets"]}]);
    validating(
        &server,
        "widgets",
        vec![
            webhook(
                &hooks,
                "equivalent.example.com",
                "/allow",
                json!({"rules": v1_rule}),
            ),
            webhook(
                &hooks,
                "exact.example.com",
                "/warn",
                json!({"rules": v1_rule, "matchPolicy": "Exact"}),
            ),
        ],
    )
    .await;
    let widget = json!({"apiVersion": "example.com/v2", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"size": 3}});
    let mut reply = send(
        &server,
        "POST",
        "/apis/example.com/v2/namespaces/default/widgets",
        Some(widget.clone()),
    )
    .await;
    for _ in 0..50 {
        if reply.code != 404 {
            break;
        }
        // The CRD is served once established.
        tokio::time::sleep(Duration::from_millis(20)).await;
        reply = send(
            &server,
            "POST",
            "/apis/example.com/v2/namespaces/default/widgets",
            Some(widget.clone()),
        )
        .await;
    }
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(reply.body["apiVersion"], "example.com/v2");
    let seen = hooks.requests("/allow");
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0]["kind"],
        json!({"group": "example.com", "version": "v1", "kind": "Widget"})
    );
    assert_eq!(seen[0]["resource"]["version"], "v1");
    assert_eq!(seen[0]["requestKind"]["version"], "v2");
    assert_eq!(seen[0]["requestResource"]["version"], "v2");
    assert_eq!(seen[0]["object"]["apiVersion"], "example.com/v1");
    assert!(
        hooks.requests("/warn").is_empty(),
        "Exact does not match v2"
    );
}

/// A create with generateName: the validating hooks see the generated name and the uid,
/// and those are what is stored; an apply that creates is admitted as a CREATE and one
/// that changes as an UPDATE, both with the mutating hook's change stored.
#[tokio::test]
async fn generated_names_and_applies_are_admitted_as_stored() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    let all_ops = json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]);
    mutating(
        &server,
        "label",
        vec![webhook(
            &hooks,
            "label.example.com",
            "/label",
            json!({"rules": all_ops}),
        )],
    )
    .await;
    validating(
        &server,
        "see",
        vec![webhook(
            &hooks,
            "see.example.com",
            "/allow",
            json!({"rules": all_ops}),
        )],
    )
    .await;
    let reply = send(
        &server,
        "POST",
        CMS,
        Some(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}),
        ),
    )
    .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    let seen = hooks.requests("/allow");
    assert_eq!(
        seen[0]["object"]["metadata"]["name"],
        reply.body["metadata"]["name"]
    );
    assert_eq!(
        seen[0]["object"]["metadata"]["uid"],
        reply.body["metadata"]["uid"]
    );
    assert_eq!(
        hooks.requests("/label")[0]["name"],
        "",
        "before the registry"
    );
    assert_eq!(reply.body["metadata"]["labels"]["mutated"], "yes");

    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ap"}, "data": {"k": "1"}});
    let reply = send_typed(
        &server,
        "PATCH",
        &format!("{CMS}/ap?fieldManager=me"),
        Some(applied),
        "application/apply-patch+yaml",
    )
    .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(reply.body["metadata"]["labels"]["mutated"], "yes");
    assert_eq!(hooks.requests("/allow")[1]["operation"], "CREATE");
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ap"}, "data": {"k": "2"}});
    let reply = send_typed(
        &server,
        "PATCH",
        &format!("{CMS}/ap?fieldManager=me"),
        Some(applied),
        "application/apply-patch+yaml",
    )
    .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.body["data"]["k"], "2");
    let update = &hooks.requests("/allow")[2];
    assert_eq!(update["operation"], "UPDATE");
    assert_eq!(update["oldObject"]["data"]["k"], "1");
    let stored = send(&server, "GET", &format!("{CMS}/ap"), None).await;
    assert_eq!(stored.body["data"]["k"], "2");
    assert_eq!(stored.body["metadata"]["labels"]["mutated"], "yes");
    let managers: Vec<_> = stored.body["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["manager"].clone(), e["operation"].clone()))
        .collect();
    assert!(
        managers.contains(&(json!("me"), json!("Apply"))),
        "{managers:?}"
    );
}

/// A write whose object changes while it is admitted is admitted again on the new object,
/// as kube-apiserver's GuaranteedUpdate retries its tryUpdate: the hook here writes the
/// object itself (over HTTP, on the same runtime: no lock is held while hooks run), so the
/// patch lands on top of that write.
#[tokio::test]
async fn a_write_that_lost_a_race_is_admitted_again() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    let _ = RACE.set((server.url(), server.admin_token().to_string()));
    assert_eq!(
        send(&server, "POST", CMS, Some(configmap("race")))
            .await
            .code,
        201
    );
    validating(
        &server,
        "bump",
        vec![webhook(
            &hooks,
            "bump.example.com",
            "/bump",
            json!({"rules": [{"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}),
        )],
    )
    .await;
    let reply = send_typed(
        &server,
        "PATCH",
        &format!("{CMS}/race"),
        Some(json!({"data": {"k": "2"}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.body["data"], json!({"k": "2", "bumped": "1"}));
    // The patch, the hook's own write, and the patch again.
    let seen = hooks.requests("/bump");
    assert_eq!(seen.len(), 3, "{seen:#?}");
    assert!(seen[0]["oldObject"]["data"].get("bumped").is_none());
    assert_eq!(seen[2]["oldObject"]["data"]["bumped"], "1");
}

/// kube-apiserver keeps its webhook clients (`webhook.ClientManager`'s cache) and their
/// keep-alive connections: calls one after another reuse one TLS connection.
#[tokio::test]
async fn calls_one_after_another_reuse_one_connection() {
    let hooks = hook_server().await;
    let server = server(&hooks).await;
    validating(
        &server,
        "allow",
        vec![webhook(&hooks, "allow.example.com", "/allow", json!({}))],
    )
    .await;
    for i in 0..5 {
        let reply = send(&server, "POST", CMS, Some(configmap(&format!("cm-{i}")))).await;
        assert_eq!(reply.code, 201, "{}", reply.body);
    }
    assert_eq!(hooks.requests("/allow").len(), 5);
    assert_eq!(
        hooks.connections.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}
