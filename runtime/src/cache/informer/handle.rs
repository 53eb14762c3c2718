//! [`SharedIndexInformer`]: a reflector, a [`Queue`] (a [`RealFifo`] unless told otherwise)
//! and an [`Indexer`] wired together, fanning changes out to any number of
//! [`ResourceEventHandler`]s (client-go's `sharedIndexInformer`).
//!
//! ```text
//! ListerWatcher ─► Reflector ─► Queue ─► handle_item ─► Indexer
//!                                             └───────► processor ─► handlers
//! ```
//!
//! A relist popped from the queue is applied to the indexer in one swap (readers see the
//! cache before or after it, never a mix), then its notifications go out.
//!
//! The informer is cheap to clone. Handlers can be added before or after `run`; one added
//! later is first replayed the whole cache as adds (with `is_in_initial_list = true`)
//! while delta processing waits, so it misses nothing and sees nothing twice.
//!
//! The informer is split by concern: this file holds the handle and its reads; `builder`
//! its settings; `registration` adding and removing handlers; `lifecycle` `run`; `apply`
//! what a popped change does to the cache and the handlers.

use std::{
    fmt,
    sync::{Arc, OnceLock},
    time::Duration,
};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::cache::{
    CacheError, Indexer, Indexers, Lister, ListerWatcher, Queue, ReadOnlyIndexer, Reflector,
    ReflectorConfig, TransformFunc, WatchErrorHandler, informer::processor::Processor,
};
use crate::{Cacheable, metrics::InformerMetrics};

/// An informer operation that is not possible in the informer's current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InformerError {
    /// The informer has stopped; handlers and indexers can no longer be added.
    #[error("informer has already stopped")]
    Stopped,
    /// The handler is not (or no longer) registered with this informer.
    #[error("handler is not registered with this informer")]
    UnknownHandler,
    /// The cache refused the change.
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// Something whose cache can report being synced; see [`wait_for_cache_sync`].
pub trait CacheSynced: Send + Sync {
    /// Whether the initial list has been fully processed.
    fn has_synced(&self) -> bool;
}

/// Which queue an informer drains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueKind {
    /// A [`RealFifo`](crate::cache::RealFifo): every change in server order; relists applied atomically
    /// (client-go 1.36's only informer queue).
    #[default]
    RealFifo,
    /// A [`DeltaFifo`](crate::cache::DeltaFifo): changes grouped per key; relists applied page by page as they
    /// arrive (client-go before `InOrderInformers`).
    DeltaFifo,
}

pub(super) struct RunState {
    pub(super) started: bool,
    pub(super) stopped: bool,
    pub(super) resync_check_period: Duration,
    pub(super) default_handler_resync: Duration,
}

/// The names of an informer's type, taken from its `DynamicType` when it is built.
#[derive(Debug, Clone)]
pub(super) struct TypeNames {
    /// `ConfigMap`, logged and shown in `Debug`.
    pub(super) kind: String,
    /// `plural.group`, named in its listers' NotFound errors.
    pub(super) group_resource: Arc<str>,
}

impl TypeNames {
    pub(super) fn of<K: Cacheable>(dyntype: &K::DynamicType) -> Self {
        Self {
            kind: K::kind(dyntype).into_owned(),
            group_resource: crate::cache::store::lister::group_resource::<K>(dyntype).into(),
        }
    }
}

pub(super) struct Inner<K: Cacheable> {
    pub(super) names: TypeNames,
    pub(super) indexer: Indexer<K>,
    pub(super) lister_watcher: Arc<dyn ListerWatcher<K>>,
    pub(super) processor: Mutex<Processor<K>>,
    /// Held while deltas are applied, and while a late handler is replayed the cache.
    pub(super) block_deltas: Mutex<()>,
    pub(super) state: Mutex<RunState>,
    pub(super) transform: Option<TransformFunc<K>>,
    pub(super) error_handler: Option<WatchErrorHandler>,
    pub(super) reflector_config: ReflectorConfig,
    pub(super) queue_kind: QueueKind,
    pub(super) metrics: Option<InformerMetrics>,
    pub(super) fifo: OnceLock<Arc<dyn Queue<K>>>,
    pub(super) reflector: OnceLock<Arc<Reflector<K>>>,
    /// The resourceVersion of the last list, change or bookmark applied to the cache.
    pub(super) store_resource_version: Mutex<String>,
}

/// A shared, indexed informer for `K`; see the module docs.
pub struct SharedIndexInformer<K: Cacheable> {
    pub(super) inner: Arc<Inner<K>>,
}

impl<K: Cacheable> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<K: Cacheable> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("SharedIndexInformer")
            .field("kind", &self.inner.names.kind)
            .field("started", &state.started)
            .field("stopped", &state.stopped)
            .field("handlers", &self.inner.processor.lock().len())
            .finish()
    }
}

impl<K: Cacheable> SharedIndexInformer<K> {
    /// The informer's cache, read-only: only the informer writes it.
    pub fn indexer(&self) -> ReadOnlyIndexer<K> {
        self.inner.indexer.clone().into()
    }

    /// A lister over the informer's cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::from_parts(self.indexer(), self.inner.names.group_resource.clone())
    }

    /// Adds index functions to the cache, before or after start (not after stop).
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), InformerError> {
        if self.inner.state.lock().stopped {
            return Err(InformerError::Stopped);
        }
        Ok(self.inner.indexer.add_indexers(indexers)?)
    }

    /// True once the first list has been fully applied to the cache.
    pub fn has_synced(&self) -> bool {
        self.inner.fifo.get().is_some_and(|q| q.has_synced())
    }

    /// The resourceVersion the cache has applied: of the last list, change or bookmark
    /// popped from the queue and applied (client-go's `LastStoreSyncResourceVersion`). It
    /// trails [`SharedIndexInformer::last_sync_resource_version`] while changes wait in
    /// the queue; a reader of the cache has seen at least this version. With a
    /// [`DeltaFifo`](crate::cache::DeltaFifo), which applies per key rather than in order, it moves when the queue
    /// drains.
    pub fn last_store_sync_resource_version(&self) -> String {
        self.inner.store_resource_version.lock().clone()
    }

    /// The resourceVersion of the last list, event or bookmark the reflector has seen
    /// (possibly still queued, not yet in the cache).
    pub fn last_sync_resource_version(&self) -> String {
        self.inner
            .reflector
            .get()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// Whether `run` has returned.
    pub fn is_stopped(&self) -> bool {
        self.inner.state.lock().stopped
    }
}

impl<K: Cacheable> CacheSynced for SharedIndexInformer<K> {
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }
}

/// Waits until every cache has synced (checking every 100 ms, as client-go does); false if
/// `stop` is cancelled first.
pub async fn wait_for_cache_sync(stop: &CancellationToken, caches: &[&dyn CacheSynced]) -> bool {
    loop {
        if caches.iter().all(|c| c.has_synced()) {
            return true;
        }
        tokio::select! {
            biased;
            () = stop.cancelled() => return false,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}
