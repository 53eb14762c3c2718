//! Garbage collection through ownerReferences, run synchronously after deletes:
//! Background (dependents go after the owner), Foreground (the owner waits, with the
//! `foregroundDeletion` finalizer, until its dependents are gone) and Orphan (dependents
//! lose their owner reference, the `orphan` finalizer is then removed). An object written
//! with references to owners that no longer exist is collected the same way right after the
//! write (kube-controller-manager's collector finds such dependents too): a controller that
//! recreates a dependent from a stale cache after its owner was deleted does not leave it
//! behind.

use std::sync::Arc;

use serde_json::Value;

use crate::{
    engine::{Change, Controller, DeleteOptions, Engine, Target, WriteOptions},
    meta,
    registry::{GroupResource, ResourceType},
    store::ObjKey,
};

/// The garbage collector as a controller hook.
#[derive(Debug, Default, Clone, Copy)]
pub struct GarbageCollector;

impl Controller for GarbageCollector {
    fn name(&self) -> &'static str {
        "garbage-collector"
    }

    fn observe(&self, engine: &Engine, _rt: &ResourceType, change: Change, obj: &Arc<Value>) {
        match change {
            Change::Added | Change::Modified => on_written(engine, obj),
            Change::DeletionStarted => on_deleting(engine, obj),
            Change::Deleted => on_deleted(engine, obj),
        }
    }
}

const FOREGROUND: &str = "foregroundDeletion";
const ORPHAN: &str = "orphan";

fn target_for(engine: &Engine, gr: &GroupResource, key: &ObjKey) -> Option<Target> {
    let rt = engine.registry().any_version(&gr.group, &gr.resource)?;
    let rt = engine
        .registry()
        .get(&gr.group, &rt.storage_version, &gr.resource)
        .unwrap_or(rt);
    Some(Target {
        rt,
        namespace: (!key.0.is_empty()).then(|| key.0.clone()),
        name: Some(key.1.clone()),
        subresource: None,
    })
}

/// Called after an object was removed from the store.
fn on_deleted(engine: &Engine, obj: &Arc<Value>) {
    let uid = meta::uid(obj).to_string();
    // Dependents whose owners are all gone are collected; others lose the dangling reference.
    for (gr, key) in engine.store().dependents_of(&uid) {
        collect_dependent(engine, &gr, &key, &uid);
    }
    // Owners waiting in foreground deletion may now be finished.
    for owner_uid in meta::owner_uids(obj) {
        if let Some((gr, key)) = engine.store().locate_uid(&owner_uid) {
            maybe_finish_foreground(engine, &gr, &key);
        }
    }
}

/// Called after an object was created or updated: references to owners that do not exist
/// are dangling; with no owner left the object is collected, otherwise it loses them.
fn on_written(engine: &Engine, obj: &Arc<Value>) {
    let owners = meta::owner_uids(obj);
    if owners.is_empty() {
        return;
    }
    let Some((gr, key)) = engine.store().locate_uid(meta::uid(obj)) else {
        return;
    };
    for owner in owners {
        if engine.store().locate_uid(&owner).is_none() {
            collect_dependent(engine, &gr, &key, &owner);
        }
    }
}

/// Called after an object got (or kept) a deletionTimestamp with finalizers.
fn on_deleting(engine: &Engine, obj: &Arc<Value>) {
    let uid = meta::uid(obj).to_string();
    let key = crate::store::key_of(obj);
    let Some((gr, _)) = engine.store().locate_uid(&uid) else {
        return;
    };
    let finalizers = meta::finalizers(obj);
    if finalizers.iter().any(|f| f == ORPHAN) {
        for (dgr, dkey) in engine.store().dependents_of(&uid) {
            if let Some(t) = target_for(engine, &dgr, &dkey) {
                let owner = uid.clone();
                let result = engine.replace_with(&t, &WriteOptions::default(), move |old| {
                    let mut new = old.clone();
                    if let Some(Value::Array(refs)) = new.pointer_mut("/metadata/ownerReferences") {
                        refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(&owner));
                    }
                    Ok(Some((new, String::new())))
                });
                if let Err(err) = result {
                    tracing::warn!(%err, "orphaning dependent");
                }
            }
        }
        remove_finalizer(engine, &gr, &key, ORPHAN);
    }
    if finalizers.iter().any(|f| f == FOREGROUND) {
        for (dgr, dkey) in engine.store().dependents_of(&uid) {
            if let Some(t) = target_for(engine, &dgr, &dkey) {
                let opts = DeleteOptions {
                    propagation: Some("Foreground".into()),
                    ..DeleteOptions::default()
                };
                if let Err(err) = engine.delete(&t, &opts)
                    && err.code != 404
                {
                    tracing::warn!(%err, "foreground deletion of dependent");
                }
            }
        }
        maybe_finish_foreground(engine, &gr, &key);
    }
}

fn collect_dependent(engine: &Engine, gr: &GroupResource, key: &ObjKey, gone_uid: &str) {
    let Some(dep) = engine.store().get(gr, key) else {
        return;
    };
    let Some(t) = target_for(engine, gr, key) else {
        return;
    };
    let owners = meta::owner_uids(&dep);
    let solid: Vec<&String> = owners
        .iter()
        .filter(|u| *u != gone_uid && engine.store().locate_uid(u).is_some())
        .collect();
    if solid.is_empty() {
        if let Err(err) = engine.delete(&t, &DeleteOptions::default())
            && err.code != 404
        {
            tracing::warn!(%err, "collecting dependent");
        }
    } else {
        let gone = gone_uid.to_string();
        let result = engine.replace_with(&t, &WriteOptions::default(), move |old| {
            let mut new = old.clone();
            if let Some(Value::Array(refs)) = new.pointer_mut("/metadata/ownerReferences") {
                refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(&gone));
            }
            Ok(Some((new, String::new())))
        });
        if let Err(err) = result {
            tracing::warn!(%err, "removing dangling owner reference");
        }
    }
}

fn maybe_finish_foreground(engine: &Engine, gr: &GroupResource, key: &ObjKey) {
    let Some(owner) = engine.store().get(gr, key) else {
        return;
    };
    if !meta::finalizers(&owner).iter().any(|f| f == FOREGROUND) {
        return;
    }
    if engine.store().dependents_of(meta::uid(&owner)).is_empty() {
        remove_finalizer(engine, gr, key, FOREGROUND);
    }
}

fn remove_finalizer(engine: &Engine, gr: &GroupResource, key: &ObjKey, finalizer: &str) {
    let Some(t) = target_for(engine, gr, key) else {
        return;
    };
    let finalizer = finalizer.to_string();
    let result = engine.replace_with(&t, &WriteOptions::default(), move |old| {
        let mut new = old.clone();
        if let Some(Value::Array(list)) = new.pointer_mut("/metadata/finalizers") {
            list.retain(|f| f.as_str() != Some(finalizer.as_str()));
        }
        Ok(Some((new, String::new())))
    });
    if let Err(err) = result
        && err.code != 404
    {
        tracing::warn!(%err, "removing finalizer");
    }
}
