//! What can go wrong in one reconcile of a Deployment. Every error is retried with the
//! controller's backoff (as kube-controller-manager requeues a failed sync rate limited);
//! a 409 Conflict from a stale object is the common case and fixes itself on the next try.

use super::sync::SyncError;

/// A reconcile of a Deployment failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeploymentError {
    /// The Deployment's spec cannot be synced.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// A request to the API server failed.
    #[error("{action} {object}: {source}")]
    Api {
        /// What was attempted (`creating ReplicaSet`, `updating status of Deployment`, ...).
        action: &'static str,
        /// `namespace/name` of the object.
        object: String,
        /// What the server (or the transport) said.
        #[source]
        source: kubegen::client::Error,
    },
    /// The new ReplicaSet's name is taken by another ReplicaSet with a different template:
    /// `status.collisionCount` was raised so the next try hashes to another name.
    #[error(
        "hash collision: ReplicaSet {name} exists with another template; collisionCount is now {count}"
    )]
    HashCollision {
        /// The name that was taken.
        name: String,
        /// The new collision count.
        count: i32,
    },
}

impl DeploymentError {
    /// A failed API request.
    pub(crate) fn api(
        action: &'static str,
        namespace: &str,
        name: &str,
        source: kubegen::client::Error,
    ) -> Self {
        DeploymentError::Api {
            action,
            object: format!("{namespace}/{name}"),
            source,
        }
    }
}
