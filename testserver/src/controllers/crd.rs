//! The CRD controllers (apiextensions-apiserver's establishing and finalizing
//! controllers), as a hook: a CRD written is served in each of its versions and gets the
//! `NamesAccepted` and `Established` conditions; a CRD removed stops being served and its
//! custom resources go with it.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::{
    crd::served_types,
    engine::{Change, Controller, DeleteOptions, Engine, Target, WriteOptions},
    meta,
    registry::ResourceType,
};

/// The CRD controllers as one hook: serve a CRD's versions (and set its Established
/// condition) when it is written, stop serving them and remove its objects when it is
/// gone.
#[derive(Debug, Default, Clone, Copy)]
pub struct CrdController;

impl Controller for CrdController {
    fn name(&self) -> &'static str {
        "crd-establishing"
    }

    fn observe(&self, engine: &Engine, rt: &ResourceType, change: Change, obj: &Arc<Value>) {
        if rt.group == GROUP && rt.plural == PLURAL {
            on_crd_write(engine, change, obj);
        }
    }
}

const GROUP: &str = "apiextensions.k8s.io";
const PLURAL: &str = "customresourcedefinitions";

fn on_crd_write(engine: &Engine, change: Change, crd: &Arc<Value>) {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match change {
        Change::Deleted => remove(engine, group, plural),
        Change::DeletionStarted => {}
        Change::Added | Change::Modified => {
            if meta::is_deleting(crd) {
                return;
            }
            engine.registry().remove(group, plural);
            // Every object stored so far may predate this schema's defaults; writes from
            // here on are admitted against it, so reads of later objects skip defaulting.
            let through = engine.store().current_rv();
            for mut rt in served_types(crd) {
                rt.read_defaults_through = through;
                engine.registry().insert(rt);
            }
            establish(engine, crd);
        }
    }
}

fn remove(engine: &Engine, group: &str, plural: &str) {
    let Some(rt) = engine.registry().any_version(group, plural) else {
        return;
    };
    for key in engine.store().keys(&rt.group_resource(), None) {
        let t = Target {
            rt: rt.clone(),
            namespace: (!key.0.is_empty()).then(|| key.0.clone()),
            name: Some(key.1.clone()),
            subresource: None,
        };
        // Finalizers on custom resources cannot hold up CRD removal here: clear them first.
        let cleared = engine.replace_with(&t, &WriteOptions::default(), |old| {
            let mut new = old.clone();
            meta::meta_mut(&mut new).remove("finalizers");
            Ok(Some((new, String::new())))
        });
        if let Err(err) = cleared {
            tracing::debug!(%err, "clearing finalizers of a custom resource");
        }
        if let Err(err) = engine.delete(&t, &DeleteOptions::default())
            && err.code != 404
        {
            tracing::warn!(%err, "deleting custom resource of a removed CRD");
        }
    }
    engine.registry().remove(group, plural);
}

fn establish(engine: &Engine, crd: &Arc<Value>) {
    let established = crd
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Established")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        });
    let names = crd.pointer("/spec/names").cloned().unwrap_or(Value::Null);
    if established && crd.pointer("/status/acceptedNames") == Some(&names) {
        return;
    }
    let Some(rt) = engine.registry().get(GROUP, "v1", PLURAL) else {
        return;
    };
    let now = crate::clock::now_rfc3339();
    let storage = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .and_then(|v| v.get("name").cloned())
        })
        .unwrap_or(Value::Null);
    let status = json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": now},
        ],
        "acceptedNames": names,
        "storedVersions": [storage],
    });
    let t = Target {
        rt,
        namespace: None,
        name: Some(meta::name(crd).to_string()),
        subresource: Some("status".into()),
    };
    let result = engine.replace_with(&t, &WriteOptions::default(), move |old| {
        let mut new = old.clone();
        meta::ensure_object(&mut new).insert("status".into(), status);
        Ok(Some((new, String::new())))
    });
    if let Err(err) = result {
        tracing::warn!(%err, "setting CRD status");
    }
}
