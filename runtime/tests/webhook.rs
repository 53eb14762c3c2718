//! `kubegen::webhook` over real TLS: a hyper client trusting the server's generated CA posts
//! AdmissionReviews and ConversionReviews; certificates rotate and reload without a
//! restart; the CA bundle is injected into objects of the in-memory test server.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::DynamicObject;
use kubegen::webhook::{
    Admission, AdmissionRequest, AdmissionResponse, CONVERT_PATH, Conversion, Defaulter, Denied,
    Handler, Server, ServerBuilder, Validator, Warnings,
    certs::{CertDir, CertificateSource, SelfSignedConfig},
};
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

// ---------------------------------------------------------------------------------------
// the types

/// Like the foo-operator's Foo: replicas between 0 and 10, a defaulted deployment name.
#[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    plural = "widgets",
    namespaced
)]
struct Widget {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: WidgetSpec,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct WidgetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deployment_name: Option<String>,
}

struct WidgetValidator;

impl Validator<Widget> for WidgetValidator {
    async fn validate_create(&self, w: &Widget) -> Result<Warnings, Denied> {
        match w.spec.replicas {
            Some(r) if !(0..=10).contains(&r) => Err(Denied::invalid(format!(
                "spec.replicas: {r} is not between 0 and 10"
            ))
            .with_warnings(vec!["see the docs".into()])),
            Some(0) => Ok(vec!["replicas 0 stops every pod".into()]),
            _ => Ok(Warnings::new()),
        }
    }

    async fn validate_update(&self, old: &Widget, new: &Widget) -> Result<Warnings, Denied> {
        if old.spec.deployment_name != new.spec.deployment_name {
            return Err(Denied::new("spec.deploymentName is immutable"));
        }
        // the request is at hand
        let request = kubegen::webhook::request().ok_or_else(|| Denied::new("no request"))?;
        Ok(vec![format!(
            "updated by {}",
            request.user_info.username.clone().unwrap_or_default()
        )])
    }

    async fn validate_delete(&self, w: &Widget) -> Result<Warnings, Denied> {
        let protected = w
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("protected"));
        match protected {
            true => Err(Denied::new("protected")
                .with_code(409)
                .with_reason("Conflict")),
            false => Ok(Warnings::new()),
        }
    }
}

struct WidgetDefaulter;

impl Defaulter<Widget> for WidgetDefaulter {
    async fn default(&self, w: &mut Widget) -> Result<(), Denied> {
        w.spec.replicas.get_or_insert(1);
        if w.spec.deployment_name.is_none() {
            let name = w.metadata.name.clone().unwrap_or_default();
            w.spec.deployment_name = Some(format!("{name}-deployment"));
        }
        Ok(())
    }
}

struct Panics;

impl Validator<Widget> for Panics {
    async fn validate_create(&self, w: &Widget) -> Result<Warnings, Denied> {
        if w.metadata.name.as_deref() == Some("boom") {
            panic!("the validator fell over");
        }
        Ok(Warnings::new())
    }
}

/// A raw handler: allows anything labelled `ok`, with an audit annotation.
struct LabelGate;

impl Handler for LabelGate {
    async fn handle(&self, request: AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        let labelled = request
            .object
            .as_ref()
            .and_then(|o| o.metadata.labels.as_ref())
            .is_some_and(|l| l.contains_key("ok"));
        let response = AdmissionResponse::from(&request);
        if labelled {
            response
        } else {
            response.deny("needs the ok label")
        }
    }
}

/// Three versions of one kind: v2 is the hub, v1 and v3 spokes.
mod guests {
    use super::*;

    pub mod v1 {
        use super::*;
        #[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
        #[resource(
            group = "example.com",
            version = "v1",
            kind = "Guest",
            plural = "guests",
            namespaced
        )]
        pub struct Guest {
            pub metadata: ObjectMeta,
            pub spec: GuestSpec,
        }
        #[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
        pub struct GuestSpec {
            /// "first last"
            pub name: String,
        }
    }

    pub mod v2 {
        use super::*;
        #[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
        #[resource(
            group = "example.com",
            version = "v2",
            kind = "Guest",
            plural = "guests",
            namespaced
        )]
        pub struct Guest {
            pub metadata: ObjectMeta,
            pub spec: GuestSpec,
        }
        #[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct GuestSpec {
            pub first_name: String,
            pub last_name: String,
        }
    }

    pub mod v3 {
        use super::*;
        #[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
        #[resource(
            group = "example.com",
            version = "v3",
            kind = "Guest",
            plural = "guests",
            namespaced
        )]
        pub struct Guest {
            pub metadata: ObjectMeta,
            pub spec: GuestSpec,
        }
        #[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
        pub struct GuestSpec {
            /// "last, first"
            pub formal: String,
        }
    }

    impl TryFrom<v1::Guest> for v2::Guest {
        type Error = String;
        fn try_from(g: v1::Guest) -> Result<Self, String> {
            let (first, last) = g
                .spec
                .name
                .split_once(' ')
                .ok_or_else(|| format!("name {:?} is not \"first last\"", g.spec.name))?;
            Ok(v2::Guest {
                metadata: g.metadata,
                spec: v2::GuestSpec {
                    first_name: first.into(),
                    last_name: last.into(),
                },
            })
        }
    }
    impl From<v2::Guest> for v1::Guest {
        fn from(g: v2::Guest) -> Self {
            v1::Guest {
                metadata: g.metadata,
                spec: v1::GuestSpec {
                    name: format!("{} {}", g.spec.first_name, g.spec.last_name),
                },
            }
        }
    }
    impl From<v3::Guest> for v2::Guest {
        fn from(g: v3::Guest) -> Self {
            let (last, first) = g
                .spec
                .formal
                .split_once(", ")
                .unwrap_or((&g.spec.formal, ""));
            v2::Guest {
                metadata: g.metadata,
                spec: v2::GuestSpec {
                    first_name: first.into(),
                    last_name: last.into(),
                },
            }
        }
    }
    impl From<v2::Guest> for v3::Guest {
        fn from(g: v2::Guest) -> Self {
            v3::Guest {
                metadata: g.metadata,
                spec: v3::GuestSpec {
                    formal: format!("{}, {}", g.spec.last_name, g.spec.first_name),
                },
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// the client

/// A TLS client trusting `ca_pem`, for `127.0.0.1` (a SAN of the default certificate).
struct Client {
    addr: SocketAddr,
    tls: tokio_rustls::TlsConnector,
}

struct Answer {
    status: u16,
    body: Vec<u8>,
    /// The leaf certificate the server presented.
    peer: CertificateDer<'static>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

impl Client {
    fn new(
        addr: SocketAddr,
        ca_pem: &[u8],
    ) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca_pem) {
            roots.add(cert?)?;
        }
        assert!(!roots.is_empty(), "the bundle holds a CA");
        let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        // every request a full handshake: a resumed session would skip verifying (and
        // report) the certificate presented now
        config.resumption = rustls::client::Resumption::disabled();
        let addr = SocketAddr::from(([127, 0, 0, 1], addr.port()));
        Ok(Self {
            addr,
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
        })
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Answer, Box<dyn std::error::Error + Send + Sync>> {
        let tcp = tokio::net::TcpStream::connect(self.addr).await?;
        let name = ServerName::IpAddress(self.addr.ip().into());
        let tls = self.tls.connect(name, tcp).await?;
        let peer = tls
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|c| c.first().cloned())
            .ok_or("no peer certificate")?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
        tokio::spawn(connection);
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::HOST, "127.0.0.1")
            .header(http::header::CONTENT_TYPE, content_type)
            .body(Full::new(Bytes::from(body)))?;
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes().to_vec();
        Ok(Answer { status, body, peer })
    }

    async fn post(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<Answer, Box<dyn std::error::Error + Send + Sync>> {
        self.send("POST", path, "application/json", serde_json::to_vec(body)?)
            .await
    }
}

fn widget(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": null},
        "spec": spec,
    })
}

fn review(uid: &str, operation: &str, object: Option<Value>, old: Option<Value>) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
            "resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
            "name": "w", "namespace": "default", "operation": operation,
            "userInfo": {"username": "alice"},
            "object": object, "oldObject": old, "dryRun": false,
        }
    })
}

/// Starts `builder` (on 127.0.0.1, any port) and a client trusting its CA.
async fn start(
    builder: ServerBuilder,
) -> Result<
    (
        Client,
        CancellationToken,
        tokio::task::JoinHandle<()>,
        Server0,
    ),
    Box<dyn std::error::Error + Send + Sync>,
> {
    let server = builder.address(([127, 0, 0, 1], 0).into()).build()?;
    let addr = server.local_addr().ok_or("no address")?;
    let client = Client::new(addr, &server.ca_bundle())?;
    let resolver = server.cert_resolver().clone();
    let metrics = server.metrics().clone();
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let stop = stop.clone();
        async move {
            server.run(stop).await.expect("the server runs");
        }
    });
    Ok((
        client,
        stop,
        running,
        Server0 {
            resolver,
            metrics,
            addr,
        },
    ))
}

/// What a test keeps of a started server.
struct Server0 {
    resolver: kubegen::webhook::certs::CertResolver,
    metrics: kubegen::webhook::WebhookMetrics,
    addr: SocketAddr,
}

fn admission_server() -> ServerBuilder {
    Server::builder()
        .admission(
            "/validate",
            Admission::validating::<Widget, _>(WidgetValidator),
        )
        .admission(
            "/mutate",
            Admission::defaulting::<Widget, _>(WidgetDefaulter),
        )
        .admission("/panics", Admission::validating::<Widget, _>(Panics))
        .admission("/raw", Admission::handler(LabelGate))
}

// ---------------------------------------------------------------------------------------
// admission

#[tokio::test]
async fn validator_allows_denies_and_warns() -> TestResult {
    let (client, stop, running, _) = start(admission_server()).await?;

    let allowed = client
        .post(
            "/validate",
            &review(
                "u1",
                "CREATE",
                Some(widget("w", json!({"replicas": 3}))),
                None,
            ),
        )
        .await?;
    assert_eq!(allowed.status, 200);
    let r = &allowed.json()["response"];
    assert_eq!(r["uid"], "u1");
    assert_eq!(r["allowed"], true);
    assert_eq!(r["status"]["code"], 200);
    assert_eq!(allowed.json()["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(allowed.json()["kind"], "AdmissionReview");

    let warned = client
        .post(
            "/validate",
            &review(
                "u2",
                "CREATE",
                Some(widget("w", json!({"replicas": 0}))),
                None,
            ),
        )
        .await?;
    assert_eq!(warned.json()["response"]["allowed"], true);
    assert_eq!(
        warned.json()["response"]["warnings"],
        json!(["replicas 0 stops every pod"])
    );

    let denied = client
        .post(
            "/validate",
            &review(
                "u3",
                "CREATE",
                Some(widget("w", json!({"replicas": 11}))),
                None,
            ),
        )
        .await?;
    let r = &denied.json()["response"];
    assert_eq!(r["uid"], "u3");
    assert_eq!(r["allowed"], false);
    assert_eq!(r["status"]["code"], 422);
    assert_eq!(r["status"]["reason"], "Invalid");
    assert_eq!(
        r["status"]["message"],
        "spec.replicas: 11 is not between 0 and 10"
    );
    assert_eq!(r["warnings"], json!(["see the docs"]));

    let old = widget("w", json!({"deploymentName": "a"}));
    let immutable = client
        .post(
            "/validate",
            &review(
                "u4",
                "UPDATE",
                Some(widget("w", json!({"deploymentName": "b"}))),
                Some(old.clone()),
            ),
        )
        .await?;
    let r = &immutable.json()["response"];
    assert_eq!(
        (r["allowed"].clone(), r["status"]["code"].clone()),
        (json!(false), json!(403))
    );
    assert_eq!(r["status"]["message"], "spec.deploymentName is immutable");
    let update = client
        .post(
            "/validate",
            &review("u5", "UPDATE", Some(old.clone()), Some(old)),
        )
        .await?;
    assert_eq!(
        update.json()["response"]["warnings"],
        json!(["updated by alice"]),
        "the request is at hand"
    );

    let mut protected = widget("w", json!({}));
    protected["metadata"]["labels"] = json!({"protected": "yes"});
    let delete = client
        .post("/validate", &review("u6", "DELETE", None, Some(protected)))
        .await?;
    assert_eq!(delete.json()["response"]["status"]["code"], 409);
    let delete = client
        .post(
            "/validate",
            &review("u7", "DELETE", None, Some(widget("w", json!({})))),
        )
        .await?;
    assert_eq!(delete.json()["response"]["allowed"], true);

    stop.cancel();
    running.await?;
    Ok(())
}

#[tokio::test]
async fn defaulter_patch_applied_gives_the_defaulted_object() -> TestResult {
    let (client, stop, running, _) = start(admission_server()).await?;
    let mut sent = widget("web", json!({"unknownField": true}));
    sent["metadata"]["labels"] = json!({"a": "b"});
    let answer = client
        .post("/mutate", &review("m1", "CREATE", Some(sent.clone()), None))
        .await?;
    let r = &answer.json()["response"];
    assert_eq!(r["allowed"], true);
    assert_eq!(r["patchType"], "JSONPatch");
    let patch_bytes = base64_decode(r["patch"].as_str().ok_or("a patch")?)?;
    let patch: json_patch::Patch = serde_json::from_slice(&patch_bytes)?;
    let mut patched = sent.clone();
    json_patch::patch(&mut patched, &patch)?;
    // the defaults are in; what the type does not know (unknownField, creationTimestamp:
    // null) is left alone
    let mut expected = sent;
    expected["spec"]["replicas"] = json!(1);
    expected["spec"]["deploymentName"] = json!("web-deployment");
    assert_eq!(patched, expected);

    // already defaulted: no patch
    let done = client
        .post("/mutate", &review("m2", "CREATE", Some(expected), None))
        .await?;
    assert_eq!(done.json()["response"]["allowed"], true);
    assert!(done.json()["response"].get("patch").is_none());
    // DELETE: allowed untouched
    let delete = client
        .post(
            "/mutate",
            &review("m3", "DELETE", None, Some(widget("web", json!({})))),
        )
        .await?;
    assert_eq!(delete.json()["response"]["allowed"], true);

    stop.cancel();
    running.await?;
    Ok(())
}

fn base64_decode(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s)
}

#[tokio::test]
async fn malformed_requests_are_answered_with_400_errors() -> TestResult {
    let (client, stop, running, _) = start(admission_server()).await?;
    let not_json = client
        .send(
            "POST",
            "/validate",
            "application/json",
            b"{not json".to_vec(),
        )
        .await?;
    assert_eq!(not_json.status, 200, "kube-apiserver reads the review");
    assert_eq!(not_json.json()["response"]["allowed"], false);
    assert_eq!(not_json.json()["response"]["status"]["code"], 400);

    let empty = client
        .send("POST", "/validate", "application/json", Vec::new())
        .await?;
    assert_eq!(
        empty.json()["response"]["status"]["message"],
        "request body is empty"
    );

    let body = serde_json::to_vec(&review("c1", "CREATE", Some(widget("w", json!({}))), None))?;
    let yaml = client
        .send("POST", "/validate", "application/yaml", body)
        .await?;
    let r = &yaml.json()["response"];
    assert_eq!(
        (r["status"]["code"].clone(), r["uid"].clone()),
        (json!(400), json!("c1"))
    );

    // an object that is not a Widget (spec.replicas a string)
    let bad = client
        .post(
            "/validate",
            &review(
                "c2",
                "CREATE",
                Some(widget("w", json!({"replicas": "three"}))),
                None,
            ),
        )
        .await?;
    let r = &bad.json()["response"];
    assert_eq!(
        (
            r["allowed"].clone(),
            r["status"]["code"].clone(),
            r["uid"].clone()
        ),
        (json!(false), json!(400), json!("c2"))
    );
    // a CREATE without an object
    let none = client
        .post("/mutate", &review("c3", "CREATE", None, None))
        .await?;
    assert_eq!(none.json()["response"]["status"]["code"], 400);

    let get = client
        .send("GET", "/validate", "application/json", Vec::new())
        .await?;
    assert_eq!(get.status, 405);
    let unknown = client.post("/nowhere", &json!({})).await?;
    assert_eq!(unknown.status, 404);
    let health = client.send("GET", "/healthz", "", Vec::new()).await?;
    assert_eq!(
        (health.status, health.body.as_slice()),
        (200, b"ok".as_slice())
    );

    stop.cancel();
    running.await?;
    Ok(())
}

#[tokio::test]
async fn a_panicking_handler_is_answered_with_500_and_the_server_keeps_serving() -> TestResult {
    let (client, stop, running, _) = start(admission_server()).await?;
    let boom = client
        .post(
            "/panics",
            &review("p1", "CREATE", Some(widget("boom", json!({}))), None),
        )
        .await?;
    let r = &boom.json()["response"];
    assert_eq!(r["uid"], "p1");
    assert_eq!(r["allowed"], false);
    assert_eq!(r["status"]["code"], 500);
    assert!(
        r["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the validator fell over")
    );
    let fine = client
        .post(
            "/panics",
            &review("p2", "CREATE", Some(widget("fine", json!({}))), None),
        )
        .await?;
    assert_eq!(fine.json()["response"]["allowed"], true);
    stop.cancel();
    running.await?;
    Ok(())
}

#[tokio::test]
async fn a_raw_handler_sees_the_request_and_its_objects() -> TestResult {
    let (client, stop, running, _) = start(admission_server()).await?;
    let mut labelled = widget("w", json!({}));
    labelled["metadata"]["labels"] = json!({"ok": ""});
    let ok = client
        .post("/raw", &review("r1", "CREATE", Some(labelled), None))
        .await?;
    assert_eq!(
        (
            ok.json()["response"]["allowed"].clone(),
            ok.json()["response"]["uid"].clone()
        ),
        (json!(true), json!("r1"))
    );
    let no = client
        .post(
            "/raw",
            &review("r2", "CREATE", Some(widget("w", json!({}))), None),
        )
        .await?;
    assert_eq!(no.json()["response"]["allowed"], false);
    assert_eq!(
        no.json()["response"]["status"]["message"],
        "needs the ok label"
    );
    stop.cancel();
    running.await?;
    Ok(())
}

#[tokio::test]
async fn metrics_count_requests_by_webhook_and_code() -> TestResult {
    let (client, stop, running, server) = start(admission_server()).await?;
    client
        .post(
            "/validate",
            &review("x", "CREATE", Some(widget("w", json!({}))), None),
        )
        .await?;
    client
        .send("POST", "/validate", "application/json", b"{".to_vec())
        .await?;
    let mut registry = prometheus_client::registry::Registry::default();
    server.metrics.register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)?;
    assert!(
        text.contains(
            r#"controller_runtime_webhook_requests_total{webhook="/validate",code="200"} 2"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"controller_runtime_webhook_requests_in_flight{webhook="/validate"} 0"#),
        "{text}"
    );
    assert!(
        text.contains(r#"controller_runtime_webhook_latency_seconds_count{webhook="/validate"} 2"#),
        "{text}"
    );
    stop.cancel();
    running.await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// conversion

fn conversion_review(uid: &str, desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects}
    })
}

fn guest(version: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("example.com/{version}"), "kind": "Guest",
        "metadata": {"name": "g", "namespace": "default", "uid": "1234", "labels": {"l": "v"}},
        "spec": spec,
    })
}

#[tokio::test]
async fn conversion_goes_through_the_hub_and_reports_failures() -> TestResult {
    use guests::{v1, v2, v3};
    let conversion = Conversion::<v2::Guest>::new()
        .spoke::<v1::Guest>()
        .spoke::<v3::Guest>();
    assert_eq!(
        conversion.versions(),
        ["example.com/v1", "example.com/v2", "example.com/v3"]
    );
    let (client, stop, running, _) =
        start(Server::builder().conversion(CONVERT_PATH, conversion)).await?;

    // spoke -> hub -> spoke, hub -> spoke, already there
    let objects = vec![
        guest("v1", json!({"name": "Ada Lovelace"})),
        guest("v2", json!({"firstName": "Alan", "lastName": "Turing"})),
        guest("v3", json!({"formal": "Hopper, Grace"})),
    ];
    let answer = client
        .post(
            CONVERT_PATH,
            &conversion_review("c1", "example.com/v3", objects),
        )
        .await?;
    assert_eq!(answer.status, 200);
    let v = answer.json();
    assert_eq!(v["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(v["kind"], "ConversionReview");
    let r = &v["response"];
    assert_eq!(r["uid"], "c1");
    assert_eq!(r["result"]["status"], "Success");
    let converted = r["convertedObjects"].as_array().ok_or("objects")?;
    let formal: Vec<&Value> = converted.iter().map(|o| &o["spec"]["formal"]).collect();
    assert_eq!(
        formal,
        [
            &json!("Lovelace, Ada"),
            &json!("Turing, Alan"),
            &json!("Hopper, Grace")
        ]
    );
    for object in converted {
        assert_eq!(object["apiVersion"], "example.com/v3");
        assert_eq!(object["kind"], "Guest");
        assert_eq!(object["metadata"]["uid"], "1234", "metadata kept");
        assert_eq!(object["metadata"]["labels"]["l"], "v");
    }

    // round trip back to v1
    let back = client
        .post(
            CONVERT_PATH,
            &conversion_review("c2", "example.com/v1", converted.clone()),
        )
        .await?;
    let names: Vec<Value> = back.json()["response"]["convertedObjects"]
        .as_array()
        .ok_or("objects")?
        .iter()
        .map(|o| o["spec"]["name"].clone())
        .collect();
    assert_eq!(
        names,
        [
            json!("Ada Lovelace"),
            json!("Alan Turing"),
            json!("Grace Hopper")
        ]
    );

    // a failing TryFrom: reported in result, uid echoed, nothing converted
    let failing = client
        .post(
            CONVERT_PATH,
            &conversion_review(
                "c3",
                "example.com/v2",
                vec![guest("v1", json!({"name": "Plato"}))],
            ),
        )
        .await?;
    let r = &failing.json()["response"];
    assert_eq!(r["uid"], "c3");
    assert_eq!(r["result"]["status"], "Failure");
    let message = r["result"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("name \"Plato\" is not \"first last\""),
        "{message}"
    );
    assert!(
        message.contains("example.com/v1") && message.contains("example.com/v2"),
        "{message}"
    );
    assert!(r["convertedObjects"].as_array().is_none_or(Vec::is_empty));

    // an unknown version
    let unknown = client
        .post(
            CONVERT_PATH,
            &conversion_review(
                "c4",
                "example.com/v9",
                vec![guest("v1", json!({"name": "A B"}))],
            ),
        )
        .await?;
    assert_eq!(unknown.json()["response"]["result"]["status"], "Failure");
    // not a review
    let garbage = client
        .send("POST", CONVERT_PATH, "application/json", b"[]".to_vec())
        .await?;
    assert_eq!(garbage.status, 400);
    assert_eq!(garbage.json()["response"]["result"]["status"], "Failure");

    stop.cancel();
    running.await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// certificates

#[tokio::test]
async fn the_serving_certificate_rotates_without_a_restart() -> TestResult {
    let config = SelfSignedConfig::default().cert_validity(Duration::from_secs(3));
    let (client, stop, running, server) = start(admission_server().self_signed(config)).await?;
    let body = review("x", "CREATE", Some(widget("w", json!({}))), None);
    let first = client.post("/validate", &body).await?;
    assert_eq!(first.json()["response"]["allowed"], true);
    assert_eq!(Some(first.peer.clone()), server.resolver.certificate());
    // re-issued at two thirds of three seconds; the same CA verifies the new one
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let rotated = loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let answer = client.post("/validate", &body).await?;
        if answer.peer != first.peer {
            break answer;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the certificate never rotated"
        );
    };
    assert_eq!(rotated.json()["response"]["allowed"], true);
    stop.cancel();
    running.await?;
    Ok(())
}

/// A CA and a serving certificate for 127.0.0.1, as PEM (ca, chain, key).
fn issue_files(dir: &std::path::Path) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate()?;
    let cert =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])?.signed_by(&key, &issuer)?;
    // write the key first, the certificate last, as a careless rotation might
    std::fs::write(dir.join("ca.crt"), ca.pem())?;
    std::fs::write(dir.join("tls.key"), key.serialize_pem())?;
    std::fs::write(dir.join("tls.crt"), cert.pem())?;
    Ok(ca.pem())
}

#[tokio::test]
async fn certificates_from_a_directory_are_reloaded_when_they_change() -> TestResult {
    let dir = tempfile::tempdir()?;
    let first_ca = issue_files(dir.path())?;
    let source = CertificateSource::Directory(
        CertDir::new(dir.path()).poll_interval(Duration::from_millis(100)),
    );
    let (client, stop, running, server) = start(admission_server().certificates(source)).await?;
    assert_eq!(server.resolver.ca_bundle(), first_ca.as_bytes());
    let body = review("x", "CREATE", Some(widget("w", json!({}))), None);
    let first = client.post("/validate", &body).await?;

    let second_ca = issue_files(dir.path())?;
    let second_client = Client::new(server.addr, second_ca.as_bytes())?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let reloaded = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Ok(answer) = second_client.post("/validate", &body).await {
            break answer;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the new files were never served"
        );
    };
    assert_ne!(reloaded.peer, first.peer);
    assert_eq!(server.resolver.ca_bundle(), second_ca.as_bytes());
    assert!(
        client.post("/validate", &body).await.is_err(),
        "the old CA no longer verifies"
    );

    // a broken file keeps the current certificate
    std::fs::write(dir.path().join("tls.crt"), "garbage")?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        second_client.post("/validate", &body).await?.peer,
        reloaded.peer
    );
    stop.cancel();
    running.await?;
    Ok(())
}

#[tokio::test]
async fn missing_certificate_files_fail_the_build() {
    let dir = tempfile::tempdir().expect("tempdir");
    let built = Server::builder()
        .address(([127, 0, 0, 1], 0).into())
        .cert_dir(dir.path())
        .build();
    assert!(
        matches!(built, Err(kubegen::webhook::ServerError::Certificate(_))),
        "{built:?}"
    );
}

// ---------------------------------------------------------------------------------------
// CA injection and the manager

#[tokio::test]
async fn the_ca_bundle_is_injected_into_webhook_configurations_and_crds() -> TestResult {
    use k8s_openapi::api::admissionregistration::v1::{
        ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kubegen::client::{ResourceClient, params::PostParams};

    let testserver = kubegen_testserver::TestServer::start().await?;
    let kube = testserver.client()?;
    let vwcs = ResourceClient::<ValidatingWebhookConfiguration>::cluster(kube.clone());
    let hook = |name: &str| ValidatingWebhook {
        name: name.into(),
        admission_review_versions: vec!["v1".into()],
        side_effects: "None".into(),
        client_config: WebhookClientConfig {
            url: Some("https://127.0.0.1:9443/validate".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let vwc = ValidatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some("widgets".into()),
            ..Default::default()
        },
        webhooks: Some(vec![hook("a.example.com"), hook("b.example.com")]),
    };
    vwcs.create(&PostParams::default(), &vwc).await?;
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "guests.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "guests", "singular": "guest", "kind": "Guest", "listKind": "GuestList"},
            "versions": [
                {"name": "v1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                {"name": "v2", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"name": "guests-webhook", "namespace": "default", "path": "/convert", "port": 443}}
            }}
        }
    }))?;
    let crds = ResourceClient::<CustomResourceDefinition>::cluster(kube.clone());
    crds.create(&PostParams::default(), &crd).await?;

    let server = Server::builder()
        .address(([127, 0, 0, 1], 0).into())
        .self_signed(SelfSignedConfig::for_service("guests-webhook", "default"))
        .build()?;
    let bundle = server.ca_bundle();
    let injector = kubegen::webhook::CaInjector::new(kube.clone())
        .validating_webhook_configuration("widgets")
        .crd("guests.example.com");
    injector.inject(&bundle).await?;

    let stored = vwcs.get("widgets").await?;
    for webhook in stored.webhooks.unwrap_or_default() {
        assert_eq!(
            webhook.client_config.ca_bundle.map(|b| b.0),
            Some(bundle.clone()),
            "{}",
            webhook.name
        );
    }
    let stored = crds.get("guests.example.com").await?;
    let injected = stored
        .spec
        .conversion
        .and_then(|c| c.webhook)
        .and_then(|w| w.client_config)
        .and_then(|c| c.ca_bundle)
        .map(|b| b.0);
    assert_eq!(injected, Some(bundle.clone()));
    // again: nothing to write
    let rv = vwcs.get("widgets").await?.metadata.resource_version;
    injector.inject(&bundle).await?;
    assert_eq!(vwcs.get("widgets").await?.metadata.resource_version, rv);

    // an unknown target is an error naming it
    let missing = kubegen::webhook::CaInjector::new(kube).mutating_webhook_configuration("nope");
    let error = missing.inject(&bundle).await.expect_err("not found");
    assert!(
        error
            .to_string()
            .contains("MutatingWebhookConfiguration nope"),
        "{error}"
    );
    Ok(())
}

#[tokio::test]
async fn the_manager_serves_webhooks_and_their_metrics_and_keeps_the_bundle_injected() -> TestResult
{
    use k8s_openapi::api::admissionregistration::v1::{
        MutatingWebhook, MutatingWebhookConfiguration, WebhookClientConfig,
    };
    use kubegen::client::{ResourceClient, params::PostParams};

    let testserver = kubegen_testserver::TestServer::start().await?;
    let kube = testserver.client()?;
    let mwcs = ResourceClient::<MutatingWebhookConfiguration>::cluster(kube.clone());
    mwcs.create(
        &PostParams::default(),
        &MutatingWebhookConfiguration {
            metadata: ObjectMeta {
                name: Some("widgets".into()),
                ..Default::default()
            },
            webhooks: Some(vec![MutatingWebhook {
                name: "m.example.com".into(),
                admission_review_versions: vec!["v1".into()],
                side_effects: "None".into(),
                client_config: WebhookClientConfig {
                    url: Some("https://127.0.0.1:9443/mutate".into()),
                    ..Default::default()
                },
                ..Default::default()
            }]),
        },
    )
    .await?;

    let server = admission_server()
        .address(([127, 0, 0, 1], 0).into())
        .build()?;
    let client = Client::new(server.local_addr().ok_or("addr")?, &server.ca_bundle())?;
    let bundle = server.ca_bundle();
    let manager = kubegen::manager::Manager::builder(kube.clone())
        .metrics_address(([127, 0, 0, 1], 0).into())
        .webhook_server(server)
        .ca_injector(
            kubegen::webhook::CaInjector::new(kube.clone())
                .mutating_webhook_configuration("widgets"),
        )
        .build()?;
    let metrics_addr = manager.metrics_addr().ok_or("metrics address")?;
    let stop = CancellationToken::new();
    let running = tokio::spawn(manager.run(stop.clone()));

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let answer = loop {
        match client
            .post(
                "/mutate",
                &review("m", "CREATE", Some(widget("w", json!({}))), None),
            )
            .await
        {
            Ok(answer) => break answer,
            Err(_) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(error) => return Err(error),
        }
    };
    assert_eq!(answer.json()["response"]["patchType"], "JSONPatch");
    loop {
        let injected = mwcs.get("widgets").await?.webhooks.unwrap_or_default()[0]
            .client_config
            .ca_bundle
            .clone();
        if injected.map(|b| b.0).as_ref() == Some(&bundle) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the injector never ran"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let text = http_get(metrics_addr, "/metrics").await?;
    assert!(
        text.contains(r#"controller_runtime_webhook_requests_total{webhook="/mutate",code="200"}"#),
        "{text}"
    );
    assert!(
        text.contains("controller_runtime_webhook_requests_in_flight"),
        "{text}"
    );
    assert!(
        text.contains("controller_runtime_webhook_latency_seconds"),
        "{text}"
    );
    stop.cancel();
    running.await??;
    Ok(())
}

async fn http_get(
    addr: SocketAddr,
    path: &str,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(connection);
    let request = http::Request::builder()
        .uri(path)
        .header(http::header::HOST, "127.0.0.1")
        .body(Full::new(Bytes::new()))?;
    let body = sender
        .send_request(request)
        .await?
        .into_body()
        .collect()
        .await?
        .to_bytes();
    Ok(String::from_utf8_lossy(&body).into_owned())
}
