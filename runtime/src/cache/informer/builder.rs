//! [`SharedIndexInformerBuilder`]: an informer's settings, fixed before it exists, and the
//! constructors that start from it (`SharedIndexInformer::new`, `builder`, `builder_with`,
//! each ending in an [`UnstartedInformer`];
//! client-go's `NewSharedIndexInformerWithOptions` and `SharedIndexInformerOptions`).

use std::{
    fmt,
    sync::{Arc, OnceLock},
    time::Duration,
};

use parking_lot::Mutex;

use super::handle::{Inner, RunState, TypeNames};
use crate::cache::{
    Indexer, Indexers, ListerWatcher, MeteredListerWatcher, ReflectorConfig, TransformFunc,
    WatchErrorHandler, informer::processor::Processor,
};
use crate::cache::{QueueKind, SharedIndexInformer, UnstartedInformer};
use crate::{
    Cacheable,
    metrics::{CacheMetricsProvider, InformerMetrics, ReflectorMetrics},
};

/// Settings of a [`SharedIndexInformer`], fixed before it exists (as kube-runtime's
/// `watcher::Config`): there is no setter that could fail once the informer runs.
pub struct SharedIndexInformerBuilder<K: Cacheable> {
    pub(super) names: TypeNames,
    pub(super) lister_watcher: Arc<dyn ListerWatcher<K>>,
    pub(super) default_resync: Duration,
    pub(super) indexers: Indexers<K>,
    pub(super) reflector: ReflectorConfig,
    pub(super) queue: QueueKind,
    pub(super) transform: Option<TransformFunc<K>>,
    pub(super) error_handler: Option<WatchErrorHandler>,
    pub(super) metrics: Option<InformerMetrics>,
}

impl<K: Cacheable> fmt::Debug for SharedIndexInformerBuilder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformerBuilder")
            .field("kind", &self.names.kind)
            .field("default_resync", &self.default_resync)
            .field("indexers", &self.indexers.keys().collect::<Vec<_>>())
            .field("reflector", &self.reflector)
            .field("queue", &self.queue)
            .field("transform", &self.transform.is_some())
            .finish_non_exhaustive()
    }
}

impl<K: Cacheable> SharedIndexInformerBuilder<K> {
    /// The resync period of handlers added without their own (zero, the default: no
    /// resync).
    #[must_use]
    pub fn default_resync(mut self, resync: Duration) -> Self {
        self.default_resync = resync;
        self
    }

    /// Adds index functions to the cache (a later one of the same name replaces an
    /// earlier one; more can be added once the informer exists with
    /// [`SharedIndexInformer::add_indexers`]).
    #[must_use]
    pub fn indexers(mut self, indexers: Indexers<K>) -> Self {
        self.indexers.extend(indexers);
        self
    }

    /// The reflector's settings (page size, streaming list, backoff, watch timeout). The
    /// resync period always comes from the handlers.
    #[must_use]
    pub fn reflector(mut self, config: ReflectorConfig) -> Self {
        self.reflector = config;
        self
    }

    /// The queue between reflector and cache ([`QueueKind::RealFifo`] by default).
    #[must_use]
    pub fn queue(mut self, kind: QueueKind) -> Self {
        self.queue = kind;
        self
    }

    /// Transforms every object before it is cached (for example to drop `managedFields`).
    #[must_use]
    pub fn transform(mut self, transform: TransformFunc<K>) -> Self {
        self.transform = Some(transform);
        self
    }

    /// Called with every list/watch error the informer recovers from.
    #[must_use]
    pub fn watch_error_handler(mut self, handler: WatchErrorHandler) -> Self {
        self.error_handler = Some(handler);
        self
    }

    /// Records client-go's informer and reflector metrics, labelled `name="<name>"`,
    /// through `provider` (for example a [`PrometheusMetrics`](crate::metrics::PrometheusMetrics)).
    #[must_use]
    pub fn metrics(mut self, name: &str, provider: &dyn CacheMetricsProvider) -> Self {
        self.metrics = Some(InformerMetrics::new(name, provider));
        self.lister_watcher = Arc::new(MeteredListerWatcher::new(
            self.lister_watcher,
            ReflectorMetrics::new(name, provider),
        ));
        self
    }

    /// The informer, not yet running: [`UnstartedInformer::run`] starts it.
    pub fn build(self) -> UnstartedInformer<K> {
        UnstartedInformer::new(SharedIndexInformer {
            inner: Arc::new(Inner {
                names: self.names,
                indexer: Indexer::new(self.indexers),
                lister_watcher: self.lister_watcher,
                processor: Mutex::new(Processor::new()),
                block_deltas: Mutex::new(()),
                state: Mutex::new(RunState {
                    started: false,
                    stopped: false,
                    resync_check_period: self.default_resync,
                    default_handler_resync: self.default_resync,
                }),
                transform: self.transform,
                error_handler: self.error_handler,
                reflector_config: self.reflector,
                queue_kind: self.queue,
                metrics: self.metrics,
                fifo: OnceLock::new(),
                reflector: OnceLock::new(),
                store_resource_version: Mutex::new(String::new()),
            }),
        })
    }
}

impl<K: Cacheable<DynamicType: Default>> SharedIndexInformer<K> {
    /// An informer over `lister_watcher`, with `default_resync` for handlers added without
    /// their own period (zero: no resync) and `indexers` for its cache; the other settings
    /// at their defaults. [`SharedIndexInformer::builder`] chooses them all.
    // It returns the informer in its one unstarted value, as client-go's
    // `NewSharedIndexInformer` returns the informer to `Run`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(
        lister_watcher: impl ListerWatcher<K>,
        default_resync: Duration,
        indexers: Indexers<K>,
    ) -> UnstartedInformer<K> {
        Self::builder(lister_watcher)
            .default_resync(default_resync)
            .indexers(indexers)
            .build()
    }

    /// A builder for an informer over `lister_watcher`.
    pub fn builder(lister_watcher: impl ListerWatcher<K>) -> SharedIndexInformerBuilder<K> {
        Self::builder_with(lister_watcher, &K::DynamicType::default())
    }
}

impl<K: Cacheable> SharedIndexInformer<K> {
    /// A builder for an informer over `lister_watcher` of the type `dyntype` describes
    /// (for `DynamicObject`, its `ApiResource`: client-go's dynamic informers).
    pub fn builder_with(
        lister_watcher: impl ListerWatcher<K>,
        dyntype: &K::DynamicType,
    ) -> SharedIndexInformerBuilder<K> {
        SharedIndexInformerBuilder {
            names: TypeNames::of::<K>(dyntype),
            lister_watcher: Arc::new(lister_watcher),
            default_resync: Duration::ZERO,
            indexers: Indexers::new(),
            reflector: ReflectorConfig::default(),
            queue: QueueKind::default(),
            transform: None,
            error_handler: None,
            metrics: None,
        }
    }
}
