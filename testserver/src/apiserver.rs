//! The server assembled: an [`Engine`] with the standard controllers registered, the
//! system namespaces created and the RBAC bootstrap policy written
//! (`crate::authz::rbac::bootstrap`), as kube-apiserver starts with its controllers and
//! bootstrap objects. Both fronts ([`crate::TestServer`], [`crate::InProcess`]) start
//! from here.

use std::sync::Arc;

use serde_json::json;

use crate::{
    authz::rbac::{bootstrap, resolver::GROUP},
    controllers,
    engine::{Engine, EngineConfig, WriteOptions},
};

/// The namespaces every cluster has.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// A fresh engine: built-in types, the standard controllers, the system namespaces and
/// the bootstrap ClusterRoles and ClusterRoleBindings.
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
    let policy = [
        ("clusterroles", bootstrap::cluster_roles()),
        ("clusterrolebindings", bootstrap::cluster_role_bindings()),
    ];
    for (plural, objects) in policy {
        let target = engine.target(GROUP, "v1", plural, None, None);
        for object in objects {
            if let Err(err) = engine.create(&target, object, &WriteOptions::default()) {
                tracing::error!(%err, "writing the RBAC bootstrap policy");
            }
        }
    }
    engine
}
