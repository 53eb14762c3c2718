//! [`CachedClient`]: a controller's client for one type (controller-runtime's delegating
//! client): reads come from the shared informer's cache, writes go to the API server, and
//! read-your-own-writes is on by default — a read (or, through
//! [`ControllerBuilder::read_your_writes`](super::ControllerBuilder::read_your_writes), a
//! reconcile) of an object this client wrote waits until the cache has seen the write
//! ([`ConsistencyStore`]). Opt out with [`CachedClient::without_read_your_writes`]: reads are
//! then as fresh as the cache, as with a plain lister.

use std::{sync::Arc, time::Duration};

use kube_core::{
    Selector,
    params::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde::Serialize;

use super::{ConsistencyStore, Request};
use crate::{
    Object,
    cache::{InformerError, Lister, ListerError},
    client::{Client, DeleteResponse, Error as ClientError, ResourceClient},
    informers::SharedInformerFactory,
};

/// How long a read waits for the cache by default.
pub const DEFAULT_CONSISTENCY_WAIT: Duration = Duration::from_secs(5);

/// A cached read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The object is not in the cache.
    #[error(transparent)]
    NotFound(#[from] ListerError),
    /// The cache did not catch up with this client's own write of the object in time:
    /// what it holds is older than what this client wrote.
    #[error("the cache has not caught up with our own write of {0} yet")]
    Stale(String),
}

impl ReadError {
    /// Whether the object is not in the cache.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound(_))
    }
}

/// Reads `K` from the factory's cache, writes it through the API server; see the module
/// docs. Cheap to clone.
pub struct CachedClient<K: Object> {
    client: Client,
    lister: Lister<K>,
    consistency: Option<Arc<ConsistencyStore<K>>>,
    wait: Duration,
}

impl<K: Object> Clone for CachedClient<K> {
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
            lister: self.lister.clone(),
            consistency: self.consistency.clone(),
            wait: self.wait,
        }
    }
}

impl<K: Object> std::fmt::Debug for CachedClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedClient")
            .field("read_your_writes", &self.consistency.is_some())
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

/// The cache key of `name` in `namespace` (the one rule, [`Request::cache_key`]).
fn key(namespace: Option<&str>, name: &str) -> String {
    Request::new(namespace, name).cache_key()
}

impl<K: Object> CachedClient<K> {
    /// A client writing through `client` and reading from `factory`'s informer for `K`
    /// (requested now), with read-your-own-writes.
    pub fn new(client: Client, factory: &SharedInformerFactory) -> Result<Self, InformerError> {
        let informer = factory.informer_for::<K>();
        Ok(Self {
            client,
            lister: informer.lister(),
            consistency: Some(ConsistencyStore::new(&informer)?),
            wait: DEFAULT_CONSISTENCY_WAIT,
        })
    }

    /// Reads as fresh as the cache, without waiting for this client's own writes.
    #[must_use]
    pub fn without_read_your_writes(mut self) -> Self {
        self.consistency = None;
        self
    }

    /// How long a read waits for the cache to see this client's own write (default 5 s).
    #[must_use]
    pub fn consistency_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// The store of this client's writes (for [`ControllerBuilder::read_your_writes`](super::ControllerBuilder::read_your_writes)),
    /// unless read-your-own-writes is off.
    pub fn consistency(&self) -> Option<&Arc<ConsistencyStore<K>>> {
        self.consistency.as_ref()
    }

    /// The lister behind the reads.
    pub fn lister(&self) -> &Lister<K> {
        &self.lister
    }

    fn api(&self, namespace: Option<&str>) -> ResourceClient<K> {
        ResourceClient::scoped(self.client.clone(), namespace)
    }

    async fn settle(&self, key: &str) -> Result<(), ReadError> {
        match &self.consistency {
            Some(store) if !store.ensure_ready(key, self.wait).await => {
                Err(ReadError::Stale(key.to_owned()))
            }
            _ => Ok(()),
        }
    }

    /// The cached object `name` (in `namespace`, `None` for cluster-scoped types), once
    /// the cache reflects this client's writes of it.
    pub async fn get(&self, namespace: Option<&str>, name: &str) -> Result<Arc<K>, ReadError> {
        self.settle(&key(namespace, name)).await?;
        Ok(match namespace {
            Some(namespace) => self.lister.namespaced(namespace).get(name)?,
            None => self.lister.get(name)?,
        })
    }

    /// The cached objects matching `selector` (in `namespace`, or all), once the cache
    /// reflects every write this client made.
    pub async fn list(
        &self,
        namespace: Option<&str>,
        selector: &Selector,
    ) -> Result<Vec<Arc<K>>, ReadError> {
        if let Some(store) = &self.consistency
            && !store.ensure_all_ready(self.wait).await
        {
            return Err(ReadError::Stale("the list".to_owned()));
        }
        Ok(match namespace {
            Some(namespace) => self.lister.namespaced(namespace).list(selector),
            None => self.lister.list(selector),
        })
    }

    /// Records a write of `obj` made without this client (by a helper such as
    /// [`create_or_update`](crate::controllerutil::create_or_update)), so reads and
    /// reconciles wait for it as for this client's own.
    pub fn record_write(&self, obj: &K) {
        self.record(obj);
    }

    fn record(&self, obj: &K) {
        if let (Some(store), Some(name), Some(rv)) = (
            &self.consistency,
            obj.meta().name.as_deref(),
            obj.meta().resource_version.as_deref(),
        ) {
            store.wrote_at(&key(obj.meta().namespace.as_deref(), name), rv);
        }
    }

    /// Creates `obj` (in its namespace).
    pub async fn create(&self, pp: &PostParams, obj: &K) -> Result<K, ClientError> {
        let created = self
            .api(obj.meta().namespace.as_deref())
            .create(pp, obj)
            .await?;
        self.record(&created);
        Ok(created)
    }

    /// Replaces `obj` (a stale resourceVersion is a 409 Conflict).
    pub async fn update(&self, pp: &PostParams, obj: &K) -> Result<K, ClientError> {
        let updated = self
            .api(obj.meta().namespace.as_deref())
            .update(pp, obj)
            .await?;
        self.record(&updated);
        Ok(updated)
    }

    /// Replaces `obj`'s status.
    pub async fn update_status(&self, pp: &PostParams, obj: &K) -> Result<K, ClientError> {
        let updated = self
            .api(obj.meta().namespace.as_deref())
            .update_status(pp, obj)
            .await?;
        self.record(&updated);
        Ok(updated)
    }

    /// Patches `name`.
    pub async fn patch<P: Serialize>(
        &self,
        namespace: Option<&str>,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, ClientError> {
        let patched = self.api(namespace).patch(name, pp, patch).await?;
        self.record(&patched);
        Ok(patched)
    }

    /// Patches `name`'s status.
    pub async fn patch_status<P: Serialize>(
        &self,
        namespace: Option<&str>,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, ClientError> {
        let patched = self.api(namespace).patch_status(name, pp, patch).await?;
        self.record(&patched);
        Ok(patched)
    }

    /// Deletes `name`: a read of it then waits until the cache has seen it go (or, when
    /// finalizers keep it, has seen its deletionTimestamp).
    pub async fn delete(
        &self,
        namespace: Option<&str>,
        name: &str,
        dp: &DeleteParams,
    ) -> Result<DeleteResponse<K>, ClientError> {
        let response = self.api(namespace).delete(name, dp).await?;
        if let Some(store) = &self.consistency {
            match &response {
                DeleteResponse::Object(kept) => self.record(kept),
                DeleteResponse::Status(_) => store.deleted(&key(namespace, name)),
            }
        }
        Ok(response)
    }
}
