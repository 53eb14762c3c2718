//! The namespace controller (kube-controller-manager's `pkg/controller/namespace`, its
//! `deletion/namespaced_resources_deleter.go`), as a hook: once a namespace is
//! terminating, every object in it is deleted — through the ordinary delete, so each
//! object's finalizers are honoured, never stripped — and when the namespace is empty the
//! `kubernetes` finalizer is removed through `/finalize`; the namespace's store then
//! removes the namespace once no finalizer is left.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::{
    engine::{Change, Controller, DeleteOptions, Engine, Target, WriteOptions},
    meta,
    registry::ResourceType,
};

/// The finalizer this controller owns (`FinalizerKubernetes`).
const FINALIZER: &str = "kubernetes";

/// The namespace controller hook.
#[derive(Debug, Default, Clone, Copy)]
pub struct NamespaceController;

impl Controller for NamespaceController {
    fn name(&self) -> &'static str {
        "namespace"
    }

    fn observe(&self, engine: &Engine, rt: &ResourceType, change: Change, obj: &Arc<Value>) {
        let is_namespace = rt.group.is_empty() && rt.plural == "namespaces";
        match change {
            Change::DeletionStarted if is_namespace => {
                let ns = meta::name(obj).to_string();
                delete_content(engine, &ns);
                finalize_if_empty(engine, &ns, true);
            }
            Change::Deleted if rt.namespaced => {
                let ns = meta::namespace(obj);
                if namespace_terminating(engine, ns) {
                    finalize_if_empty(engine, ns, false);
                }
            }
            _ => {}
        }
    }
}

fn namespaces_type(engine: &Engine) -> Option<Arc<ResourceType>> {
    engine.registry().get("", "v1", "namespaces")
}

fn namespace_terminating(engine: &Engine, ns: &str) -> bool {
    let Some(rt) = namespaces_type(engine) else {
        return false;
    };
    engine
        .store()
        .get(&rt.group_resource(), &(String::new(), ns.to_string()))
        .is_some_and(|o| meta::is_deleting(&o))
}

/// Deletes every object in `ns` (objects with finalizers get a deletionTimestamp and stay
/// until their finalizers are removed).
fn delete_content(engine: &Engine, ns: &str) {
    for gr in engine.store().resources_in_namespace(ns) {
        let Some(rt) = engine.registry().any_version(&gr.group, &gr.resource) else {
            continue;
        };
        for key in engine.store().keys(&gr, Some(ns)) {
            let t = Target {
                rt: rt.clone(),
                namespace: Some(key.0.clone()),
                name: Some(key.1.clone()),
                subresource: None,
            };
            if let Err(err) = engine.delete(&t, &DeleteOptions::default())
                && err.code != 404
            {
                tracing::warn!(%err, namespace = ns, "deleting namespace content");
            }
        }
    }
}

/// With no object left in `ns`, removes the `kubernetes` finalizer (`/finalize`); else,
/// with `record`, records what remains in the namespace's conditions, as the controller
/// does after a deletion pass.
fn finalize_if_empty(engine: &Engine, ns: &str, record: bool) {
    let Some(rt) = namespaces_type(engine) else {
        return;
    };
    let remaining = engine.store().resources_in_namespace(ns);
    let t = Target {
        rt,
        namespace: None,
        name: Some(ns.to_string()),
        subresource: None,
    };
    if remaining.is_empty() {
        let finalize = Target {
            subresource: Some("finalize".into()),
            ..t
        };
        let result = engine.replace_with(&finalize, &WriteOptions::default(), |old| {
            let mut new = old.clone();
            if let Some(Value::Array(list)) = new.pointer_mut("/spec/finalizers") {
                list.retain(|f| f.as_str() != Some(FINALIZER));
            }
            Ok(Some((new, String::new())))
        });
        if let Err(err) = result
            && err.code != 404
        {
            tracing::warn!(%err, namespace = ns, "finalizing namespace");
        }
        return;
    }
    if !record {
        return;
    }
    let mut finalizers: Vec<String> = Vec::new();
    let mut count = 0usize;
    for gr in &remaining {
        for key in engine.store().keys(gr, Some(ns)) {
            count += 1;
            if let Some(obj) = engine.store().get(gr, &key) {
                for f in meta::finalizers(&obj) {
                    if !finalizers.contains(&f) {
                        finalizers.push(f);
                    }
                }
            }
        }
    }
    let status = t.clone();
    let conditions = remaining_conditions(&remaining, count, &finalizers);
    let status = Target {
        subresource: Some("status".into()),
        ..status
    };
    let result = engine.replace_with(&status, &WriteOptions::default(), move |old| {
        let mut new = old.clone();
        let root = meta::ensure_object(&mut new);
        let st = root.entry("status").or_insert_with(|| json!({}));
        meta::ensure_object(st).insert("conditions".into(), conditions);
        Ok(Some((new, String::new())))
    });
    if let Err(err) = result
        && err.code != 404
    {
        tracing::warn!(%err, namespace = ns, "updating namespace conditions");
    }
}

/// `NamespaceContentRemaining` and `NamespaceFinalizersRemaining`, worded as
/// `namespaced_resources_deleter.go` words them.
fn remaining_conditions(
    remaining: &[crate::registry::GroupResource],
    count: usize,
    finalizers: &[String],
) -> Value {
    let now = crate::clock::now_rfc3339();
    let resources: Vec<String> = remaining
        .iter()
        .map(|gr| {
            if gr.group.is_empty() {
                gr.resource.clone()
            } else {
                format!("{}.{}", gr.resource, gr.group)
            }
        })
        .collect();
    let mut conditions = vec![json!({
        "type": "NamespaceContentRemaining",
        "status": "True",
        "reason": "SomeResourcesRemain",
        "message": format!("Some resources are remaining: {} has {count} resource instances", resources.join(", ")),
        "lastTransitionTime": now,
    })];
    if !finalizers.is_empty() {
        conditions.push(json!({
            "type": "NamespaceFinalizersRemaining",
            "status": "True",
            "reason": "SomeFinalizersRemain",
            "message": format!("Some content in the namespace has finalizers remaining: {}", finalizers.join(", ")),
            "lastTransitionTime": now,
        }));
    }
    Value::Array(conditions)
}
