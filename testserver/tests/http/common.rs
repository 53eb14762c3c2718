//! Helpers: a tiny JSON client over reqwest and a watch-line reader.

#![allow(clippy::unwrap_used)] // test helpers: a failed request is a failed test

use std::time::Duration;

use futures::StreamExt;
use kubegen_testserver::{EngineConfig, TestServer};
use serde_json::{Value, json};

pub struct Api {
    pub base: String,
    pub http: reqwest::Client,
    pub token: Option<String>,
}

pub async fn server() -> (TestServer, Api) {
    server_with(EngineConfig::default().bookmark_interval(Duration::from_millis(100))).await
}

pub async fn server_with(config: EngineConfig) -> (TestServer, Api) {
    // The API server alone: these tests pin kube-apiserver's own semantics (every watch
    // event, every status write), as its integration tests run without
    // kube-controller-manager; `tests/cluster.rs` covers the controllers.
    let server = TestServer::builder()
        .cluster(kubegen_testserver::ClusterConfig::none())
        .engine_config(config)
        .start()
        .await
        .unwrap();
    let api = Api {
        base: server.url(),
        http: reqwest::Client::new(),
        token: None,
    };
    (server, api)
}

impl Api {
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
        content_type: &str,
    ) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("content-type", content_type);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.body(b);
        }
        let resp = req.send().await.unwrap();
        let code = resp.status().as_u16();
        let bytes = resp.bytes().await.unwrap();
        let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (code, v)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.send("GET", path, None, "application/json").await
    }

    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(
            "POST",
            path,
            Some(body.to_string().into_bytes()),
            "application/json",
        )
        .await
    }

    pub async fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(
            "PUT",
            path,
            Some(body.to_string().into_bytes()),
            "application/json",
        )
        .await
    }

    pub async fn patch(&self, path: &str, ct: &str, body: &str) -> (u16, Value) {
        self.send("PATCH", path, Some(body.as_bytes().to_vec()), ct)
            .await
    }

    pub async fn delete(&self, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.send(
            "DELETE",
            path,
            body.map(|b| b.to_string().into_bytes()),
            "application/json",
        )
        .await
    }

    pub async fn watch(&self, path: &str) -> Watch {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "watch {path}");
        Watch {
            stream: Box::pin(resp.bytes_stream()),
            buf: Vec::new(),
        }
    }
}

type ByteStream =
    std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

pub struct Watch {
    stream: ByteStream,
    buf: Vec<u8>,
}

impl Watch {
    /// The next event, or None when the stream ends (or nothing arrives within 10s).
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return Some(serde_json::from_slice(&line).unwrap());
            }
            match tokio::time::timeout(Duration::from_secs(10), self.stream.next()).await {
                Ok(Some(Ok(chunk))) => self.buf.extend_from_slice(&chunk),
                _ => return None,
            }
        }
    }

    /// The next non-BOOKMARK event.
    pub async fn next_change(&mut self) -> Option<Value> {
        loop {
            let ev = self.next().await?;
            if ev["type"] != "BOOKMARK" {
                return Some(ev);
            }
        }
    }
}

pub fn cm(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}

pub fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"},
                                        {"name": "sidecar", "image": "busybox:1"}]}}
        }
    })
}

pub fn rv(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

pub fn crd_path(file: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/crds")
        .join(file)
}
