//! [`create_or_patch()`] (controller-runtime's `controllerutil.CreateOrPatch`): like
//! [`super::create_or_update()`], but an existing object is changed by JSON merge patches of
//! exactly what the mutate function changed — one for the main resource, one for the status
//! subresource — so fields this caller never touched are left to their other writers.
//!
//! Each patch carries the resourceVersion it was computed from (controller-runtime's
//! `MergeFromWithOptimisticLock`; the API server treats a resourceVersion in a patch as a
//! precondition): a list the patch replaces whole cannot overwrite a concurrent change.
//! The 409 that follows starts the attempt over from a fresh read, as
//! [`super::create_or_update()`] does.

use std::sync::atomic::{AtomicBool, Ordering};

use kube_core::params::{Patch, PatchParams};
use parking_lot::Mutex;
use serde_json::{Map, Value, json};

use super::{
    create_or_update::{
        CreateOrUpdateError, OperationResult, Read, api, converge, read_or_create, run_mutate,
        to_json,
    },
    merge_patch::{diff, semantically_equal},
};
use crate::{Object, client::ResourceClient};

/// Gets the object named like `object`; when it does not exist, runs `mutate` on `object`
/// and creates it ([`OperationResult::Created`]; a status set by `mutate` is dropped by
/// the server on create — requeue and set it on the next call, as controller-runtime
/// advises). When it exists, runs `mutate` on a copy of the server's version and sends a
/// merge patch of the main-resource changes ([`OperationResult::Updated`]), then one of the
/// status changes to the status subresource ([`OperationResult::UpdatedStatus`] when both
/// were written, [`OperationResult::UpdatedStatusOnly`] when only the status was), or
/// nothing ([`OperationResult::Unchanged`]). Returns the object as the server has it
/// afterwards.
///
/// If the status patch conflicts after the main patch went through, the retry finds only
/// the status left to patch and still reports `UpdatedStatus`. The rules on `object`, the
/// mutate function and retries are [`super::create_or_update()`]'s.
pub async fn create_or_patch<K, E, F>(
    client: &ResourceClient<K>,
    object: K,
    mutate: F,
) -> Result<(K, OperationResult), CreateOrUpdateError<E>>
where
    K: Object,
    F: FnMut(&mut K) -> Result<(), E>,
{
    let name = object
        .meta()
        .name
        .clone()
        .ok_or(CreateOrUpdateError::MissingName)?;
    let mutate = Mutex::new(mutate);
    let main_patched = AtomicBool::new(false);
    let (object, result) =
        converge(|| patch_attempt(client, &object, &name, &mutate, &main_patched)).await?;
    tracing::debug!(
        kind = %K::kind(&()),
        name,
        result = result.as_str(),
        "create_or_patch"
    );
    Ok((object, result))
}

/// `value` without its `status` member, and that member.
fn split_status(mut value: Value) -> (Value, Value) {
    let status = value
        .as_object_mut()
        .and_then(|m| m.remove("status"))
        .unwrap_or(Value::Null);
    (value, status)
}

/// A merge patch body: `changes` with `metadata.resourceVersion` set to `resource_version`
/// (the optimistic lock), when there is one.
fn locked(mut changes: Map<String, Value>, resource_version: Option<&String>) -> Value {
    if let Some(rv) = resource_version {
        let metadata = changes
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.insert("resourceVersion".into(), Value::String(rv.clone()));
        }
    }
    Value::Object(changes)
}

/// One read-mutate-patch round of [`create_or_patch()`]; `main_patched` remembers across
/// rounds that an earlier one patched the main resource.
async fn patch_attempt<K: Object, E>(
    client: &ResourceClient<K>,
    object: &K,
    name: &str,
    mutate: &Mutex<impl FnMut(&mut K) -> Result<(), E>>,
    main_patched: &AtomicBool,
) -> Result<(K, OperationResult), CreateOrUpdateError<E>> {
    let existing = match read_or_create(client, object, name, mutate).await? {
        Read::Existing(existing) => existing,
        Read::Created(created) => return Ok((created, OperationResult::Created)),
    };
    let mut desired = existing.clone();
    run_mutate(mutate, &mut desired)?;
    let (before, before_status) = split_status(to_json(&existing)?);
    let (after, after_status) = split_status(to_json(&desired)?);

    let mut current = existing;
    let main_changes = diff(&before, &after);
    if !main_changes.is_empty() {
        let body = locked(main_changes, current.meta().resource_version.as_ref());
        current = client
            .patch(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .map_err(api("patch"))?;
        main_patched.store(true, Ordering::Relaxed);
    }
    let main = main_patched.load(Ordering::Relaxed);
    if semantically_equal(&before_status, &after_status) {
        let result = if main {
            OperationResult::Updated
        } else {
            OperationResult::Unchanged
        };
        return Ok((current, result));
    }
    let status_changes = diff(
        &json!({ "status": before_status }),
        &json!({ "status": after_status }),
    );
    let body = locked(status_changes, current.meta().resource_version.as_ref());
    let patched = client
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .map_err(api("patch status"))?;
    let result = if main {
        OperationResult::UpdatedStatus
    } else {
        OperationResult::UpdatedStatusOnly
    };
    Ok((patched, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_added_beside_metadata_changes() {
        let changes = diff(
            &json!({"metadata": {"name": "a"}}),
            &json!({"metadata": {"name": "a", "labels": {"x": "1"}}}),
        );
        assert_eq!(
            locked(changes, Some(&"42".to_owned())),
            json!({"metadata": {"labels": {"x": "1"}, "resourceVersion": "42"}})
        );
        assert_eq!(
            locked(Map::new(), None),
            json!({}),
            "no resourceVersion, no lock"
        );
    }
}
