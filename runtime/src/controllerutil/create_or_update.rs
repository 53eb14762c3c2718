//! [`create_or_update()`] (controller-runtime's `controllerutil.CreateOrUpdate`): make an
//! object look the way a mutate function says, creating it when it is missing and writing it
//! only when the function changed something; [`OperationResult`] says what happened.
//!
//! Unlike controller-runtime's, which gives up at the first 409, each call converges: a
//! conflict (the object changed between the read and the write) or an "already exists"
//! (someone created it between our read and our create) starts the attempt over — read
//! again, mutate the fresh copy again, write again — with client-go's `retry.DefaultRetry`
//! bound (5 attempts, 10 ms apart), as `retry.RetryOnConflict` around a read-modify-write
//! does. The mutate function therefore runs once per attempt, always on the latest version.

use std::fmt;

use kube_core::{Resource, params::PostParams};
use parking_lot::Mutex;
use serde_json::Value;

use super::merge_patch::semantically_equal;
use crate::{
    Object,
    client::{DEFAULT_RETRY, Error, ResourceClient, on_error},
};

/// What [`create_or_update()`] or [`super::create_or_patch()`] did; the names complete "the
/// object has been …" (controller-runtime's `OperationResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperationResult {
    /// Nothing was written: the object already looked as the mutate function wanted
    /// (controller-runtime's `OperationResultNone`).
    Unchanged,
    /// The object did not exist and was created.
    Created,
    /// The existing object (its main resource) was written.
    Updated,
    /// The main resource and the status subresource were written (only from
    /// [`super::create_or_patch()`]).
    UpdatedStatus,
    /// Only the status subresource was written (only from [`super::create_or_patch()`]).
    UpdatedStatusOnly,
}

impl OperationResult {
    /// controller-runtime's string for the result: `unchanged`, `created`, `updated`,
    /// `updatedStatus`, `updatedStatusOnly`.
    pub fn as_str(self) -> &'static str {
        match self {
            OperationResult::Unchanged => "unchanged",
            OperationResult::Created => "created",
            OperationResult::Updated => "updated",
            OperationResult::UpdatedStatus => "updatedStatus",
            OperationResult::UpdatedStatusOnly => "updatedStatusOnly",
        }
    }
}

impl fmt::Display for OperationResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why [`create_or_update()`] or [`super::create_or_patch()`] failed. `E` is the mutate
/// function's error.
#[derive(Debug, thiserror::Error)]
pub enum CreateOrUpdateError<E> {
    /// The object given has no `metadata.name` (generateName cannot be used: the object
    /// could never be found again).
    #[error("the object has no name: create_or_update needs metadata.name")]
    MissingName,
    /// The mutate function failed; nothing was written in this attempt.
    #[error("mutate function failed: {0}")]
    Mutate(#[source] E),
    /// The mutate function changed the object's name or namespace
    /// (controller-runtime: "MutateFn cannot mutate object name and/or object namespace").
    #[error(
        "the mutate function cannot change the object's name or namespace: {before} became {after}"
    )]
    KeyChanged {
        /// `namespace/name` before the mutate function ran.
        before: String,
        /// `namespace/name` after it.
        after: String,
    },
    /// A request failed (after the retries a conflict gets).
    #[error("{verb} failed: {source}")]
    Api {
        /// The verb: `get`, `create`, `update`, `patch`, `patch status` or `apply`.
        verb: &'static str,
        /// The client's error.
        #[source]
        source: Error,
    },
    /// The object could not be turned into JSON to be compared.
    #[error("serializing the object: {0}")]
    Serialize(#[source] serde_json::Error),
    /// The manager's fields could not be read back into the apply configuration (only
    /// from [`super::create_or_apply()`]).
    #[error("extracting the manager's fields: {0}")]
    Extract(#[source] crate::applyconfig::ExtractError),
}

impl<E> CreateOrUpdateError<E> {
    /// The client error, when a request failed.
    pub fn api_error(&self) -> Option<&Error> {
        match self {
            CreateOrUpdateError::Api { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Whether the last failure was a 409 Conflict (the retries ran out).
    pub fn is_conflict(&self) -> bool {
        self.api_error().is_some_and(Error::is_conflict)
    }

    /// Whether starting the attempt over can succeed: a conflict, a create that found the
    /// name taken (go the update path), or a write that found the object gone after the
    /// read (go the create path).
    fn is_retriable(&self) -> bool {
        match self {
            CreateOrUpdateError::Api { verb, source } => {
                source.is_conflict()
                    || (*verb == "create" && source.is_already_exists())
                    || (*verb != "get" && *verb != "create" && source.is_not_found())
            }
            _ => false,
        }
    }
}

/// `namespace/name` of an object (for the key check and logs).
pub(super) fn key_of(object: &impl Resource) -> String {
    let meta = object.meta();
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or("")
    )
}

/// Runs the mutate function on `object` and checks it kept the name and namespace.
pub(super) fn run_mutate<K: Resource, E>(
    mutate: &Mutex<impl FnMut(&mut K) -> Result<(), E>>,
    object: &mut K,
) -> Result<(), CreateOrUpdateError<E>> {
    let before = key_of(object);
    (mutate.lock())(object).map_err(CreateOrUpdateError::Mutate)?;
    let after = key_of(object);
    if before == after {
        Ok(())
    } else {
        Err(CreateOrUpdateError::KeyChanged { before, after })
    }
}

/// The object as JSON, for comparing.
pub(super) fn to_json<E>(object: &impl serde::Serialize) -> Result<Value, CreateOrUpdateError<E>> {
    serde_json::to_value(object).map_err(CreateOrUpdateError::Serialize)
}

/// Tags a client error with its verb.
pub(super) fn api<E>(verb: &'static str) -> impl FnOnce(Error) -> CreateOrUpdateError<E> {
    move |source| CreateOrUpdateError::Api { verb, source }
}

/// Runs `attempt` until it succeeds or fails for good (client-go's `retry.OnError` with
/// `DefaultRetry`, retrying what [`CreateOrUpdateError::is_retriable`] allows).
pub(super) async fn converge<T, E, Fut>(
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, CreateOrUpdateError<E>>
where
    Fut: Future<Output = Result<T, CreateOrUpdateError<E>>>,
{
    on_error(DEFAULT_RETRY, CreateOrUpdateError::is_retriable, || {
        attempt()
    })
    .await
}

/// Gets the object named like `object` (in the client's namespace); when it does not exist,
/// runs `mutate` on `object` and creates it ([`OperationResult::Created`]); when it does,
/// runs `mutate` on a copy of the server's version and replaces it if the copy differs
/// ([`OperationResult::Updated`]), or leaves it ([`OperationResult::Unchanged`]). Returns
/// the object as the server has it afterwards.
///
/// `object` supplies the name (required) and the starting point of a create; on the update
/// path the mutate function sees the server's version, so it must set every field it owns,
/// not rely on what `object` held (as in controller-runtime). It must not change the name or
/// namespace. Comparison is semantic (unset and empty collections are equal, see
/// apimachinery's `equality.Semantic`), and an update the server found to change nothing
/// (same resourceVersion back, e.g. only the status subresource was touched, which a
/// replace of the main resource ignores) is reported as `Unchanged`.
///
/// Conflicts and create/update races are retried from the read (see the module docs). A
/// field the server defaults that `mutate` resets (a Deployment's `replicas` to `None`)
/// makes every call write, as in controller-runtime.
pub async fn create_or_update<K, E, F>(
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
    let (object, result) = converge(|| update_attempt(client, &object, &name, &mutate)).await?;
    tracing::debug!(
        kind = %K::kind(&()),
        name,
        result = result.as_str(),
        "create_or_update"
    );
    Ok((object, result))
}

/// What the first step of a round found.
pub(super) enum Read<K> {
    /// The object exists (as read now).
    Existing(K),
    /// It did not: `mutate` ran on `object` and the result was created.
    Created(K),
}

/// The first step of a `create_or_update` / `create_or_patch` round: read `name`, or, when
/// it does not exist, create it from `object` after `mutate`.
pub(super) async fn read_or_create<K: Object, E>(
    client: &ResourceClient<K>,
    object: &K,
    name: &str,
    mutate: &Mutex<impl FnMut(&mut K) -> Result<(), E>>,
) -> Result<Read<K>, CreateOrUpdateError<E>> {
    match client.get(name).await {
        Ok(existing) => Ok(Read::Existing(existing)),
        Err(e) if e.is_not_found() => {
            let mut desired = object.clone();
            run_mutate(mutate, &mut desired)?;
            let created = client
                .create(&PostParams::default(), &desired)
                .await
                .map_err(api("create"))?;
            Ok(Read::Created(created))
        }
        Err(e) => Err(api("get")(e)),
    }
}

/// One read-mutate-write round of [`create_or_update()`].
async fn update_attempt<K: Object, E>(
    client: &ResourceClient<K>,
    object: &K,
    name: &str,
    mutate: &Mutex<impl FnMut(&mut K) -> Result<(), E>>,
) -> Result<(K, OperationResult), CreateOrUpdateError<E>> {
    let existing = match read_or_create(client, object, name, mutate).await? {
        Read::Existing(existing) => existing,
        Read::Created(created) => return Ok((created, OperationResult::Created)),
    };
    let mut desired = existing.clone();
    run_mutate(mutate, &mut desired)?;
    if semantically_equal(&to_json(&existing)?, &to_json(&desired)?) {
        return Ok((existing, OperationResult::Unchanged));
    }
    // `desired` carries the resourceVersion read above: a change in between is a 409.
    let updated = client
        .update(&PostParams::default(), &desired)
        .await
        .map_err(api("update"))?;
    let result = if updated.meta().resource_version == existing.meta().resource_version {
        OperationResult::Unchanged
    } else {
        OperationResult::Updated
    };
    Ok((updated, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_have_controller_runtimes_names() {
        let names: Vec<_> = [
            OperationResult::Unchanged,
            OperationResult::Created,
            OperationResult::Updated,
            OperationResult::UpdatedStatus,
            OperationResult::UpdatedStatusOnly,
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            names,
            [
                "unchanged",
                "created",
                "updated",
                "updatedStatus",
                "updatedStatusOnly"
            ]
        );
    }

    #[test]
    fn only_races_are_retried() {
        let status = |code: u16, reason: &str| {
            Error::from_response(
                http::StatusCode::from_u16(code).expect("code"),
                format!(r#"{{"kind":"Status","reason":"{reason}","code":{code}}}"#).as_bytes(),
            )
        };
        let err = |verb, code, reason| CreateOrUpdateError::<std::io::Error>::Api {
            verb,
            source: status(code, reason),
        };
        assert!(err("update", 409, "Conflict").is_retriable());
        assert!(err("create", 409, "AlreadyExists").is_retriable());
        assert!(err("update", 404, "NotFound").is_retriable());
        assert!(err("patch", 404, "NotFound").is_retriable());
        assert!(!err("get", 404, "NotFound").is_retriable());
        assert!(!err("update", 422, "Invalid").is_retriable());
        assert!(!err("create", 403, "Forbidden").is_retriable());
        assert!(!CreateOrUpdateError::<std::io::Error>::MissingName.is_retriable());
    }
}
