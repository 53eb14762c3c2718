//! The informer cache layer (client-go's `tools/cache`).
//!
//! The informer cache layer (client-go's `tools/cache`), in four parts whose arrows run one
//! way — a reflector writes to a queue, an informer drains the queue into a store:
//!
//! * `store/`: object keys (`keys`), index functions (`index`), [`ThreadSafeStore`] (items
//!   and indices under one lock, and the [`KnownObjects`] a queue reads of it:
//!   `thread_safe`), [`Indexer`] (the informer's keyed, indexed cache), [`ReadOnlyIndexer`]
//!   (what an informer hands out: `read_only`) and [`Lister`] / [`NamespaceLister`]
//!   (`lister`).
//! * `queue/`: [`ReflectorSink`] and [`PagedReplace`] (what a reflector writes to:
//!   `sink`), [`Queue`] and the [`Queued`] items it hands an informer, among them the
//!   atomic [`Relist`] and [`Resync`] (`drain`), the keyed core and its sync state the
//!   queues share (`core`, `sync_state`), the change records ([`Delta`] and the
//!   tombstones: `delta`), and the queues: [`Fifo`], [`DeltaFifo`] (every change, grouped
//!   per key) and [`RealFifo`] (the informer's default: every change in server order,
//!   relists and resyncs as one item each).
//! * `reflector/`: [`Reflector`] (list, then watch, into a [`ReflectorSink`]: `reflector`),
//!   [`ListerWatcher`] with [`ListWatch`] and [`MetadataListWatch`] (`list_watch`),
//!   [`MeteredListerWatcher`] (`metered`), the watch idle timeout (`watch_idle`) and the
//!   backoff between attempts (`backoff`).
//! * `informer/`: [`SharedIndexInformer`] — its handle (`handle`), settings (`builder`),
//!   handler registration (`registration`), `run` (`lifecycle`), what a popped change does
//!   to cache and handlers (`apply`: client-go's `processDeltas`) — the fan-out to handlers
//!   (`processor`) and [`ResourceEventHandler`] with its helpers (`handler`).
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

mod error;
pub(crate) mod informer;
pub(crate) mod queue;
pub(crate) mod reflector;
pub(crate) mod store;

#[cfg(test)]
pub(crate) mod testing;

/// The stream a [`ListerWatcher`] returns (the client's).
pub use crate::client::WatchStream;
pub use error::CacheError;
pub use informer::{
    builder::SharedIndexInformerBuilder,
    handle::{CacheSynced, InformerError, QueueKind, SharedIndexInformer, wait_for_cache_sync},
    handler::{
        Dispatch, FilteringResourceEventHandler, HandlerOptions, ResourceEventHandler,
        ResourceEventHandlerFuncs,
    },
    lifecycle::UnstartedInformer,
    registration::HandlerRegistration,
};
/// kube-core's label selector, as listers take it.
pub use kube_core::Selector;
/// The former name of [`Queued`].
#[doc(hidden)]
pub use queue::drain::Queued as QueueItem;
/// The former name of [`ReflectorSink`] (client-go calls it `Store`).
#[doc(hidden)]
pub use queue::sink::ReflectorSink as Store;
pub use queue::{
    core::{PopError, ProcessError},
    delta::{DeletedFinalStateUnknown, DeletedObject, Delta, DeltaType, Deltas},
    delta_fifo::{DeltaFifo, DeltaFifoOptions, TransformFunc},
    drain::{ProcessItem, Queue, Queued, Relist, Resync},
    fifo::Fifo,
    real_fifo::{Popped, RealFifo, RealFifoOptions},
    sink::{PagedReplace, ReflectorSink},
};
pub use reflector::{
    backoff::BackoffConfig,
    list_watch::{ListWatch, ListerWatcher, MetadataListWatch, TweakListParams},
    metered::MeteredListerWatcher,
    reflector::{
        INITIAL_EVENTS_END_ANNOTATION, InitialListStrategy, Reflector, ReflectorConfig,
        ReflectorError, ShouldResync, WatchErrorHandler,
    },
};
pub use store::{
    index::{
        IndexFunc, IndexFuncError, Indexers, NAMESPACE_INDEX, meta_namespace_index_func,
        namespace_indexers,
    },
    indexer::Indexer,
    keys::{
        KeyError, KeyFunc, deletion_handling_meta_namespace_key, meta_namespace_key,
        split_meta_namespace_key,
    },
    lister::{Lister, ListerError, NamespaceLister},
    read_only::ReadOnlyIndexer,
    thread_safe::{KnownObjects, ThreadSafeStore},
};
