//! The server assembled: an [`Engine`] with the standard controllers registered and the
//! system namespaces created, as kube-apiserver starts with its controllers and
//! bootstrap objects. Both fronts ([`crate::TestServer`], [`crate::InProcess`]) start
//! from here.

use std::sync::Arc;

use serde_json::json;

use crate::{
    controllers,
    engine::{Engine, EngineConfig, WriteOptions},
};

/// The namespaces every cluster has.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// A fresh engine: built-in types, the standard controllers and the system namespaces.
pub fn new_engine(config: EngineConfig) -> Arc<Engine> {
    let engine = Engine::with_controllers(config, controllers::standard());
    for ns in SYSTEM_NAMESPACES {
        let created = engine.create(
            &engine.target("", "v1", "namespaces", None, None),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            &WriteOptions::default(),
        );
        if let Err(err) = created {
            tracing::error!(%err, "creating system namespace");
        }
    }
    engine
}
