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

pub(crate) mod admission;
pub(crate) mod apiserver;
pub(crate) mod apply;
pub mod audit;
mod auth;
pub(crate) mod authn;
pub(crate) mod authz;
#[doc(hidden)]
pub mod bench;
mod builtins;
pub(crate) mod chain;
pub(crate) mod clock;
pub(crate) mod controllers;
pub(crate) mod conversion;
pub(crate) mod crd;
pub(crate) mod endpoints;
pub(crate) mod engine;
pub(crate) mod errors;
pub mod fake;
mod fake_watcher;
pub(crate) mod faults;
#[doc(hidden)]
pub mod fuzz;
pub(crate) mod inprocess;
pub(crate) mod kubeconfig;
pub(crate) mod managed_fields;
pub(crate) mod meta;
mod operator_rbac;
pub(crate) mod patch;
pub(crate) mod protobuf;
pub(crate) mod registry;
pub(crate) mod reviews;
mod scale;
pub(crate) mod schema;
pub(crate) mod selectors;
pub(crate) mod server;
mod shared;
pub(crate) mod store;
pub(crate) mod strategy;
pub(crate) mod tls;
pub(crate) mod validation;
pub(crate) mod webhook;

use std::path::Path;

pub use audit::{AuditConfig, AuditEvent};
pub use auth::AuthConfig;
pub use authn::{AuthnError, UserInfo};
pub use authz::AuthorizationMode;
pub use controllers::{
    ClusterConfig, FAULT_ANNOTATION, FaultAction, PodFault, PodFaultError, Workload,
};
pub use endpoints::request_info::RequestInfo;
pub use engine::{Engine, EngineConfig};
pub use errors::ApiError;
pub use fake_watcher::FakeWatcher;
pub use faults::FailRule;
pub use inprocess::{Action, InProcess, WatchReactorResult};
pub use kubegen::catalog::Verb;
pub use server::{ServerError, TestServer, TestServerBuilder};
pub use shared::Shared;

/// Creates every CRD found in a YAML/JSON file in `engine`.
pub fn load_crd_file(engine: &Engine, path: &Path) -> Result<(), ServerError> {
    let text = std::fs::read_to_string(path).map_err(|e| ServerError::Crd {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    load_crds(engine, &path.display().to_string(), &text)
}

/// Creates every CRD found in YAML/JSON `text` (named `source` in errors) in `engine`.
///
/// Installed CRDs are enforced as kube-apiserver enforces them (unless
/// [`EngineConfig::schema_validation`] is off): unknown fields pruned, defaults applied,
/// OpenAPI constraints and CEL rules checked, with kube-apiserver's 422 messages. So a
/// CRD's validation can be tested with no cluster, in-process:
///
/// ```
/// # #![allow(clippy::unwrap_used)]
/// use kube_core::{ApiResource, DynamicObject, GroupVersionKind, params::PostParams};
/// use kubegen::client::{DynamicClient, Error};
/// use kubegen_testserver::fake::Fake;
/// use serde_json::json;
///
/// const CRD: &str = r#"
/// apiVersion: apiextensions.k8s.io/v1
/// kind: CustomResourceDefinition
/// metadata: {name: foos.example.com}
/// spec:
///   group: example.com
///   scope: Namespaced
///   names: {kind: Foo, plural: foos}
///   versions:
///   - name: v1
///     served: true
///     storage: true
///     schema:
///       openAPIV3Schema:
///         type: object
///         properties:
///           spec:
///             type: object
///             x-kubernetes-validations:
///             - rule: "self.minReplicas <= self.replicas"
///               message: minReplicas must not exceed replicas
///             properties:
///               replicas: {type: integer, maximum: 10, default: 1}
///               minReplicas: {type: integer, default: 0}
/// "#;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let fake = Fake::new();
/// kubegen_testserver::load_crds(fake.engine(), "foos.yaml", CRD).unwrap();
/// let foo = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Foo"), "foos");
/// let foos = DynamicClient::namespaced(fake.client(), &foo, "default");
///
/// // defaults applied, unknown fields pruned
/// let ok = DynamicObject::new("ok", &foo).data(json!({"spec": {"typo": true}}));
/// let created = foos.create(&PostParams::default(), &ok).await.unwrap();
/// assert_eq!(created.data["spec"], json!({"replicas": 1, "minReplicas": 0}));
///
/// // an OpenAPI constraint, then a CEL rule
/// for (spec, message) in [
///     (json!({"replicas": 11}), "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
///     (json!({"replicas": 2, "minReplicas": 3}), "spec: Invalid value: \"object\": minReplicas must not exceed replicas"),
/// ] {
///     let bad = DynamicObject::new("bad", &foo).data(json!({"spec": spec}));
///     let Err(Error::Api(status)) = foos.create(&PostParams::default(), &bad).await else {
///         panic!("accepted an invalid Foo");
///     };
///     assert_eq!(status.code, 422);
///     assert_eq!(status.message, format!("Foo.example.com \"bad\" is invalid: {message}"));
/// }
/// # }
/// ```
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
