//! [`SharedIndexInformer`]: a reflector, a [`Queue`] (a [`RealFifo`] unless told otherwise)
//! and an [`Indexer`] wired together, fanning changes out to any number of
//! [`ResourceEventHandler`]s.
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

use std::{
    fmt,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::{
    CacheError, DeletedFinalStateUnknown, DeletedObject, Delta, DeltaFifo, DeltaFifoOptions,
    HandlerOptions, Indexer, Indexers, Lister, ListerWatcher, MeteredListerWatcher, PopError,
    Queue, QueueItem, ReadOnlyIndexer, RealFifo, RealFifoOptions, Reflector, ReflectorConfig,
    Relist, ResourceEventHandler, Resync, TransformFunc, WatchErrorHandler,
    index::StoreKey,
    processor::{
        Listener, MINIMUM_RESYNC_PERIOD, Notification, Processor, determine_resync_period,
    },
};
use crate::{
    Cacheable,
    metrics::{CacheMetricsProvider, InformerMetrics, ReflectorMetrics},
};

/// How many items the delta loop processes per hold of the queue's lock.
const POP_BATCH: usize = 64;

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

/// The handle returned when a handler is added; used to remove it and to ask whether it
/// has received every initial notification.
#[derive(Clone)]
pub struct HandlerRegistration {
    id: u64,
    synced: Arc<dyn Fn() -> bool + Send + Sync>,
    pending: Arc<AtomicUsize>,
}

impl fmt::Debug for HandlerRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandlerRegistration")
            .field("id", &self.id)
            .finish()
    }
}

impl HandlerRegistration {
    /// True once the informer has synced and this handler has handled every add of the
    /// initial list (or of its replay, for a handler added after start).
    pub fn has_synced(&self) -> bool {
        (self.synced)()
    }

    /// Notifications given to the handler and not yet handled: buffered, or in its
    /// callback now. Zero when the handler has caught up with the informer.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
}

impl CacheSynced for HandlerRegistration {
    fn has_synced(&self) -> bool {
        HandlerRegistration::has_synced(self)
    }
}

struct RunState {
    started: bool,
    stopped: bool,
    resync_check_period: Duration,
    default_handler_resync: Duration,
}

/// The names of an informer's type, taken from its `DynamicType` when it is built.
#[derive(Debug, Clone)]
struct TypeNames {
    /// `ConfigMap`, logged and shown in `Debug`.
    kind: String,
    /// `plural.group`, named in its listers' NotFound errors.
    group_resource: Arc<str>,
}

impl TypeNames {
    fn of<K: Cacheable>(dyntype: &K::DynamicType) -> Self {
        Self {
            kind: K::kind(dyntype).into_owned(),
            group_resource: super::lister::group_resource::<K>(dyntype).into(),
        }
    }
}

struct Inner<K: Cacheable> {
    names: TypeNames,
    indexer: Indexer<K>,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    processor: Mutex<Processor<K>>,
    /// Held while deltas are applied, and while a late handler is replayed the cache.
    block_deltas: Mutex<()>,
    state: Mutex<RunState>,
    transform: Option<TransformFunc<K>>,
    error_handler: Option<WatchErrorHandler>,
    reflector_config: ReflectorConfig,
    queue_kind: QueueKind,
    metrics: Option<InformerMetrics>,
    fifo: OnceLock<Arc<dyn Queue<K>>>,
    reflector: OnceLock<Arc<Reflector<K>>>,
    /// The resourceVersion of the last list, change or bookmark applied to the cache.
    store_resource_version: Mutex<String>,
}

/// A shared, indexed informer for `K`; see the module docs.
pub struct SharedIndexInformer<K: Cacheable> {
    inner: Arc<Inner<K>>,
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

/// Settings of a [`SharedIndexInformer`], fixed before it exists (as kube-runtime's
/// `watcher::Config`): there is no setter that could fail once the informer runs.
pub struct SharedIndexInformerBuilder<K: Cacheable> {
    names: TypeNames,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    default_resync: Duration,
    indexers: Indexers<K>,
    reflector: ReflectorConfig,
    queue: QueueKind,
    transform: Option<TransformFunc<K>>,
    error_handler: Option<WatchErrorHandler>,
    metrics: Option<InformerMetrics>,
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

impl<K: Cacheable<DynamicType: Default>> SharedIndexInformer<K> {
    /// An informer over `lister_watcher`, with `default_resync` for handlers added without
    /// their own period (zero: no resync) and `indexers` for its cache; the other settings
    /// at their defaults. [`SharedIndexInformer::builder`] chooses them all.
    pub fn new(
        lister_watcher: impl ListerWatcher<K>,
        default_resync: Duration,
        indexers: Indexers<K>,
    ) -> Self {
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

    /// Adds a handler with the informer's default resync period, called on a thread of
    /// its own.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> Result<HandlerRegistration, InformerError> {
        self.add_event_handler_with_options(handler, HandlerOptions::new())
    }

    /// Adds a handler that also wants a resync every `resync`; see
    /// [`add_event_handler_with_options`](Self::add_event_handler_with_options).
    pub fn add_event_handler_with_resync(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync: Duration,
    ) -> Result<HandlerRegistration, InformerError> {
        self.add_event_handler_with_options(handler, HandlerOptions::new().resync(resync))
    }

    /// Adds a handler as `options` say (client-go's `AddEventHandlerWithOptions`). Its
    /// resync period, when given, follows client-go's rules: at least 1 s; before start a
    /// period shorter than the informer's check period lowers it, after start it is raised
    /// to it; an informer created without resync never resyncs. Its
    /// [`Dispatch`](super::Dispatch) says whether it runs on a thread of its own or on a
    /// task of the informer's runtime.
    pub fn add_event_handler_with_options(
        &self,
        handler: impl ResourceEventHandler<K>,
        options: HandlerOptions,
    ) -> Result<HandlerRegistration, InformerError> {
        let mut state = self.inner.state.lock();
        if state.stopped {
            return Err(InformerError::Stopped);
        }
        let mut resync = options
            .resync_period()
            .unwrap_or(state.default_handler_resync);
        if !resync.is_zero() {
            if resync < MINIMUM_RESYNC_PERIOD {
                tracing::warn!(?resync, "resync period raised to the 1 s minimum");
                resync = MINIMUM_RESYNC_PERIOD;
            }
            if resync < state.resync_check_period {
                if state.started {
                    tracing::warn!(?resync, check = ?state.resync_check_period,
                        "informer already started: handler resync raised to the check period");
                    resync = state.resync_check_period;
                } else {
                    state.resync_check_period = resync;
                    self.inner
                        .processor
                        .lock()
                        .resync_check_period_changed(resync);
                }
            }
        }
        let effective = determine_resync_period(resync, state.resync_check_period);
        let listener = Listener::new(
            Arc::new(handler),
            resync,
            effective,
            options.dispatch_kind(),
        );
        let registration = self.registration(&listener);
        if !state.started {
            self.inner.processor.lock().add_listener(listener);
            return Ok(registration);
        }
        drop(state);
        // Join a running informer: stop delta processing, register, replay the cache.
        let _block = self.inner.block_deltas.lock();
        self.inner.processor.lock().add_listener(listener.clone());
        // In (namespace, name) order: the same cache replays the same way (a seeded
        // simulation repeats itself), for one sort of what is about to be delivered anyway.
        let mut cached = self.inner.indexer.list();
        cached.sort_unstable_by(|a, b| {
            (a.meta().namespace.as_deref(), a.meta().name.as_deref())
                .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
        });
        for obj in cached {
            listener.add(Notification::Add {
                obj,
                is_in_initial_list: true,
            });
        }
        Ok(registration)
    }

    fn registration(&self, listener: &Arc<Listener<K>>) -> HandlerRegistration {
        let informer = Arc::downgrade(&self.inner);
        let weak_listener = Arc::downgrade(listener);
        HandlerRegistration {
            id: listener.id,
            pending: listener.pending_counter(),
            synced: Arc::new(move || {
                let upstream = informer
                    .upgrade()
                    .is_some_and(|inner| inner.fifo.get().is_some_and(|q| q.has_synced()));
                upstream
                    && weak_listener
                        .upgrade()
                        .is_some_and(|l| l.initial_delivered())
            }),
        }
    }

    /// Removes a handler: its buffered notifications are dropped, and this returns once a
    /// callback in flight has returned (client-go's `ShutDownEventHandler` semantics), so
    /// afterwards the handler is never called again. Called from the handler's own
    /// callback it returns at once (it cannot wait for itself).
    pub async fn remove_event_handler(
        &self,
        registration: &HandlerRegistration,
    ) -> Result<(), InformerError> {
        let removed = self.inner.processor.lock().remove_listener(registration.id);
        match removed {
            None => Err(InformerError::UnknownHandler),
            Some(done) => {
                if let Some(done) = done {
                    // An error means the thread has gone already.
                    let _ = done.await;
                }
                Ok(())
            }
        }
    }

    /// Whether `registration` is still registered here.
    pub fn is_registered(&self, registration: &HandlerRegistration) -> bool {
        self.inner.processor.lock().is_registered(registration.id)
    }

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
    /// [`DeltaFifo`], which applies per key rather than in order, it moves when the queue
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

    /// Lists, watches and dispatches until `stop` is cancelled. Shutdown stops the
    /// reflector and the delta loop first, then the handlers (their pending notifications
    /// are dropped). Running an informer twice does nothing.
    pub async fn run(&self, stop: CancellationToken) {
        let check_period = {
            let mut state = self.inner.state.lock();
            if state.started || state.stopped {
                tracing::warn!("informer already started; ignoring run");
                return;
            }
            state.started = true;
            state.resync_check_period
        };
        let transform = self.inner.transform.clone();
        let kind = self.inner.queue_kind;
        let fifo = self
            .inner
            .fifo
            .get_or_init(|| self.new_queue(kind, transform))
            .clone();
        let mut config = self.inner.reflector_config.clone();
        config.resync_period = check_period;
        let should_resync = {
            let inner = Arc::downgrade(&self.inner);
            Arc::new(move || {
                inner
                    .upgrade()
                    .is_some_and(|i| i.processor.lock().should_resync())
            })
        };
        let store: Arc<dyn Queue<K>> = fifo.clone();
        let mut reflector = Reflector::new(self.inner.lister_watcher.clone(), store, config)
            .with_name(format!("reflector for {}", self.inner.names.kind))
            .with_should_resync(should_resync);
        if let Some(handler) = self.inner.error_handler.clone() {
            reflector = reflector.with_error_handler(handler);
        }
        let reflector = self
            .inner
            .reflector
            .get_or_init(|| Arc::new(reflector))
            .clone();
        self.inner.processor.lock().start();

        // The delta loop runs in this task beside the reflector: applying deltas interleaves
        // with fetching pages at their await points, and the objects a page decodes are
        // applied on the thread (and while in the cache) that decoded them.
        let pop_loop = {
            let (informer, fifo, stop) = (self.clone(), fifo.clone(), stop.clone());
            async move {
                // One cancellation future for the whole loop: a fresh one per pop would
                // register with the token every time.
                let cancelled = stop.cancelled();
                tokio::pin!(cancelled);
                let mut handle =
                    |item: QueueItem<'_, K>, initial: bool| informer.handle_item(item, initial);
                loop {
                    let popped = tokio::select! {
                        biased;
                        () = &mut cancelled => break,
                        popped = fifo.pop_batch(POP_BATCH, &mut handle) => popped,
                    };
                    let queued = fifo.len();
                    if let Some(metrics) = &informer.inner.metrics {
                        metrics.queued(queued);
                    }
                    informer.settle_store_version(queued);
                    match popped {
                        // Counts against tokio's cooperative budget, so a long backlog
                        // yields to the reflector and other tasks now and then.
                        Ok(_) => tokio::task::consume_budget().await,
                        Err(PopError::Closed) => break,
                        Err(PopError::Process { error, .. }) => {
                            tracing::error!(%error, "dropping deltas the cache refused");
                        }
                    }
                }
            }
        };
        tokio::join!(reflector.run(stop.clone()), pop_loop);
        fifo.close();
        let running = self.inner.processor.lock().stop();
        for done in running {
            let _ = done.await;
        }
        self.inner.state.lock().stopped = true;
    }

    fn new_queue(&self, kind: QueueKind, transform: Option<TransformFunc<K>>) -> Arc<dyn Queue<K>> {
        let known = self.inner.indexer.clone();
        match kind {
            QueueKind::RealFifo => {
                let mut options = RealFifoOptions::default().known_objects(known);
                if let Some(transform) = transform {
                    options = options.transformer(transform);
                }
                Arc::new(RealFifo::new(options))
            }
            QueueKind::DeltaFifo => {
                let mut options = DeltaFifoOptions::default()
                    .known_objects(known)
                    .emit_delta_type_replaced(true);
                if let Some(transform) = transform {
                    options = options.transformer(transform);
                }
                Arc::new(DeltaFifo::new(options))
            }
        }
    }

    /// Applies one popped item to the cache and tells the handlers (client-go's
    /// `HandleDeltas` / `processDeltasInBatch`), then records its resourceVersion as the
    /// cache's. A change the cache refuses is logged and skipped; the rest still apply.
    fn handle_item(
        &self,
        item: QueueItem<'_, K>,
        is_in_initial_list: bool,
    ) -> Result<(), CacheError> {
        let _block = self.inner.block_deltas.lock();
        let started = self.inner.metrics.as_ref().map(|_| Instant::now());
        // Borrowed from the item: recording it copies into the store version's buffer,
        // with no allocation per change.
        let applied_rv: Option<&str> = match &item {
            QueueItem::Deltas { key, deltas } => {
                self.handle_deltas(key, deltas, is_in_initial_list);
                deltas.last().and_then(|d| match d {
                    Delta::Deleted(DeletedObject::Tombstone(_)) | Delta::Sync(_) => None,
                    other => other
                        .object()
                        .and_then(|o| o.meta().resource_version.as_deref()),
                })
            }
            QueueItem::Relist(relist) => {
                self.apply_relist(relist, is_in_initial_list);
                Some(relist.resource_version.as_str())
            }
            QueueItem::Resync(resync) => {
                self.apply_resync(resync);
                None
            }
            QueueItem::Bookmark(rv) => Some(rv.as_str()),
        };
        // The queue's lock is held here (lock order, `cache/mod.rs`): its length is
        // recorded by the pop loop instead.
        if let (Some(metrics), Some(started)) = (&self.inner.metrics, started) {
            metrics.processed(started.elapsed().as_secs_f64(), self.inner.indexer.len());
            if let Some(rv) = applied_rv {
                metrics.store_resource_version(rv);
            }
        }
        // A RealFifo pops in the order the reflector queued (a relist is one item), so
        // what it applied is a watermark: everything up to it is in the cache. A DeltaFifo
        // is not: it pops per key in the order the keys were first queued, with every
        // delta a key gathered meanwhile, and takes a relist page by page, so what it has
        // applied can be newer than a change still waiting under another key. Its
        // watermark moves when it drains (`settle_store_version`).
        if self.inner.queue_kind == QueueKind::RealFifo
            && let Some(rv) = applied_rv.filter(|rv| !rv.is_empty())
        {
            self.inner
                .store_resource_version
                .lock()
                .replace_range(.., rv);
        }
        Ok(())
    }

    /// A drained [`DeltaFifo`] has applied everything the reflector had queued, up to
    /// the version the reflector had seen (it records a version after queueing what
    /// came with it; one read a moment early only errs low).
    fn settle_store_version(&self, queued: usize) {
        if queued > 0 || self.inner.queue_kind != QueueKind::DeltaFifo {
            return;
        }
        let seen = self
            .inner
            .reflector
            .get()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default();
        if !seen.is_empty() {
            *self.inner.store_resource_version.lock() = seen;
        }
    }

    /// Applies a relist in one swap of the cache's content, then tells the handlers: a
    /// delete (tombstone) for each cached object the list lacks, then an add or an update
    /// (a resync when the resourceVersion is unchanged) per listed object.
    fn apply_relist(&self, relist: &Relist<K>, is_in_initial_list: bool) {
        let old = self
            .inner
            .indexer
            .swap_items(&relist.objects, &mut |error| {
                tracing::error!(%error, "could not store an object in the cache");
            });
        let processor = self.inner.processor.lock();
        if processor.len() > 0 {
            let listed: ahash::AHashSet<&str> = if old.is_empty() {
                ahash::AHashSet::new()
            } else {
                relist.objects.iter().map(|(k, _)| k.as_ref()).collect()
            };
            // The vanished objects in key order (usually few): the same relist tells the
            // handlers the same thing in the same order.
            let mut vanished: Vec<_> = old
                .iter()
                .filter(|(key, _)| !listed.contains(key.as_ref()))
                .collect();
            vanished.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (key, obj) in vanished {
                let tombstone = DeletedFinalStateUnknown {
                    key: key.to_string(),
                    obj: Some(obj.clone()),
                };
                processor.distribute(
                    Notification::Delete(DeletedObject::Tombstone(tombstone)),
                    false,
                );
            }
            for (key, obj) in &relist.objects {
                match old.get(key) {
                    Some(old) => {
                        let is_sync = old.meta().resource_version == obj.meta().resource_version;
                        processor.distribute(
                            Notification::Update {
                                old: old.clone(),
                                new: obj.clone(),
                            },
                            is_sync,
                        );
                    }
                    None => processor.distribute(
                        Notification::Add {
                            obj: obj.clone(),
                            is_in_initial_list,
                        },
                        false,
                    ),
                }
            }
        }
        drop(processor);
        // The replaced content is freed here, outside every lock.
        drop(old);
    }

    /// Re-delivers a resync to the handlers due one; the cache already holds these objects.
    fn apply_resync(&self, resync: &Resync<K>) {
        let processor = self.inner.processor.lock();
        for (key, obj) in resync.objects() {
            let Some(current) = self.inner.indexer.get_by_key(key) else {
                continue;
            };
            processor.distribute(
                Notification::Update {
                    old: current,
                    new: obj.clone(),
                },
                true,
            );
        }
    }

    /// Applies one key's deltas to the cache and tells the handlers (client-go's
    /// `HandleDeltas`). A delta the cache refuses is logged and skipped; the rest still apply.
    fn handle_deltas(&self, key: &StoreKey, deltas: &[Delta<K>], is_in_initial_list: bool) {
        let processor = self.inner.processor.lock();
        // Without handlers only the cache changes: no notification is built, and the
        // replaced object is not read (it is cold: reading it costs a cache miss).
        let notify = processor.len() > 0;
        let indexer = &self.inner.indexer;
        for delta in deltas {
            match delta {
                Delta::Deleted(deleted) => {
                    if let Err(error) = indexer.delete_object(deleted) {
                        tracing::error!(%error, "could not remove an object from the cache");
                        continue;
                    }
                    if notify {
                        processor.distribute(Notification::Delete(deleted.clone()), false);
                    }
                }
                Delta::Added(obj)
                | Delta::Updated(obj)
                | Delta::Replaced(obj)
                | Delta::Sync(obj) => {
                    let old = match indexer.upsert_keyed(key, obj.clone()) {
                        Ok(old) => old,
                        Err(error) => {
                            tracing::error!(%error, "could not store an object in the cache");
                            continue;
                        }
                    };
                    if !notify {
                        continue;
                    }
                    match old {
                        Some(old) => {
                            // Unchanged resourceVersion: a resync, only for handlers due one.
                            let is_sync =
                                old.meta().resource_version == obj.meta().resource_version;
                            processor.distribute(
                                Notification::Update {
                                    old,
                                    new: obj.clone(),
                                },
                                is_sync,
                            );
                        }
                        None => processor.distribute(
                            Notification::Add {
                                obj: obj.clone(),
                                is_in_initial_list,
                            },
                            false,
                        ),
                    }
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use std::sync::mpsc as std_mpsc;

    use k8s_openapi::api::core::v1::ConfigMap;
    use tokio::sync::mpsc;

    use super::*;
    use crate::cache::{
        BackoffConfig, DeletedObject, ReflectorError, meta_namespace_key, namespace_indexers,
        testing::{
            cm, cm_with,
            fake_api::{FakeApi, gone, refused},
        },
    };

    /// Forwards every notification as a line: `add ns/a 2 initial`, `update ns/a 2->3`,
    /// `delete ns/a` / `delete ns/a tombstone`.
    struct Recorder(mpsc::UnboundedSender<String>);

    fn describe(obj: &ConfigMap) -> String {
        format!(
            "{} {}",
            meta_namespace_key(obj).unwrap(),
            obj.metadata.resource_version.as_deref().unwrap_or("-")
        )
    }

    impl ResourceEventHandler<ConfigMap> for Recorder {
        fn on_add(&self, obj: &Arc<ConfigMap>, initial: bool) {
            let _ = self.0.send(format!(
                "add {}{}",
                describe(obj),
                if initial { " initial" } else { "" }
            ));
        }
        fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
            let (o, n) = (
                old.metadata.resource_version.clone(),
                new.metadata.resource_version.clone(),
            );
            let key = meta_namespace_key(new.as_ref()).unwrap();
            let _ = self.0.send(format!(
                "update {key} {}->{}",
                o.unwrap_or_default(),
                n.unwrap_or_default()
            ));
        }
        fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
            let key = super::super::deletion_handling_meta_namespace_key(obj).unwrap();
            let _ = self.0.send(format!(
                "delete {key}{}",
                if obj.is_tombstone() { " tombstone" } else { "" }
            ));
        }
    }

    fn recorder() -> (Recorder, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Recorder(tx), rx)
    }

    async fn next(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
        tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("no notification")
            .unwrap()
    }

    fn fast_backoff() -> ReflectorConfig {
        ReflectorConfig {
            backoff: BackoffConfig {
                initial: Duration::from_millis(5),
                max: Duration::from_millis(20),
                ..BackoffConfig::default()
            },
            initial_list: super::super::InitialListStrategy::ListWatch,
            ..ReflectorConfig::default()
        }
    }

    struct Running {
        informer: SharedIndexInformer<ConfigMap>,
        stop: CancellationToken,
        task: tokio::task::JoinHandle<()>,
    }

    impl Running {
        async fn shutdown(self) {
            self.stop.cancel();
            self.task.await.unwrap();
            assert!(self.informer.is_stopped());
        }
    }

    fn start(informer: &SharedIndexInformer<ConfigMap>) -> Running {
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (informer, stop) = (informer.clone(), stop.clone());
            async move { informer.run(stop).await }
        });
        Running {
            informer: informer.clone(),
            stop,
            task,
        }
    }

    fn builder(api: &FakeApi<ConfigMap>) -> SharedIndexInformerBuilder<ConfigMap> {
        SharedIndexInformer::builder(api.clone())
            .indexers(namespace_indexers())
            .reflector(fast_backoff())
    }

    fn informer(api: &FakeApi<ConfigMap>) -> SharedIndexInformer<ConfigMap> {
        builder(api).build()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn initial_list_arrives_as_initial_adds_before_the_handler_reports_synced() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        api.upsert(cm("ns", "b"));
        let inf = informer(&api);
        let (h, mut rx) = recorder();
        let reg = inf.add_event_handler(h).unwrap();
        assert!(!reg.has_synced());
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf, &reg]).await);
        // Synced handler: both initial adds are already delivered.
        let mut got = vec![rx.try_recv().unwrap(), rx.try_recv().unwrap()];
        got.sort();
        assert_eq!(got, vec!["add ns/a 2 initial", "add ns/b 3 initial"]);
        assert_eq!(inf.indexer().len(), 2);
        assert_eq!(inf.last_sync_resource_version(), "3");
        assert_eq!(
            inf.lister()
                .namespaced("ns")
                .get("a")
                .unwrap()
                .metadata
                .name
                .as_deref(),
            Some("a")
        );
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watch_events_reach_handlers_in_server_order_across_keys() {
        // client-go 1.36 InOrderInformers (GA): the RealFIFO delivers events in the order
        // the watch delivered them, across keys.
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let inf = informer(&api);
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert_eq!(next(&mut rx).await, "add ns/a 2 initial");
        api.upsert(cm_with("ns", "a", "", &[("v", "2")]));
        api.upsert(cm("ns", "b"));
        api.upsert(cm_with("ns", "a", "", &[("v", "3")]));
        api.delete("ns/b");
        let got = [
            next(&mut rx).await,
            next(&mut rx).await,
            next(&mut rx).await,
            next(&mut rx).await,
        ];
        assert_eq!(
            got,
            [
                "update ns/a 2->3",
                "add ns/b 4",
                "update ns/a 3->5",
                "delete ns/b"
            ]
        );
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_store_resource_version_is_what_the_cache_has_applied() {
        // client-go 1.35 (GA): LastStoreSyncResourceVersion reports the version the cache
        // applied; bookmarks move it too. The reflector's own stays available.
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let inf = informer(&api);
        assert_eq!(inf.last_store_sync_resource_version(), "");
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        assert_eq!(inf.last_store_sync_resource_version(), "2");
        api.upsert(cm("ns", "b"));
        tokio::time::timeout(Duration::from_secs(10), async {
            while inf.indexer().get_by_key("ns/b").is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("b cached");
        assert_eq!(inf.last_store_sync_resource_version(), "3");
        assert_eq!(inf.last_sync_resource_version(), "3");
        // Applied in order: whoever reads the store version finds at least that version
        // in the cache.
        let queue = inf.inner.fifo.get().expect("running").clone();
        queue.bookmark("9");
        tokio::time::timeout(Duration::from_secs(10), async {
            while inf.last_store_sync_resource_version() != "9" {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("a bookmark moves the store version");
        assert_eq!(inf.last_sync_resource_version(), "3", "the reflector's own");
        run.shutdown().await;
    }

    #[test]
    fn a_reader_never_sees_a_mix_of_pre_and_post_relist_versions() {
        // client-go 1.36 AtomicFIFO: a relist is applied to the store as one unit.
        const N: usize = 100_000;
        let api = FakeApi::<ConfigMap>::new();
        let inf = informer(&api);
        let relist = |generation: &str| Relist {
            tombstones: Vec::new(),
            objects: (0..N)
                .map(|i| {
                    let obj = cm_with("ns", &format!("cm-{i}"), generation, &[]);
                    (
                        StoreKey::from(meta_namespace_key(&obj).unwrap()),
                        Arc::new(obj),
                    )
                })
                .collect(),
            resource_version: generation.to_owned(),
        };
        inf.handle_item(QueueItem::Relist(relist("1")), true)
            .unwrap();
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = std::thread::spawn({
            let (lister, done) = (inf.lister(), done.clone());
            move || {
                let mut reads = 0;
                while !done.load(std::sync::atomic::Ordering::SeqCst) || reads < 2 {
                    let all = lister.list(&crate::cache::Selector::default());
                    assert_eq!(all.len(), N, "a relist never shows a partial cache");
                    let versions: std::collections::BTreeSet<_> = all
                        .iter()
                        .map(|o| o.metadata.resource_version.clone())
                        .collect();
                    assert_eq!(versions.len(), 1, "mixed versions: {versions:?}");
                    reads += 1;
                }
                reads
            }
        });
        // Six swaps between the generations with the reader reading throughout.
        for round in 0..6 {
            let generation = if round % 2 == 0 { "2" } else { "1" };
            inf.handle_item(QueueItem::Relist(relist(generation)), false)
                .unwrap();
            assert_eq!(inf.last_store_sync_resource_version(), generation);
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(reader.join().expect("reader saw no mix") >= 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_first_410_relists_at_once_and_only_repeated_ones_back_off() {
        // issue 18 item 6: a 410 after progress is not a failure; client-go's backoff is for
        // repeated failures. The backoff here is long, so a waited relist would time out.
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let inf = builder(&api)
            .reflector(ReflectorConfig {
                backoff: BackoffConfig {
                    initial: Duration::from_secs(60),
                    max: Duration::from_secs(60),
                    ..BackoffConfig::default()
                },
                initial_list: super::super::InitialListStrategy::ListWatch,
                ..ReflectorConfig::default()
            })
            .build();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        let until = |want: usize| {
            let api = api.clone();
            async move {
                tokio::time::timeout(Duration::from_secs(5), async {
                    while api.lists() < want || api.open_watches() == 0 {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                })
                .await
                .is_ok()
            }
        };
        assert!(until(1).await);
        api.send_gone();
        assert!(
            until(2).await,
            "the first 410 relists without the 60 s backoff"
        );
        // Progress (an event) makes the next 410 a first one again.
        api.upsert(cm("ns", "b"));
        tokio::time::timeout(Duration::from_secs(5), async {
            while inf.indexer().get_by_key("ns/b").is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("b cached");
        api.send_gone();
        assert!(until(3).await, "a 410 after progress relists at once too");
        // A 410 straight after that relist, with no progress: now the backoff applies.
        api.send_gone();
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(api.lists(), 3, "a repeated 410 waits for the backoff");
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_keyed_delta_fifo_is_still_available() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let inf = builder(&api).queue(QueueKind::DeltaFifo).build();
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert_eq!(next(&mut rx).await, "add ns/a 2 initial");
        api.upsert(cm("ns", "b"));
        assert_eq!(next(&mut rx).await, "add ns/b 3");
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watch_events_reach_cache_and_handlers_in_order() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let inf = informer(&api);
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert_eq!(next(&mut rx).await, "add ns/a 2 initial");
        api.upsert(cm_with("ns", "a", "", &[("v", "2")]));
        api.upsert(cm("ns", "b"));
        api.delete("ns/a");
        // Order is guaranteed per key, not across keys: a's deltas may be popped together.
        let got = [
            next(&mut rx).await,
            next(&mut rx).await,
            next(&mut rx).await,
        ];
        let at = |e: &str| {
            got.iter()
                .position(|g| g == e)
                .unwrap_or_else(|| panic!("{e} missing: {got:?}"))
        };
        assert!(at("update ns/a 2->3") < at("delete ns/a"));
        at("add ns/b 4");
        assert!(inf.indexer().get_by_key("ns/a").is_none());
        assert_eq!(inf.last_sync_resource_version(), "5");
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_handler_added_after_start_is_replayed_the_cache() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        api.upsert(cm("ns", "b"));
        let inf = informer(&api);
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        let (h, mut rx) = recorder();
        let reg = inf.add_event_handler(h).unwrap();
        assert!(wait_for_cache_sync(&run.stop, &[&reg]).await);
        let mut got = vec![rx.try_recv().unwrap(), rx.try_recv().unwrap()];
        got.sort();
        assert_eq!(got, vec!["add ns/a 2 initial", "add ns/b 3 initial"]);
        api.upsert(cm("ns", "c"));
        assert_eq!(next(&mut rx).await, "add ns/c 4", "then live events, once");
        run.shutdown().await;
    }

    /// A `Dispatch::Task` handler runs on the informer's runtime — here a current-thread
    /// one, so on the test's own thread — not on a thread of its own; `pending()` counts
    /// what it has yet to handle; a late one is replayed the cache in key order.
    #[tokio::test(flavor = "current_thread")]
    async fn a_task_handler_runs_on_the_runtime_and_counts_what_it_has_yet_to_handle() {
        struct OnThread(mpsc::UnboundedSender<(String, std::thread::ThreadId)>);
        impl ResourceEventHandler<ConfigMap> for OnThread {
            fn on_add(&self, obj: &Arc<ConfigMap>, _: bool) {
                let _ = self.0.send((describe(obj), std::thread::current().id()));
            }
        }
        let api = FakeApi::new();
        for name in ["c", "a", "d", "b"] {
            api.upsert(cm("ns", name));
        }
        let inf = informer(&api);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let on_task = HandlerOptions::new().dispatch(super::super::Dispatch::Task);
        let reg = inf
            .add_event_handler_with_options(OnThread(tx.clone()), on_task)
            .unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf, &reg]).await);
        assert_eq!(reg.pending(), 0, "synced: every initial add handled");
        let here = std::thread::current().id();
        for _ in 0..4 {
            let (_, thread) = rx.try_recv().unwrap();
            assert_eq!(thread, here, "handled on the runtime's thread");
        }
        // Added late: the cache is replayed in key order, and counted until handled.
        let late = inf
            .add_event_handler_with_options(OnThread(tx), on_task)
            .unwrap();
        assert_eq!(late.pending(), 4, "four replayed adds wait for the runtime");
        assert!(wait_for_cache_sync(&run.stop, &[&late]).await);
        assert_eq!(late.pending(), 0);
        let replayed: Vec<String> = (0..4).map(|_| rx.try_recv().unwrap().0).collect();
        assert_eq!(replayed, ["ns/a 3", "ns/b 5", "ns/c 2", "ns/d 4"]);
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_removed_handler_gets_nothing_more() {
        let api = FakeApi::new();
        let inf = informer(&api);
        let (h, mut rx) = recorder();
        let (keep, mut kept) = recorder();
        let reg = inf.add_event_handler(h).unwrap();
        inf.add_event_handler(keep).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        inf.remove_event_handler(&reg).await.unwrap();
        assert!(!inf.is_registered(&reg));
        assert_eq!(
            inf.remove_event_handler(&reg).await,
            Err(InformerError::UnknownHandler)
        );
        api.upsert(cm("ns", "a"));
        assert_eq!(next(&mut kept).await, "add ns/a 2");
        run.shutdown().await;
        assert!(rx.try_recv().is_err());
    }

    /// client-go `ShutDownEventHandler`: once removal returns, the handler is not running
    /// and never runs again; removal waits for the callback in flight.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn removing_a_handler_waits_for_its_callback_in_flight() {
        struct Slow {
            entered: std_mpsc::SyncSender<()>,
            release: Mutex<std_mpsc::Receiver<()>>,
            calls: Arc<std::sync::atomic::AtomicUsize>,
        }
        impl ResourceEventHandler<ConfigMap> for Slow {
            fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
                let _ = self.entered.send(());
                let _ = self.release.lock().recv();
                self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let api = FakeApi::new();
        let inf = informer(&api);
        let (entered_tx, entered_rx) = std_mpsc::sync_channel(8);
        let (release_tx, release_rx) = std_mpsc::channel();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let reg = inf
            .add_event_handler(Slow {
                entered: entered_tx,
                release: Mutex::new(release_rx),
                calls: calls.clone(),
            })
            .unwrap();
        let run = start(&inf);
        api.upsert(cm("ns", "a"));
        api.upsert(cm("ns", "b"));
        tokio::task::spawn_blocking(move || entered_rx.recv())
            .await
            .unwrap()
            .unwrap();
        let removing = tokio::spawn({
            let inf = inf.clone();
            async move { inf.remove_event_handler(&reg).await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!removing.is_finished(), "removal waits for the callback");
        release_tx.send(()).unwrap();
        // Were the buffered add for ns/b delivered, it would wait for this; the handler's
        // thread may also have exited already, dropping the receiver.
        let _ = release_tx.send(());
        removing.await.unwrap().unwrap();
        let after = calls.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(after, 1, "the buffered add for ns/b was dropped");
        api.upsert(cm("ns", "c"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), after);
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_blocked_handler_does_not_hold_up_other_handlers() {
        struct Blocked(Mutex<std_mpsc::Receiver<()>>);
        impl ResourceEventHandler<ConfigMap> for Blocked {
            fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
                let _ = self.0.lock().recv();
            }
        }
        let api = FakeApi::new();
        let inf = informer(&api);
        let (release, wait) = std_mpsc::channel();
        inf.add_event_handler(Blocked(Mutex::new(wait))).unwrap();
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        for name in ["a", "b", "c"] {
            api.upsert(cm("ns", name));
        }
        for expected in ["add ns/a 2", "add ns/b 3", "add ns/c 4"] {
            assert_eq!(next(&mut rx).await, expected);
        }
        assert_eq!(inf.indexer().len(), 3, "the cache moved on too");
        for _ in 0..3 {
            release.send(()).unwrap();
        }
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_delete_missed_while_disconnected_arrives_as_a_tombstone_after_relist() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        api.upsert(cm("ns", "b"));
        let inf = informer(&api);
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        next(&mut rx).await;
        next(&mut rx).await;
        api.delete_silently("ns/b");
        api.send_gone();
        // The relist delivers the tombstone for what vanished, then re-delivers what is
        // still there (same version: a resync-style update) — client-go's RealFIFO order
        // (`reconcileReplacement`: deletions before the replaced objects).
        assert_eq!(next(&mut rx).await, "delete ns/b tombstone");
        assert_eq!(next(&mut rx).await, "update ns/a 2->2");
        assert_eq!(api.lists(), 2, "the 410 forced a relist");
        assert_eq!(inf.indexer().list_keys(), vec!["ns/a"]);
        run.shutdown().await;
    }

    /// A relist after a 410 (issue 42, "the relist peak"): the cache keeps its own `Arc`
    /// for every listed object whose uid and resourceVersion are unchanged, takes the
    /// listed one for a changed object or a re-created one (same name, new uid), and the
    /// handlers hear of each as before.
    async fn a_relist_keeps_the_cached_object_of_what_did_not_change(
        initial_list: super::super::InitialListStrategy,
    ) {
        let api = FakeApi::new();
        let with_uid = |name: &str, uid: &str| {
            let mut o = cm("ns", name);
            o.metadata.uid = Some(uid.to_owned());
            o
        };
        for name in ["a", "b", "c"] {
            api.upsert(with_uid(name, &format!("uid-{name}")));
        }
        let inf = builder(&api)
            .reflector(ReflectorConfig {
                initial_list,
                page_size: 2,
                ..fast_backoff()
            })
            .build();
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        for _ in 0..3 {
            next(&mut rx).await;
        }
        let before = |key: &str| inf.indexer().get_by_key(key).unwrap();
        let (a, b, c) = (before("ns/a"), before("ns/b"), before("ns/c"));
        // Missed while disconnected: b changed, c deleted and re-created.
        let mut b2 = with_uid("b", "uid-b");
        b2.data = Some([("k".to_owned(), "v".to_owned())].into());
        api.upsert_silently(b2);
        api.delete_silently("ns/c");
        api.upsert_silently(with_uid("c", "uid-c2"));
        api.send_gone();
        let mut got = vec![
            next(&mut rx).await,
            next(&mut rx).await,
            next(&mut rx).await,
        ];
        got.sort();
        assert_eq!(
            got,
            ["update ns/a 2->2", "update ns/b 3->5", "update ns/c 4->7"]
        );
        let after = |key: &str| inf.indexer().get_by_key(key).unwrap();
        assert!(Arc::ptr_eq(&after("ns/a"), &a), "unchanged: the cached Arc");
        assert!(!Arc::ptr_eq(&after("ns/b"), &b));
        assert_eq!(after("ns/b").data.as_ref().unwrap()["k"], "v");
        assert!(!Arc::ptr_eq(&after("ns/c"), &c));
        assert_eq!(after("ns/c").metadata.uid.as_deref(), Some("uid-c2"));
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_paged_relist_keeps_the_cached_object_of_what_did_not_change() {
        a_relist_keeps_the_cached_object_of_what_did_not_change(
            super::super::InitialListStrategy::ListWatch,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_streaming_relist_keeps_the_cached_object_of_what_did_not_change() {
        a_relist_keeps_the_cached_object_of_what_did_not_change(
            super::super::InitialListStrategy::StreamingList,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cleanly_closed_watch_resumes_from_the_last_version_without_relisting() {
        let api = FakeApi::new();
        let inf = informer(&api);
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        api.upsert(cm("ns", "a"));
        assert_eq!(next(&mut rx).await, "add ns/a 2");
        api.drop_watches();
        while api.watches() < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(api.lists(), 1);
        let (params, rv) = api.last_watch().unwrap();
        assert_eq!(rv, "2");
        assert!(params.bookmarks);
        assert!(!params.send_initial_events);
        let timeout = params.timeout.unwrap();
        assert!(
            (300..600).contains(&timeout),
            "timeout {timeout} outside [5, 10) minutes"
        );
        api.upsert(cm("ns", "b"));
        assert_eq!(
            next(&mut rx).await,
            "add ns/b 3",
            "the resumed watch delivers"
        );
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connection_refused_retries_the_watch_not_the_list() {
        let api = FakeApi::new();
        api.fail_next_watch(refused());
        api.fail_next_watch(refused());
        let errors = Arc::new(Mutex::new(Vec::new()));
        let inf = builder(&api)
            .watch_error_handler(Arc::new({
                let errors = errors.clone();
                move |e: &ReflectorError| errors.lock().push(e.to_string())
            }))
            .build();
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        api.upsert(cm("ns", "a"));
        assert_eq!(next(&mut rx).await, "add ns/a 2");
        assert_eq!(api.lists(), 1);
        assert_eq!(api.watches(), 3);
        assert_eq!(errors.lock().len(), 2, "each failure was reported");
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_list_is_retried_and_the_informer_still_syncs() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        api.fail_next_list(gone());
        let inf = informer(&api);
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        assert_eq!(api.lists(), 2);
        assert_eq!(inf.indexer().list_keys(), vec!["ns/a"]);
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_undecodable_event_is_skipped_and_nothing_cached_is_lost() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let inf = informer(&api);
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        next(&mut rx).await;
        api.send_garbage();
        api.upsert(cm("ns", "b"));
        assert_eq!(next(&mut rx).await, "add ns/b 3");
        assert_eq!(inf.indexer().len(), 2);
        assert_eq!(api.lists(), 1, "no relist for one bad event");
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn streaming_list_syncs_from_the_initial_events_and_does_not_resend_them_on_resume() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let inf = builder(&api)
            .reflector(ReflectorConfig {
                initial_list: super::super::InitialListStrategy::StreamingList,
                ..fast_backoff()
            })
            .build();
        let (h, mut rx) = recorder();
        inf.add_event_handler(h).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        assert_eq!(next(&mut rx).await, "add ns/a 2 initial");
        assert_eq!(api.lists(), 0, "no LIST was needed");
        api.upsert(cm("ns", "b"));
        assert_eq!(next(&mut rx).await, "add ns/b 3");
        api.drop_watches();
        while api.watches() < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(!api.last_watch().unwrap().0.send_initial_events);
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn streaming_list_refused_by_the_server_falls_back_to_list_and_watch() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        api.fail_next_watch(crate::client::Error::Api(Box::new(kube_core::Status {
            code: 400,
            reason: "BadRequest".into(),
            ..kube_core::Status::default()
        })));
        let inf = builder(&api)
            .reflector(ReflectorConfig {
                initial_list: super::super::InitialListStrategy::StreamingList,
                ..fast_backoff()
            })
            .build();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        assert_eq!(api.lists(), 1);
        assert_eq!(inf.indexer().len(), 1);
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn transform_runs_before_objects_are_cached() {
        let api = FakeApi::new();
        api.upsert(cm_with("ns", "a", "", &[("big", "annotation")]));
        let inf = builder(&api)
            .transform(Arc::new(|o: &mut ConfigMap| o.metadata.labels = None))
            .build();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        assert!(
            inf.indexer()
                .get_by_key("ns/a")
                .unwrap()
                .metadata
                .labels
                .is_none()
        );
        run.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn indexers_can_be_added_after_start_but_not_after_stop() {
        let api = FakeApi::new();
        api.upsert(cm_with("ns", "a", "", &[("app", "web")]));
        let inf = informer(&api);
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        let by_app: super::super::IndexFunc<ConfigMap> = Arc::new(|o: &ConfigMap| {
            Ok(o.metadata
                .labels
                .iter()
                .flatten()
                .filter(|(k, _)| *k == "app")
                .map(|(_, v)| v.clone())
                .collect())
        });
        inf.add_indexers(Indexers::from([("app".to_owned(), by_app.clone())]))
            .unwrap();
        assert_eq!(
            inf.indexer().index_keys("app", "web").unwrap(),
            vec!["ns/a"]
        );
        run.shutdown().await;
        assert_eq!(
            inf.add_indexers(Indexers::from([("x".to_owned(), by_app)])),
            Err(InformerError::Stopped)
        );
        let (h, _rx) = recorder();
        assert!(matches!(
            inf.add_event_handler(h),
            Err(InformerError::Stopped)
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn resync_redelivers_unchanged_objects_only_to_handlers_that_are_due() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        // Informer default 2 s; one handler asks for 1 s before start, lowering the check
        // period to 1 s; the other keeps 2 s.
        let inf =
            SharedIndexInformer::new(api.clone(), Duration::from_secs(2), namespace_indexers());
        let (fast, mut fast_rx) = recorder();
        let (slow, mut slow_rx) = recorder();
        inf.add_event_handler_with_resync(fast, Duration::from_secs(1))
            .unwrap();
        inf.add_event_handler(slow).unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        tokio::time::sleep(Duration::from_millis(4500)).await;
        run.shutdown().await;
        let drain = |rx: &mut mpsc::UnboundedReceiver<String>| {
            let mut v = Vec::new();
            while let Ok(e) = rx.try_recv() {
                v.push(e);
            }
            v
        };
        let (fast, slow) = (drain(&mut fast_rx), drain(&mut slow_rx));
        assert_eq!(fast[0], "add ns/a 2 initial");
        assert_eq!(slow[0], "add ns/a 2 initial");
        let resyncs = |v: &[String]| v.iter().filter(|e| *e == "update ns/a 2->2").count();
        let (f, s) = (resyncs(&fast), resyncs(&slow));
        assert_eq!(
            f + 1,
            fast.len(),
            "only identical-object updates after the add: {fast:?}"
        );
        assert!(f >= 2 && s >= 1 && f > s, "fast got {f} resyncs, slow {s}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_informer_created_without_resync_never_resyncs() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let inf = informer(&api);
        let (h, mut rx) = recorder();
        inf.add_event_handler_with_resync(h, Duration::from_secs(1))
            .unwrap();
        let run = start(&inf);
        assert!(wait_for_cache_sync(&run.stop, &[&inf]).await);
        tokio::time::sleep(Duration::from_millis(2200)).await;
        run.shutdown().await;
        assert_eq!(rx.try_recv().unwrap(), "add ns/a 2 initial");
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn wait_for_cache_sync_gives_up_when_stopped() {
        let api: FakeApi<ConfigMap> = FakeApi::new();
        let inf = informer(&api);
        let stop = CancellationToken::new();
        stop.cancel();
        assert!(
            !wait_for_cache_sync(&stop, &[&inf]).await,
            "never started, stopped"
        );
        let _ = api.keys();
        let _ = api.open_watches();
    }
}
