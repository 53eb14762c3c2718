//! Waiting for one object to reach a state (kube-runtime's `wait::await_condition`):
//! [`await_condition()`] watches the object by name until a [`Condition`] holds, with a
//! deadline; [`is_deleted`] and [`is_condition_true`] are ready-made conditions.
//!
//! The wait starts from a list (field selector `metadata.name=…`), so a state reached before
//! the call is seen at once, and watches from the list's resourceVersion, so no change after
//! it is missed. A watch the server ends is resumed from the last resourceVersion seen; a
//! 410 Gone (history compacted) or a broken stream lists again.

use std::time::Duration;

use futures::StreamExt;
use kube_core::{
    Resource, Status, WatchEvent,
    params::{ListParams, WatchParams},
};
use serde::Serialize;

use crate::{
    Object,
    client::{Error, ResourceClient},
};

/// How long one watch request asks the server to stay open (kube-apiserver caps
/// `timeoutSeconds` at its own `--min-request-timeout`-derived limit anyway).
const WATCH_TIMEOUT_SECONDS: u32 = 290;
/// The pause before listing again after a broken watch stream.
const RELIST_DELAY: Duration = Duration::from_millis(100);

/// A state of an object to wait for: `None` when the object does not exist. Any
/// `Fn(Option<&K>) -> bool` is one.
pub trait Condition<K> {
    /// Whether `object` (or its absence) satisfies the condition.
    fn matches_object(&self, object: Option<&K>) -> bool;
}

impl<K, F: Fn(Option<&K>) -> bool> Condition<K> for F {
    fn matches_object(&self, object: Option<&K>) -> bool {
        self(object)
    }
}

/// Why [`await_condition()`] gave up.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// The condition did not hold within the timeout.
    #[error("timed out after {timeout:?} waiting for {name:?}")]
    Timeout {
        /// The object's name.
        name: String,
        /// The timeout given.
        timeout: Duration,
    },
    /// Listing the object failed (it is missing from the API, or the client may not list
    /// it).
    #[error("listing {name:?} failed: {source}")]
    List {
        /// The object's name.
        name: String,
        /// The client's error.
        #[source]
        source: Error,
    },
    /// Opening a watch failed (other than with 410 Gone, which lists again).
    #[error("watching {name:?} failed: {source}")]
    Watch {
        /// The object's name.
        name: String,
        /// The client's error.
        #[source]
        source: Error,
    },
    /// The watch sent an error event other than 410 Gone.
    #[error("watching {name:?}: the server sent an error: {} {}", .status.code, .status.message)]
    WatchStatus {
        /// The object's name.
        name: String,
        /// The `Status` the server sent.
        status: Box<Status>,
    },
}

/// Watches the object `name` (in `client`'s namespace) until `condition` holds, and returns
/// it then (`None`: the condition held for a missing object, e.g. [`is_deleted`]); fails
/// with [`WaitError::Timeout`] after `timeout`, or when listing or watching fails.
///
/// ```no_run
/// # use std::time::Duration;
/// # use k8s_openapi::api::apps::v1::Deployment;
/// # use kubegen::client::ResourceClient;
/// use kubegen::controllerutil::wait::{await_condition, is_condition_true};
/// # async fn demo(deployments: ResourceClient<Deployment>) -> Result<(), Box<dyn std::error::Error>> {
/// let web = await_condition(
///     deployments,
///     "web",
///     is_condition_true("Available"),
///     Duration::from_secs(60),
/// )
/// .await?;
/// # Ok(())
/// # }
/// ```
pub async fn await_condition<K: Object>(
    client: ResourceClient<K>,
    name: &str,
    condition: impl Condition<K>,
    timeout: Duration,
) -> Result<Option<K>, WaitError> {
    match tokio::time::timeout(timeout, watch_until(&client, name, &condition)).await {
        Ok(result) => result,
        Err(_elapsed) => Err(WaitError::Timeout {
            name: name.to_owned(),
            timeout,
        }),
    }
}

/// The object's resourceVersion, or `fallback` when it has none.
fn version_of(object: &impl Resource, fallback: String) -> String {
    object.meta().resource_version.clone().unwrap_or(fallback)
}

async fn watch_until<K: Object>(
    client: &ResourceClient<K>,
    name: &str,
    condition: &impl Condition<K>,
) -> Result<Option<K>, WaitError> {
    let selector = format!("metadata.name={name}");
    'list: loop {
        let list = client
            .list(&ListParams::default().fields(&selector))
            .await
            .map_err(|source| WaitError::List {
                name: name.to_owned(),
                source,
            })?;
        let mut current = list
            .items
            .into_iter()
            .find(|o| o.meta().name.as_deref() == Some(name));
        if condition.matches_object(current.as_ref()) {
            return Ok(current);
        }
        let mut version = list.metadata.resource_version.unwrap_or_default();
        loop {
            let params = WatchParams::default()
                .fields(&selector)
                .timeout(WATCH_TIMEOUT_SECONDS);
            let mut events = match client.watch(&params, &version).await {
                Ok(events) => events,
                Err(e) if e.is_gone() || e.is_resource_expired() => continue 'list,
                Err(source) => {
                    return Err(WaitError::Watch {
                        name: name.to_owned(),
                        source,
                    });
                }
            };
            while let Some(event) = events.next().await {
                match event {
                    Ok(WatchEvent::Added(object) | WatchEvent::Modified(object)) => {
                        version = version_of(&object, version);
                        current = Some(object);
                    }
                    Ok(WatchEvent::Deleted(object)) => {
                        version = version_of(&object, version);
                        current = None;
                    }
                    Ok(WatchEvent::Bookmark(bookmark)) => {
                        version = bookmark.metadata.resource_version;
                        continue;
                    }
                    Ok(WatchEvent::Error(status)) if status.code == 410 => continue 'list,
                    Ok(WatchEvent::Error(status)) => {
                        return Err(WaitError::WatchStatus {
                            name: name.to_owned(),
                            status,
                        });
                    }
                    Err(e) => {
                        // A line we could not read: a change may be lost, so start over.
                        tracing::debug!(name, error = %e, "watch stream broke; listing again");
                        tokio::time::sleep(RELIST_DELAY).await;
                        continue 'list;
                    }
                }
                if condition.matches_object(current.as_ref()) {
                    return Ok(current);
                }
            }
            tracing::trace!(name, version, "watch ended; resuming");
        }
    }
}

/// Holds once the object with `uid` is gone: not found, or found with another uid (deleted
/// and created again under the same name, even if the deletion itself was never seen).
pub fn is_deleted<K: Resource>(uid: &str) -> impl Condition<K> + '_ {
    move |object: Option<&K>| object.is_none_or(|o| o.meta().uid.as_deref() != Some(uid))
}

/// Holds once the object has a `status.conditions[]` entry of type `type_` with status
/// `"True"`. Works for any type with the usual condition shape (`metav1.Condition`, and the
/// built-in types' own condition structs), read through its JSON form.
pub fn is_condition_true<K: Serialize>(type_: &str) -> impl Condition<K> + '_ {
    move |object: Option<&K>| {
        let Some(value) = object.and_then(|o| serde_json::to_value(o).ok()) else {
            return false;
        };
        value
            .pointer("/status/conditions")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c.get("type").and_then(serde_json::Value::as_str) == Some(type_))
            .and_then(|c| c.get("status"))
            .and_then(serde_json::Value::as_str)
            == Some("True")
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;

    use super::*;

    /// A Deployment read from JSON (the condition struct's field types differ between
    /// Kubernetes versions; the wire form does not).
    fn deployment(uid: &str, available: Option<&str>) -> Deployment {
        let status = available.map(
            |status| serde_json::json!({"conditions": [{"type": "Available", "status": status}]}),
        );
        serde_json::from_value(serde_json::json!({
            "metadata": {"uid": uid},
            "status": status,
        }))
        .expect("a Deployment")
    }

    /// kube-runtime `wait::conditions::is_deleted`: a missing object or another uid.
    #[test]
    fn deleted_means_missing_or_replaced() {
        let cond = is_deleted::<Deployment>("u1");
        assert!(cond.matches_object(None));
        assert!(!cond.matches_object(Some(&deployment("u1", None))));
        assert!(cond.matches_object(Some(&deployment("u2", None))));
    }

    #[test]
    fn condition_true_reads_status_conditions() {
        let cond = is_condition_true::<Deployment>("Available");
        assert!(!cond.matches_object(None));
        assert!(!cond.matches_object(Some(&deployment("u", None))));
        assert!(!cond.matches_object(Some(&deployment("u", Some("False")))));
        assert!(cond.matches_object(Some(&deployment("u", Some("True")))));
        assert!(
            !is_condition_true::<Deployment>("Progressing")
                .matches_object(Some(&deployment("u", Some("True"))))
        );
    }
}
