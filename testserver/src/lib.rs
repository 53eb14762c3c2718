//! `kubegen-testserver`: an in-memory Kubernetes API server for tests.
//!
//! One [`Engine`] (objects as `serde_json::Value`, a global resourceVersion counter, a
//! bounded event history, built-in types plus CRDs registered at runtime) is served by
//! two fronts: [`TestServer`], an HTTP server on loopback usable by kubectl and any
//! client, and [`InProcess`], a `kubegen::client::Transport` for fake clientsets with
//! reactors and an action log. It behaves like
//! kube-apiserver where a client can tell: discovery, CRUD with optimistic concurrency,
//! the status subresource, finalizers and garbage collection, selectors, paginated lists,
//! watches with resume, bookmarks and 410 Gone, merge / JSON / strategic / apply patches,
//! and errors as `metav1.Status` bodies.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kubegen_testserver::ServerError> {
//! let server = kubegen_testserver::TestServer::start().await?;
//! println!("serving at {}", server.url());
//! # Ok(()) }
//! ```

pub mod aggregated_discovery;
pub mod apiserver;
pub mod apply;
mod builtins;
pub mod controllers;
pub mod crd;
pub mod discovery;
pub mod engine;
pub mod errors;
pub mod fake;
pub mod faults;
pub mod handler;
pub mod inprocess;
mod jsonpath;
pub mod kubeconfig;
pub mod managed_fields;
pub mod meta;
pub mod metadata;
pub mod negotiate;
pub mod openapi;
pub mod patch;
pub mod protobuf;
pub mod registry;
pub mod render;
mod scale;
pub mod schema;
pub mod selectors;
pub mod server;
pub mod store;
pub mod strategy;
pub mod table;
pub mod tls;
pub mod validation;
pub mod watch;

use std::path::Path;

pub use engine::{Engine, EngineConfig};
pub use errors::ApiError;
pub use inprocess::{Action, InProcess};
pub use server::{ServerError, TestServer, TestServerBuilder};

/// Creates every CRD found in a YAML/JSON file in `engine`.
pub fn load_crd_file(engine: &Engine, path: &Path) -> Result<(), ServerError> {
    let text = std::fs::read_to_string(path).map_err(|e| ServerError::Crd {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    load_crds(engine, &path.display().to_string(), &text)
}

/// Creates every CRD found in YAML/JSON `text` (named `source` in errors) in `engine`.
pub fn load_crds(engine: &Engine, source: &str, text: &str) -> Result<(), ServerError> {
    let err = |message: String| ServerError::Crd {
        path: source.to_owned(),
        message,
    };
    let docs = crd::parse_documents(text).map_err(err)?;
    let rt = engine
        .registry()
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .ok_or_else(|| err("CRDs are not served".into()))?;
    for doc in docs {
        let target = engine::Target {
            rt: rt.clone(),
            namespace: None,
            name: None,
            subresource: None,
        };
        engine
            .create(&target, doc, &engine::WriteOptions::default())
            .map_err(|e| err(e.message))?;
    }
    Ok(())
}
