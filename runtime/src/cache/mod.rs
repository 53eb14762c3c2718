//! The informer cache layer (client-go's `tools/cache`).
//!
//! One file per concept:
//!
//! * `keys`: object keys (`namespace/name`) and their inverse.
//! * `index`: index functions ([`IndexFunc`], [`Indexers`]) and the value → keys maps.
//! * `store`: [`ThreadSafeStore`], items and indices under one lock; the [`Store`] and
//!   [`KnownObjects`] traits.
//! * `indexer`: [`Indexer`], the informer's keyed, indexed cache.
//! * `read_only`: [`ReadOnlyIndexer`], the reads of an [`Indexer`]: what an informer hands
//!   out, so only the informer writes its cache.
//! * `fifo`: [`Fifo`], a queue keeping the newest value per key.
//! * `delta`: [`Delta`], [`DeltaType`], [`Deltas`], [`DeletedFinalStateUnknown`] and
//!   [`DeletedObject`].
//! * `queue`: [`Queue`], what an informer drains, and the [`QueueItem`]s it hands over
//!   (among them the atomic [`Relist`] and [`Resync`]).
//! * `real_fifo`: [`RealFifo`], the informer's default queue: every change in server order,
//!   relists and resyncs as one item each.
//! * `delta_fifo`: [`DeltaFifo`], the keyed queue (every change, grouped per key); an
//!   informer can use it instead.
//! * `handler`: [`ResourceEventHandler`] and its closure / filtering helpers.
//! * `processor`: the per-handler buffers and threads an informer fans out to.
//! * `reflector`: [`Reflector`] (list, then watch, into a [`Store`]) and [`ListerWatcher`].
//! * `list_watch`: [`ListWatch`], a [`ListerWatcher`] over a typed `ResourceClient`, and
//!   [`MetadataListWatch`] for metadata-only informers.
//! * `metered`: [`MeteredListerWatcher`], the reflector's metrics around any
//!   [`ListerWatcher`].
//! * `shared_informer`: [`SharedIndexInformer`], [`HandlerRegistration`],
//!   [`wait_for_cache_sync`].
//! * `lister`: [`Lister`] and [`NamespaceLister`], typed read-only views of a cache.
//!
//! Objects are held as `Arc<K>`; nothing here ever mutates a cached object.
//!
//! # Lock order
//!
//! Every path takes these locks in this order, never the reverse (each may be skipped):
//!
//! 1. a paged relist's page buffer (`RealFifo`/`DeltaFifo` `paged`),
//! 2. the queue's lock (`RealFifo` state / `QueueCore` state) — a pop holds it while the
//!    informer processes the popped items, so everything below nests inside it,
//! 3. the informer's `block_deltas` (held while items are applied, and while a handler
//!    added late is replayed the cache),
//! 4. the informer's `processor`,
//! 5. the indexer's `ThreadSafeStore` lock (a queue reads it as its known objects under 2),
//! 6. a listener's buffer.
//!
//! The informer's `state` lock is a leaf: it is released before 3 is taken. Nothing calls
//! into a queue (2) while holding 3–6.
//!
//! ```
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kubegen::cache::{Indexer, NAMESPACE_INDEX, namespace_indexers};
//!
//! let indexer: Indexer<ConfigMap> = Indexer::new(namespace_indexers());
//! let mut cm = ConfigMap::default();
//! cm.metadata.namespace = Some("default".into());
//! cm.metadata.name = Some("settings".into());
//! indexer.add(Arc::new(cm)).unwrap();
//! assert!(indexer.get_by_key("default/settings").is_some());
//! assert_eq!(indexer.by_index(NAMESPACE_INDEX, "default").unwrap().len(), 1);
//! ```

mod backoff;
mod delta;
mod delta_fifo;
mod error;
mod fifo;
mod handler;
mod index;
mod indexer;
mod keys;
mod list_watch;
pub(crate) mod lister;
mod metered;
mod processor;
mod queue;
mod queue_core;
mod read_only;
mod real_fifo;
mod reflector;
mod shared_informer;
mod store;
mod watch_idle;

#[cfg(test)]
pub(crate) mod testing;

pub use backoff::BackoffConfig;
pub use delta::{DeletedFinalStateUnknown, DeletedObject, Delta, DeltaType, Deltas};
pub use delta_fifo::{DeltaFifo, DeltaFifoOptions, TransformFunc};
pub use error::CacheError;
pub use fifo::Fifo;
pub use handler::{
    Dispatch, FilteringResourceEventHandler, HandlerOptions, ResourceEventHandler,
    ResourceEventHandlerFuncs,
};
pub use index::{
    IndexFunc, IndexFuncError, Indexers, NAMESPACE_INDEX, meta_namespace_index_func,
    namespace_indexers,
};
pub use indexer::Indexer;
pub use keys::{
    KeyError, KeyFunc, deletion_handling_meta_namespace_key, meta_namespace_key,
    split_meta_namespace_key,
};
/// kube-core's label selector, as listers take it.
pub use kube_core::Selector;
pub use list_watch::{ListWatch, MetadataListWatch, TweakListParams};
pub use lister::{Lister, ListerError, NamespaceLister};
pub use metered::MeteredListerWatcher;
pub use queue::{ProcessItem, Queue, QueueItem, Relist, Resync};
pub use queue_core::{PopError, ProcessError};
pub use read_only::ReadOnlyIndexer;
pub use real_fifo::{Popped, RealFifo, RealFifoOptions};
pub use reflector::{
    INITIAL_EVENTS_END_ANNOTATION, InitialListStrategy, ListerWatcher, Reflector, ReflectorConfig,
    ReflectorError, ShouldResync, WatchErrorHandler, WatchStream,
};
pub use shared_informer::{
    CacheSynced, HandlerRegistration, InformerError, QueueKind, SharedIndexInformer,
    SharedIndexInformerBuilder, wait_for_cache_sync,
};
pub use store::{KnownObjects, PagedReplace, Store, ThreadSafeStore};
