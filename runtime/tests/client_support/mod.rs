//! Test doubles for the client tests: a scripted local HTTP server (axum) that records every
//! request, a scripted in-memory `Transport`, and a custom resource type whose serialization
//! lacks apiVersion/kind.
#![allow(dead_code, clippy::unwrap_used)]

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use axum::{Router, body::Bytes, extract::Request, response::Response};
use kubegen::client::{Body, BoxFuture, Transport, TransportError};
use serde::{Deserialize, Serialize};

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Vec<u8>>,
}

impl Reply {
    pub fn json(status: u16, v: serde_json::Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![serde_json::to_vec(&v).unwrap()],
        }
    }
    pub fn status(code: u16, reason: &str) -> Self {
        Self::json(
            code,
            serde_json::json!({"kind":"Status","apiVersion":"v1","status":"Failure",
                "message": format!("{reason} happened"),"reason":reason,"code":code}),
        )
    }
    pub fn chunked(status: u16, chunks: Vec<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks,
        }
    }
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }
}

/// One recorded request.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Path and query (or the absolute URI when it came through a proxy).
    pub uri: String,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
    pub fn header(&self, k: &str) -> Option<String> {
        self.headers.get(k).map(|v| v.to_str().unwrap().to_string())
    }
    pub fn query(&self) -> Vec<(String, String)> {
        let q = self.uri.split_once('?').map(|(_, q)| q).unwrap_or("");
        url_pairs(q)
    }
    pub fn path(&self) -> String {
        self.uri.split('?').next().unwrap().to_string()
    }
}

fn url_pairs(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

#[derive(Default)]
pub struct Script {
    replies: Mutex<VecDeque<Reply>>,
    pub requests: Mutex<Vec<Recorded>>,
}

impl Script {
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Arc<Self> {
        Arc::new(Self {
            replies: Mutex::new(replies.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
        })
    }
    pub fn push(&self, r: Reply) {
        self.replies.lock().unwrap().push_back(r);
    }
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
    fn next(&self, rec: Recorded) -> Reply {
        self.requests.lock().unwrap().push(rec);
        self.replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Reply::status(500, "InternalError"))
    }
}

/// A local HTTP server answering from `script`.
pub struct Fixture {
    pub addr: SocketAddr,
    pub script: Arc<Script>,
}

impl Fixture {
    pub async fn start(script: Arc<Script>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = router(script.clone());
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { addr, script }
    }
    pub fn url(&self) -> http::Uri {
        format!("http://{}", self.addr).parse().unwrap()
    }
}

pub fn router(script: Arc<Script>) -> Router {
    Router::new().fallback(move |req: Request| {
        let script = script.clone();
        async move { answer(&script, req).await }
    })
}

async fn answer(script: &Script, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body: Bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let rec = Recorded {
        method: parts.method.to_string(),
        uri: parts.uri.to_string(),
        headers: parts.headers.clone(),
        body: body.to_vec(),
    };
    let reply = script.next(rec);
    let chunks = reply.chunks.clone();
    let stream = futures::stream::iter(
        chunks
            .into_iter()
            .map(|c| Ok::<_, std::io::Error>(Bytes::from(c))),
    );
    let mut b = Response::builder().status(reply.status);
    for (k, v) in &reply.headers {
        b = b.header(k, v);
    }
    b.body(axum::body::Body::from_stream(stream)).unwrap()
}

/// An in-memory transport answering from `script`.
#[derive(Clone)]
pub struct MockTransport(pub Arc<Script>);

impl Transport for MockTransport {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let script = self.0.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let reply = script.next(Recorded {
                method: parts.method.to_string(),
                uri: parts.uri.to_string(),
                headers: parts.headers,
                body,
            });
            let mut b = http::Response::builder().status(reply.status);
            for (k, v) in &reply.headers {
                b = b.header(k, v);
            }
            let chunks: Vec<Result<bytes::Bytes, TransportError>> = reply
                .chunks
                .into_iter()
                .map(|c| Ok(bytes::Bytes::from(c)))
                .collect();
            Ok(b.body(Body::from_stream(futures::stream::iter(chunks)))
                .unwrap())
        })
    }
}

/// A namespaced custom resource whose serialization has no apiVersion or kind, like a
/// hand-written or kubegen-derived type may.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Foo {
    pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    #[serde(default)]
    pub spec: FooSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FooStatus>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FooSpec {
    #[serde(default)]
    pub replicas: i32,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FooStatus {
    #[serde(default)]
    pub ready: i32,
}

impl kube_core::Resource for Foo {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;
    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "Foo".into()
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        "samplecontroller.k8s.io".into()
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        "v1alpha1".into()
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        "foos".into()
    }
    fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &mut self.metadata
    }
}

pub fn foo(name: &str, replicas: i32) -> Foo {
    let mut f = Foo::default();
    f.metadata.name = Some(name.into());
    f.metadata.namespace = Some("ns1".into());
    f.spec.replicas = replicas;
    f
}

pub fn foo_json(name: &str, rv: &str, replicas: i32) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": name, "namespace": "ns1", "resourceVersion": rv},
        "spec": {"replicas": replicas}
    })
}

pub fn foo_list(names: &[&str], rv: &str, cont: Option<&str>) -> serde_json::Value {
    let mut meta = serde_json::json!({"resourceVersion": rv});
    if let Some(c) = cont {
        meta["continue"] = c.into();
    }
    serde_json::json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "FooList",
        "metadata": meta,
        "items": names.iter().map(|n| foo_json(n, rv, 1)).collect::<Vec<_>>()
    })
}
