//! Resource locks (client-go's `resourcelock`): where a leader election stores its
//! [`LeaderElectionRecord`]. [`LeaseLock`] is the one to use (a `coordination.k8s.io/v1`
//! Lease, client-go's default since 1.17).
//!
//! Every update carries the resourceVersion the lock last read or wrote, so the API server
//! rejects it with 409 Conflict when anyone else wrote in between: two candidates can never
//! both believe their write made them the holder.

use std::collections::BTreeMap;

use futures::{FutureExt, future::BoxFuture};
use k8s_openapi::api::coordination::v1::Lease;
use kube_core::{ObjectMeta, params::PostParams};
use parking_lot::Mutex;

use super::LeaderElectionRecord;
use crate::client::{Client, Error as ClientError, ResourceClient};

/// A lock operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The API call failed (a 404 on `get` means the lock does not exist yet; a 409 on
    /// `update` that someone else wrote first).
    #[error(transparent)]
    Api(#[from] ClientError),
    /// `update` before the lock was read or created.
    #[error("the lock was never read: get or create it first")]
    NotInitialized,
    /// The stored record could not be encoded for comparison.
    #[error("encoding the record: {0}")]
    Encode(#[from] serde_json::Error),
}

impl LockError {
    /// Whether the lock does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Api(e) if e.is_not_found())
    }
}

/// Stores a [`LeaderElectionRecord`] (client-go's `resourcelock.Interface`).
pub trait ResourceLock: Send + Sync + 'static {
    /// Reads the record, with its raw form (compared to tell a change from a re-read).
    fn get(&self) -> BoxFuture<'_, Result<(LeaderElectionRecord, Vec<u8>), LockError>>;
    /// Creates the lock holding `record`.
    fn create(&self, record: LeaderElectionRecord) -> BoxFuture<'_, Result<(), LockError>>;
    /// Replaces the record, if nobody wrote since this lock last read or wrote it.
    fn update(&self, record: LeaderElectionRecord) -> BoxFuture<'_, Result<(), LockError>>;
    /// This candidate's identity.
    fn identity(&self) -> &str;
    /// `namespace/name`, for logs.
    fn describe(&self) -> String;
}

/// A lock held in a `coordination.k8s.io/v1` Lease.
pub struct LeaseLock {
    client: ResourceClient<Lease>,
    namespace: String,
    name: String,
    identity: String,
    /// Labels the Lease is created with (a shard ring names its members' Leases this way).
    labels: BTreeMap<String, String>,
    /// The Lease as last read or written (its resourceVersion guards the next update).
    lease: Mutex<Option<Lease>>,
}

impl std::fmt::Debug for LeaseLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseLock")
            .field("lease", &self.describe())
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl LeaseLock {
    /// The Lease `namespace/name`, contended for as `identity` (unique per candidate, such
    /// as the pod name, or the hostname with a random suffix).
    pub fn new(
        client: Client,
        namespace: impl Into<String>,
        name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        let namespace = namespace.into();
        Self {
            client: ResourceClient::namespaced(client, &namespace),
            namespace,
            name: name.into(),
            identity: identity.into(),
            labels: BTreeMap::new(),
            lease: Mutex::new(None),
        }
    }

    /// Creates the Lease with `labels` (an existing Lease keeps the labels it has): what
    /// lets a reader list a set of Leases by selector, as
    /// a shard ring lists its members.
    #[must_use]
    pub fn with_labels(mut self, labels: BTreeMap<String, String>) -> Self {
        self.labels = labels;
        self
    }

    fn remember(&self, lease: Lease) -> Result<(LeaderElectionRecord, Vec<u8>), LockError> {
        let spec = lease.spec.clone().unwrap_or_default();
        let record = LeaderElectionRecord::from_lease_spec(&spec);
        let raw = serde_json::to_vec(&spec)?;
        *self.lease.lock() = Some(lease);
        Ok((record, raw))
    }
}

impl ResourceLock for LeaseLock {
    fn get(&self) -> BoxFuture<'_, Result<(LeaderElectionRecord, Vec<u8>), LockError>> {
        async move {
            let lease = self.client.get(&self.name).await?;
            self.remember(lease)
        }
        .boxed()
    }

    fn create(&self, record: LeaderElectionRecord) -> BoxFuture<'_, Result<(), LockError>> {
        async move {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    namespace: Some(self.namespace.clone()),
                    labels: (!self.labels.is_empty()).then(|| self.labels.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(record.to_lease_spec()),
            };
            let created = self.client.create(&PostParams::default(), &lease).await?;
            self.remember(created).map(drop)
        }
        .boxed()
    }

    fn update(&self, record: LeaderElectionRecord) -> BoxFuture<'_, Result<(), LockError>> {
        async move {
            let mut lease = self.lease.lock().clone().ok_or(LockError::NotInitialized)?;
            lease.spec = Some(record.to_lease_spec());
            let updated = self.client.update(&PostParams::default(), &lease).await?;
            self.remember(updated).map(drop)
        }
        .boxed()
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}
