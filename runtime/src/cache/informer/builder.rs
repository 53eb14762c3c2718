//! [`SharedIndexInformerBuilder`]: an informer's settings, fixed before it exists, and
//! [`QueueKind`], the queue it drains.

use std::{
    fmt,
    sync::{Arc, OnceLock},
    time::Duration,
};

use parking_lot::Mutex;

use super::handle::{Inner, RunState, TypeNames};
use crate::cache::SharedIndexInformer;
use crate::cache::{
    Indexer, Indexers, ListerWatcher, MeteredListerWatcher, ReflectorConfig, TransformFunc,
    WatchErrorHandler, informer::processor::Processor,
};
use crate::{
    Cacheable,
    metrics::{CacheMetricsProvider, InformerMetrics, ReflectorMetrics},
};

/// Which queue an informer drains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueKind {
    /// A [`RealFifo`]: every change in server order; relists applied atomically
    /// (client-go 1.36's only informer queue).
    #[default]
    RealFifo,
    /// A [`DeltaFifo`]: changes grouped per key; relists applied page by page as they
    /// arrive (client-go before `InOrderInformers`).
    DeltaFifo,
}

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

    /// The informer, not yet running.
    pub fn build(self) -> SharedIndexInformer<K> {
        SharedIndexInformer {
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
        }
    }
}
