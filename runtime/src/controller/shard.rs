//! A sharded controller's side of the ring's handover (steps 2 and 4 of the protocol in
//! [`sharding`](crate::sharding)): the drain label passes every predicate, and a worker
//! that takes a drained object hands it back instead of reconciling it.

use std::sync::Arc;

use kube_core::params::{Patch, PatchParams};
use serde_json::json;

use super::Predicate;
use crate::{
    Object,
    client::{Client, Error as ClientError, ResourceClient},
    sharding::{RingLabels, ShardRing},
};

/// What a worker does with a cached object of a sharded controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Assigned to this member: reconcile it.
    Reconcile,
    /// The sharder asked this member to let go: hand it back.
    HandBack,
    /// Not this member's (a cache that is not filtered by the ring): leave it.
    NotOurs,
}

/// The handover of one member of a ring, for a controller of `K`.
#[derive(Debug, Clone)]
pub(super) struct Handover {
    labels: RingLabels,
    identity: String,
    client: Client,
}

impl Handover {
    pub(super) fn new(ring: &ShardRing) -> Self {
        Self {
            labels: ring.labels().clone(),
            identity: ring.identity().to_owned(),
            client: ring.client().clone(),
        }
    }

    pub(super) fn verdict<K: Object>(&self, obj: &K) -> Verdict {
        let meta = obj.meta();
        if self.labels.assigned(meta) != Some(self.identity.as_str()) {
            Verdict::NotOurs
        } else if self.labels.draining(meta) {
            Verdict::HandBack
        } else {
            Verdict::Reconcile
        }
    }

    /// Removes the shard and drain labels from `obj`, guarded by the resourceVersion the
    /// worker saw (a 409 means the object changed: the newer version comes through the
    /// informer and is handed back then).
    pub(super) async fn hand_back<K: Object>(&self, obj: &K) -> Result<(), ClientError> {
        let meta = obj.meta();
        let name = meta.name.clone().unwrap_or_default();
        let body = json!({"metadata": {
            "resourceVersion": meta.resource_version,
            "labels": { self.labels.shard_key(): null, self.labels.drain_key(): null },
        }});
        ResourceClient::<K>::scoped(self.client.clone(), meta.namespace.as_deref())
            .patch(&name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .map(drop)
    }

    /// `predicate`, letting through every event that carries the drain label.
    pub(super) fn predicate<K: Object>(
        &self,
        predicate: Arc<dyn Predicate<K>>,
    ) -> Arc<dyn Predicate<K>> {
        Arc::new(DrainOr {
            labels: self.labels.clone(),
            inner: predicate,
        })
    }
}

/// The primary predicate of a sharded controller: the user's, or the drain label.
struct DrainOr<K> {
    labels: RingLabels,
    inner: Arc<dyn Predicate<K>>,
}

impl<K: Object> Predicate<K> for DrainOr<K> {
    fn allow_create(&self, obj: &K) -> bool {
        self.labels.draining(obj.meta()) || self.inner.allow_create(obj)
    }

    fn allow_update(&self, old: &K, new: &K) -> bool {
        self.labels.draining(new.meta()) || self.inner.allow_update(old, new)
    }

    fn allow_delete(&self, obj: &K) -> bool {
        self.inner.allow_delete(obj)
    }
}
