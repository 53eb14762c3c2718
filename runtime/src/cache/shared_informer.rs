//! [`SharedIndexInformer`]: a reflector, a [`DeltaFifo`] and an [`Indexer`] wired together,
//! fanning changes out to any number of [`ResourceEventHandler`]s.
//!
//! ```text
//! ListerWatcher ─► Reflector ─► DeltaFifo ─► handle_deltas ─► Indexer
//!                                                └──────────► processor ─► handlers
//! ```
//!
//! The informer is cheap to clone. Handlers can be added before or after `run`; one added
//! later is first replayed the whole cache as adds (with `is_in_initial_list = true`)
//! while delta processing waits, so it misses nothing and sees nothing twice.

use std::{
    fmt,
    sync::{Arc, OnceLock},
    time::Duration,
};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::{
    CacheError, Delta, DeltaFifo, DeltaFifoOptions, Deltas, Indexer, Indexers, Lister,
    ListerWatcher, PopError, ProcessError, Reflector, ReflectorConfig, ResourceEventHandler,
    TransformFunc, WatchErrorHandler,
    index::StoreKey,
    processor::{
        Listener, MINIMUM_RESYNC_PERIOD, Notification, Processor, determine_resync_period,
    },
};
use crate::Object;

/// How many keys the delta loop processes per hold of the DeltaFifo's lock.
const POP_BATCH: usize = 64;

/// An informer operation that is not possible in the informer's current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InformerError {
    /// The informer has stopped; handlers and indexers can no longer be added.
    #[error("informer has already stopped")]
    Stopped,
    /// The informer has started; this setting must be made before `run`.
    #[error("informer has already started")]
    AlreadyStarted,
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

struct Inner<K: Object> {
    indexer: Indexer<K>,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    processor: Mutex<Processor<K>>,
    /// Held while deltas are applied, and while a late handler is replayed the cache.
    block_deltas: Mutex<()>,
    state: Mutex<RunState>,
    transform: Mutex<Option<TransformFunc<K>>>,
    error_handler: Mutex<Option<WatchErrorHandler>>,
    reflector_config: Mutex<ReflectorConfig>,
    fifo: OnceLock<DeltaFifo<K>>,
    reflector: OnceLock<Arc<Reflector<K>>>,
}

/// A shared, indexed informer for `K`; see the module docs.
pub struct SharedIndexInformer<K: Object> {
    inner: Arc<Inner<K>>,
}

impl<K: Object> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<K: Object> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("SharedIndexInformer")
            .field("kind", &K::kind(&()))
            .field("started", &state.started)
            .field("stopped", &state.stopped)
            .field("handlers", &self.inner.processor.lock().len())
            .finish()
    }
}

impl<K: Object> SharedIndexInformer<K> {
    /// An informer over `lister_watcher`, with `default_resync` for handlers added without
    /// their own period (zero: no resync) and `indexers` for its cache.
    pub fn new(
        lister_watcher: impl ListerWatcher<K>,
        default_resync: Duration,
        indexers: Indexers<K>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                indexer: Indexer::new(indexers),
                lister_watcher: Arc::new(lister_watcher),
                processor: Mutex::new(Processor::new()),
                block_deltas: Mutex::new(()),
                state: Mutex::new(RunState {
                    started: false,
                    stopped: false,
                    resync_check_period: default_resync,
                    default_handler_resync: default_resync,
                }),
                transform: Mutex::new(None),
                error_handler: Mutex::new(None),
                reflector_config: Mutex::new(ReflectorConfig::default()),
                fifo: OnceLock::new(),
                reflector: OnceLock::new(),
            }),
        }
    }

    /// Replaces the reflector settings (page size, streaming list, backoff, watch
    /// timeout); before `run` only. The resync period always comes from the handlers.
    pub fn set_reflector_config(&self, config: ReflectorConfig) -> Result<(), InformerError> {
        self.before_start()?;
        *self.inner.reflector_config.lock() = config;
        Ok(())
    }

    /// Transforms every object before it is cached (for example to drop `managedFields`);
    /// before `run` only.
    pub fn set_transform(&self, transform: TransformFunc<K>) -> Result<(), InformerError> {
        self.before_start()?;
        *self.inner.transform.lock() = Some(transform);
        Ok(())
    }

    /// Called with every list/watch error the informer recovers from; before `run` only.
    pub fn set_watch_error_handler(&self, handler: WatchErrorHandler) -> Result<(), InformerError> {
        self.before_start()?;
        *self.inner.error_handler.lock() = Some(handler);
        Ok(())
    }

    fn before_start(&self) -> Result<(), InformerError> {
        if self.inner.state.lock().started {
            Err(InformerError::AlreadyStarted)
        } else {
            Ok(())
        }
    }

    /// Adds a handler with the informer's default resync period.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> Result<HandlerRegistration, InformerError> {
        let resync = self.inner.state.lock().default_handler_resync;
        self.add_event_handler_with_resync(handler, resync)
    }

    /// Adds a handler that also wants a resync every `resync` (client-go's rules: at least
    /// 1 s; before start a period shorter than the informer's check period lowers it, after
    /// start it is raised to it; an informer created without resync never resyncs).
    pub fn add_event_handler_with_resync(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync: Duration,
    ) -> Result<HandlerRegistration, InformerError> {
        let mut state = self.inner.state.lock();
        if state.stopped {
            return Err(InformerError::Stopped);
        }
        let mut resync = resync;
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
        let listener = Listener::new(Arc::new(handler), resync, effective);
        let registration = self.registration(&listener);
        if !state.started {
            self.inner.processor.lock().add_listener(listener);
            return Ok(registration);
        }
        drop(state);
        // Join a running informer: stop delta processing, register, replay the cache.
        let _block = self.inner.block_deltas.lock();
        self.inner.processor.lock().add_listener(listener.clone());
        for obj in self.inner.indexer.list() {
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
            synced: Arc::new(move || {
                let upstream = informer
                    .upgrade()
                    .is_some_and(|inner| inner.fifo.get().is_some_and(DeltaFifo::has_synced));
                upstream
                    && weak_listener
                        .upgrade()
                        .is_some_and(|l| l.initial_delivered())
            }),
        }
    }

    /// Removes a handler; its buffered notifications are dropped.
    pub fn remove_event_handler(
        &self,
        registration: &HandlerRegistration,
    ) -> Result<(), InformerError> {
        if self.inner.processor.lock().remove_listener(registration.id) {
            Ok(())
        } else {
            Err(InformerError::UnknownHandler)
        }
    }

    /// Whether `registration` is still registered here.
    pub fn is_registered(&self, registration: &HandlerRegistration) -> bool {
        self.inner.processor.lock().is_registered(registration.id)
    }

    /// The informer's cache.
    pub fn indexer(&self) -> Indexer<K> {
        self.inner.indexer.clone()
    }

    /// A lister over the informer's cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.inner.indexer.clone())
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
        self.inner.fifo.get().is_some_and(DeltaFifo::has_synced)
    }

    /// The resourceVersion of the last list, event or bookmark seen.
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
        let mut options = DeltaFifoOptions::default()
            .known_objects(self.inner.indexer.clone())
            .emit_delta_type_replaced(true);
        if let Some(transform) = self.inner.transform.lock().take() {
            options = options.transformer(transform);
        }
        let fifo = self
            .inner
            .fifo
            .get_or_init(|| DeltaFifo::new(options))
            .clone();
        let mut config = self.inner.reflector_config.lock().clone();
        config.resync_period = check_period;
        let should_resync = {
            let inner = Arc::downgrade(&self.inner);
            Arc::new(move || {
                inner
                    .upgrade()
                    .is_some_and(|i| i.processor.lock().should_resync())
            })
        };
        let mut reflector = Reflector::new(
            self.inner.lister_watcher.clone(),
            Arc::new(fifo.clone()),
            config,
        )
        .with_should_resync(should_resync);
        if let Some(handler) = self.inner.error_handler.lock().clone() {
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
                loop {
                    let popped = tokio::select! {
                        biased;
                        () = &mut cancelled => break,
                        popped = fifo.pop_many_keyed(POP_BATCH, |key, deltas, initial| informer.handle_deltas(key, deltas, initial)) => popped,
                    };
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

    /// Applies one key's deltas to the cache and tells the handlers (client-go's
    /// `HandleDeltas`). A delta the cache refuses is logged and skipped; the rest still apply.
    fn handle_deltas(
        &self,
        key: &StoreKey,
        deltas: &Deltas<K>,
        is_in_initial_list: bool,
    ) -> Result<(), ProcessError<CacheError>> {
        let _block = self.inner.block_deltas.lock();
        let processor = self.inner.processor.lock();
        let indexer = &self.inner.indexer;
        for delta in deltas {
            match delta {
                Delta::Deleted(deleted) => {
                    if let Err(error) = indexer.delete_object(deleted) {
                        tracing::error!(%error, "could not remove an object from the cache");
                        continue;
                    }
                    processor.distribute(Notification::Delete(deleted.clone()), false);
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
        Ok(())
    }
}

impl<K: Object> CacheSynced for SharedIndexInformer<K> {
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

    fn informer(api: &FakeApi<ConfigMap>) -> SharedIndexInformer<ConfigMap> {
        let informer = SharedIndexInformer::new(api.clone(), Duration::ZERO, namespace_indexers());
        informer.set_reflector_config(fast_backoff()).unwrap();
        informer
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
        inf.remove_event_handler(&reg).unwrap();
        assert!(!inf.is_registered(&reg));
        assert_eq!(
            inf.remove_event_handler(&reg),
            Err(InformerError::UnknownHandler)
        );
        api.upsert(cm("ns", "a"));
        assert_eq!(next(&mut kept).await, "add ns/a 2");
        run.shutdown().await;
        assert!(rx.try_recv().is_err());
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
        // The relist re-delivers what is still there (same version: a resync-style update),
        // then the tombstone for what vanished.
        assert_eq!(next(&mut rx).await, "update ns/a 2->2");
        assert_eq!(next(&mut rx).await, "delete ns/b tombstone");
        assert_eq!(api.lists(), 2, "the 410 forced a relist");
        assert_eq!(inf.indexer().list_keys(), vec!["ns/a"]);
        run.shutdown().await;
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
        let inf = informer(&api);
        let errors = Arc::new(Mutex::new(Vec::new()));
        inf.set_watch_error_handler(Arc::new({
            let errors = errors.clone();
            move |e: &ReflectorError| errors.lock().push(e.to_string())
        }))
        .unwrap();
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
        let inf = informer(&api);
        inf.set_reflector_config(ReflectorConfig {
            initial_list: super::super::InitialListStrategy::StreamingList,
            ..fast_backoff()
        })
        .unwrap();
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
        let inf = informer(&api);
        inf.set_reflector_config(ReflectorConfig {
            initial_list: super::super::InitialListStrategy::StreamingList,
            ..fast_backoff()
        })
        .unwrap();
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
        let inf = informer(&api);
        inf.set_transform(Arc::new(|o: &mut ConfigMap| o.metadata.labels = None))
            .unwrap();
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
        assert_eq!(
            inf.set_transform(Arc::new(|_: &mut ConfigMap| {})),
            Err(InformerError::AlreadyStarted)
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
