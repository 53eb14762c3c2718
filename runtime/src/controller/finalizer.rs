//! The finalizer flow for reconcilers (kube-runtime's `finalizer::finalizer`,
//! controller-runtime's `pkg/finalizer`): a reconciler that must clean up outside the
//! object before it goes (cloud resources, external records) wraps itself in
//! [`finalizer()`], which keeps one finalizer on the object and turns each reconcile into
//! [`FinalizerEvent::Apply`] or [`FinalizerEvent::Cleanup`].
//!
//! | the object | what [`finalizer()`] does |
//! |---|---|
//! | not deleting, no finalizer | adds it (guarded patch) and returns [`Action::done`]; no Apply: the patch brings a new event |
//! | not deleting, finalizer | Apply |
//! | deleting, finalizer | reads the object fresh; if the finalizer is still there, Cleanup; on `Ok` removes it (guarded patch) |
//! | deleting, no finalizer | nothing |
//!
//! **Guarded writes.** Both patches are JSON patches that also set `metadata.resourceVersion`
//! to the version they were computed from. The API server treats a resourceVersion in a
//! patch as a precondition (apiserver `registry/generic/registry/store.go`, `Update`: a
//! version differing from the stored one is a 409 Conflict), so a patch computed from a
//! stale list never clobbers a concurrent change: adding to a list someone else just changed
//! fails with a conflict instead of dropping their entry, and removal by index can never
//! remove someone else's finalizer (the patch also `test`s the entry it removes).
//!
//! **Cleanup runs once.** Cleanup is the one step that must not repeat after it succeeded
//! and the finalizer was removed. The object a reconcile gets comes from a cache, and may be
//! older than our own last write: right after the finalizer is removed, a requeue (or a
//! second call with the same `Arc`) still shows the deleting object with the finalizer.
//! So before Cleanup the object is read from the API server (a quorum GET). If it is gone,
//! has another uid (deleted and created again), or no longer has the finalizer, the cleanup
//! already happened (or is not ours to do) and nothing runs. Otherwise Cleanup gets the
//! fresh object; after it succeeds, the removal is retried on conflicts within the call
//! (read again, find the finalizer's index again, patch again) rather than by failing the
//! reconcile, since a failed reconcile would run Cleanup again. A conflict here is usually
//! another controller removing its own finalizer at the same time.
//!
//! What remains is the unavoidable window: if the process dies (or the removal fails for
//! good) after Cleanup succeeded and before the removal was stored, the finalizer is still
//! there and the next reconcile runs Cleanup again. Cleanup must therefore be idempotent,
//! and must tolerate Apply never having run. The controller never reconciles one key
//! concurrently with itself, which closes the window between the fresh read and the removal
//! to everyone but other writers of the object.

use std::{future::Future, sync::Arc};

use kube_core::{
    Resource,
    params::{Patch, PatchParams},
};
use serde_json::{Value, json};

use super::action::Action;
use crate::{
    Object,
    client::{DEFAULT_RETRY, Error, ResourceClient, retry_on_conflict},
    controllerutil::contains_finalizer,
};

/// What the reconciler wrapped by [`finalizer()`] is asked to do.
#[derive(Debug)]
pub enum FinalizerEvent<K> {
    /// The object is live and carries the finalizer: make the world match it. Must be
    /// idempotent (it runs again on every change, requeue and restart).
    Apply(Arc<K>),
    /// The object is being deleted and still carries the finalizer: release what Apply
    /// made. The finalizer is removed only after this returns `Ok`; an `Err` keeps it and
    /// the controller retries. Must be idempotent (see the module docs for when it can run
    /// twice) and must tolerate Apply never having run.
    Cleanup(Arc<K>),
}

/// Why [`finalizer()`] failed. `E` is the reconciler's error.
#[derive(Debug, thiserror::Error)]
pub enum FinalizerError<E> {
    /// Apply returned an error.
    #[error("failed to apply object: {0}")]
    ApplyFailed(#[source] E),
    /// Cleanup returned an error; the finalizer is still there.
    #[error("failed to clean up object: {0}")]
    CleanupFailed(#[source] E),
    /// Adding the finalizer failed (a conflict: the object changed since it was read; the
    /// next reconcile sees the new version).
    #[error("failed to add finalizer: {0}")]
    AddFinalizer(#[source] Error),
    /// Reading the deleting object before Cleanup failed; Cleanup did not run.
    #[error("failed to read the object before cleanup: {0}")]
    ReadBeforeCleanup(#[source] Error),
    /// Removing the finalizer after a successful Cleanup failed; the finalizer is still
    /// there, so the next reconcile runs Cleanup again.
    #[error("failed to remove finalizer: {0}")]
    RemoveFinalizer(#[source] Error),
    /// The object has no name.
    #[error("object has no name")]
    UnnamedObject,
    /// The object has no resourceVersion, so a write could not be guarded (it was not read
    /// from the API server).
    #[error("object has no resourceVersion: pass an object read from the API server")]
    NoResourceVersion,
    /// A patch could not be encoded.
    #[error("encoding the finalizer patch: {0}")]
    EncodePatch(#[source] serde_json::Error),
}

/// Reconciles `obj` through the finalizer `finalizer_name`, which must be unique to this
/// controller (`example.com/cleanup`): see the module docs for the flow and its guarantees.
/// `reconcile` gets the event and returns the action, as a plain reconcile would; its
/// errors come back as [`FinalizerError::ApplyFailed`] / [`FinalizerError::CleanupFailed`].
pub async fn finalizer<K, E, Fut>(
    client: &ResourceClient<K>,
    finalizer_name: &str,
    obj: Arc<K>,
    reconcile: impl FnOnce(FinalizerEvent<K>) -> Fut,
) -> Result<Action, FinalizerError<E>>
where
    K: Object,
    Fut: Future<Output = Result<Action, E>>,
{
    let name = obj
        .meta()
        .name
        .clone()
        .ok_or(FinalizerError::UnnamedObject)?;
    let deleting = obj.meta().deletion_timestamp.is_some();
    match (deleting, contains_finalizer(&*obj, finalizer_name)) {
        (false, true) => reconcile(FinalizerEvent::Apply(obj))
            .await
            .map_err(FinalizerError::ApplyFailed),
        (false, false) => {
            let patch = add_patch(&*obj, finalizer_name)?;
            client
                .patch(&name, &PatchParams::default(), &patch)
                .await
                .map_err(FinalizerError::AddFinalizer)?;
            tracing::debug!(name, finalizer = finalizer_name, "finalizer added");
            Ok(Action::done())
        }
        (true, true) => {
            let Some(fresh) = still_ours(client, &name, &obj, finalizer_name).await? else {
                tracing::debug!(
                    name,
                    finalizer = finalizer_name,
                    "finalizer already gone on the server; cleanup not run again"
                );
                return Ok(Action::done());
            };
            let uid = fresh.meta().uid.clone();
            let action = reconcile(FinalizerEvent::Cleanup(Arc::new(fresh)))
                .await
                .map_err(FinalizerError::CleanupFailed)?;
            remove(client, &name, uid.as_deref(), finalizer_name).await?;
            tracing::debug!(
                name,
                finalizer = finalizer_name,
                "cleaned up; finalizer removed"
            );
            Ok(action)
        }
        (true, false) => Ok(Action::done()),
    }
}

/// A JSON patch of `ops`, guarded by `resource_version` when there is one (the patch then
/// also sets it, which the API server checks against the stored version).
fn json_patch(
    ops: Vec<Value>,
    resource_version: Option<&str>,
) -> Result<Patch<()>, serde_json::Error> {
    let mut ops = ops;
    if let Some(rv) = resource_version {
        ops.push(json!({"op": "replace", "path": "/metadata/resourceVersion", "value": rv}));
    }
    serde_json::from_value(Value::Array(ops)).map(Patch::Json)
}

/// The patch adding `finalizer` to `obj`'s finalizers, guarded by `obj`'s resourceVersion.
fn add_patch<E>(obj: &impl Resource, finalizer: &str) -> Result<Patch<()>, FinalizerError<E>> {
    let rv = obj
        .meta()
        .resource_version
        .as_deref()
        .ok_or(FinalizerError::NoResourceVersion)?;
    let op = match &obj.meta().finalizers {
        Some(list) if !list.is_empty() => {
            json!({"op": "add", "path": "/metadata/finalizers/-", "value": finalizer})
        }
        _ => json!({"op": "add", "path": "/metadata/finalizers", "value": [finalizer]}),
    };
    json_patch(vec![op], Some(rv)).map_err(FinalizerError::EncodePatch)
}

/// The patch removing the finalizer at each of `indices` (ascending), each `test`ed to be
/// `finalizer` first, guarded by `resource_version`. Removed from the back, so the earlier
/// indices stay valid; every copy goes, since Kubernetes does not deduplicate finalizers and
/// a copy left behind would hold the object (and bring Cleanup back).
fn remove_patch(
    indices: &[usize],
    finalizer: &str,
    resource_version: Option<&str>,
) -> Result<Patch<()>, serde_json::Error> {
    let ops = indices
        .iter()
        .rev()
        .flat_map(|index| {
            let path = format!("/metadata/finalizers/{index}");
            [
                json!({"op": "test", "path": path, "value": finalizer}),
                json!({"op": "remove", "path": path}),
            ]
        })
        .collect();
    json_patch(ops, resource_version)
}

/// The deleting object as the server has it now, if it is still the same object and still
/// carries `finalizer`.
async fn still_ours<K: Object, E>(
    client: &ResourceClient<K>,
    name: &str,
    obj: &K,
    finalizer: &str,
) -> Result<Option<K>, FinalizerError<E>> {
    let fresh = match client.get(name).await {
        Ok(fresh) => fresh,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(FinalizerError::ReadBeforeCleanup(e)),
    };
    let same = fresh.meta().uid == obj.meta().uid;
    Ok((same && contains_finalizer(&fresh, finalizer)).then_some(fresh))
}

/// Removes `finalizer` from the object `name` (with `uid`), re-reading and retrying on
/// conflicts; done when it (or the object) is already gone.
async fn remove<K: Object, E>(
    client: &ResourceClient<K>,
    name: &str,
    uid: Option<&str>,
    finalizer: &str,
) -> Result<(), FinalizerError<E>> {
    retry_on_conflict(DEFAULT_RETRY, || async {
        let current = match client.get(name).await {
            Ok(current) => current,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e),
        };
        if current.meta().uid.as_deref() != uid {
            return Ok(());
        }
        let indices: Vec<usize> = current
            .meta()
            .finalizers
            .iter()
            .flatten()
            .enumerate()
            .filter(|(_, f)| *f == finalizer)
            .map(|(i, _)| i)
            .collect();
        if indices.is_empty() {
            return Ok(());
        }
        let patch = remove_patch(
            &indices,
            finalizer,
            current.meta().resource_version.as_deref(),
        )
        .map_err(Error::Encode)?;
        match client.patch(name, &PatchParams::default(), &patch).await {
            Ok(_) => Ok(()),
            // The object went away between the read and the patch: nothing left to remove.
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    })
    .await
    .map_err(FinalizerError::RemoveFinalizer)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    fn patch_ops(patch: Patch<()>) -> Value {
        match patch {
            Patch::Json(p) => serde_json::to_value(p).expect("encodes"),
            _ => Value::Null,
        }
    }

    #[test]
    fn the_add_patch_is_guarded_by_the_resource_version() {
        let mut cm = ConfigMap::default();
        cm.metadata.resource_version = Some("7".into());
        let ops = patch_ops(add_patch::<()>(&cm, "example.com/x").expect("patch"));
        assert_eq!(
            ops,
            json!([
                {"op": "add", "path": "/metadata/finalizers", "value": ["example.com/x"]},
                {"op": "replace", "path": "/metadata/resourceVersion", "value": "7"},
            ])
        );
        cm.metadata.finalizers = Some(vec!["other".into()]);
        let ops = patch_ops(add_patch::<()>(&cm, "example.com/x").expect("patch"));
        assert_eq!(
            ops[0],
            json!({"op": "add", "path": "/metadata/finalizers/-", "value": "example.com/x"})
        );
        cm.metadata.resource_version = None;
        assert!(matches!(
            add_patch::<()>(&cm, "example.com/x"),
            Err(FinalizerError::NoResourceVersion)
        ));
    }

    /// kube-runtime's removal: `test` the entry at the index, then `remove` it, so a
    /// shifted list can never lose someone else's finalizer; here also guarded by the
    /// resourceVersion.
    #[test]
    fn the_remove_patch_tests_the_entries_it_removes() {
        let ops = patch_ops(remove_patch(&[1], "example.com/x", Some("9")).expect("patch"));
        assert_eq!(
            ops,
            json!([
                {"op": "test", "path": "/metadata/finalizers/1", "value": "example.com/x"},
                {"op": "remove", "path": "/metadata/finalizers/1"},
                {"op": "replace", "path": "/metadata/resourceVersion", "value": "9"},
            ])
        );
        // Duplicates go too, from the back.
        let ops = patch_ops(remove_patch(&[0, 2], "example.com/x", None).expect("patch"));
        let paths: Vec<_> = ops
            .as_array()
            .expect("ops")
            .iter()
            .map(|op| {
                format!(
                    "{} {}",
                    op["op"].as_str().unwrap_or(""),
                    op["path"].as_str().unwrap_or("")
                )
            })
            .collect();
        assert_eq!(
            paths,
            [
                "test /metadata/finalizers/2",
                "remove /metadata/finalizers/2",
                "test /metadata/finalizers/0",
                "remove /metadata/finalizers/0",
            ]
        );
    }
}
