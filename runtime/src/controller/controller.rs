//! [`Controller`]: the reconcile loop (controller-runtime's `pkg/internal/controller`).
//!
//! # How a request is processed
//!
//! 1. `run` registers one event handler per source (the primary type, each owned and each
//!    watched type) with the factory's shared informers, starts the factory, and waits
//!    until every informer and every handler has synced: no reconcile runs before the
//!    controller has seen every cache it reads (kube-rs #1914).
//! 2. It starts `max_concurrent_reconciles` workers. Each takes a [`Request`] from the
//!    rate-limited queue, which never hands one request to two workers at once and hands
//!    out fresh events before the first list's and resyncs' (priorities).
//! 3. The worker reads the object from the primary informer's cache. A request whose
//!    object is gone is dropped (a deleted object is reconciled only while a finalizer
//!    keeps it, see [`finalizer`](super::finalizer)).
//! 4. It runs the reconcile function, catching panics and bounding it by the reconcile
//!    timeout if one is set:
//!    * `Ok(action)`: the request's failure backoff is forgotten; `requeue_after` adds it
//!      back after the delay (at the action's priority).
//!    * an error wrapping a [`TerminalError`](super::TerminalError): forgotten, logged,
//!      counted, recorded as a Warning event, not requeued;
//!    * any other error, a panic or a timeout: requeued with the request's exponential
//!      backoff (5 ms, 10 ms, 20 ms … by default); a fresh event for the request meanwhile
//!      runs it at once and keeps the backoff count (kubernetes issue 132805).
//! 5. `done` releases the request; an event that arrived while it ran queues it again.
//!
//! # Shutdown
//!
//! When `stop` fires, workers take no new requests; the queue is shut down (requests still
//! queued or waiting on a delay are dropped and counted); reconciles in flight get the
//! graceful-shutdown timeout to finish, then are aborted; the event handlers are removed.
//! [`ShutdownReport`] says what happened.

use std::{
    any::Any,
    panic::AssertUnwindSafe,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use futures::FutureExt;
use tokio::{task::JoinSet, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{
    Action, ConsistencyStore, ControllerError, Request, is_terminal,
    shard::{Handover, Verdict},
    source::{Registered, Source},
};
use crate::{
    Object,
    cache::{CacheSynced, ReadOnlyIndexer, SharedIndexInformer, wait_for_cache_sync},
    informers::SharedInformerFactory,
    metrics::{ControllerMetrics, ReconcileResult},
    record::{EventRecorder, EventType},
    workqueue::RateLimitingQueue,
};

/// How a controller runs; set through [`ControllerBuilder`].
#[derive(Debug, Clone)]
pub(super) struct Settings {
    pub(super) max_concurrent_reconciles: usize,
    pub(super) reconcile_timeout: Option<Duration>,
    pub(super) graceful_shutdown_timeout: Duration,
    pub(super) consistency_wait: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_concurrent_reconciles: 1,
            reconcile_timeout: None,
            graceful_shutdown_timeout: Duration::from_secs(30),
            consistency_wait: super::DEFAULT_CONSISTENCY_WAIT,
        }
    }
}

/// What a controller's shutdown did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShutdownReport {
    /// Reconciles running when `stop` fired that finished within the grace period.
    pub finished_in_flight: usize,
    /// Reconciles still running when the grace period ended; they were aborted.
    pub abandoned_in_flight: usize,
    /// Requests queued, or waiting on a delay or backoff, that were dropped.
    pub dropped_requests: usize,
}

/// A controller for the primary type `K`; built by [`Controller::builder`], run by
/// [`Controller::run`].
///
/// ```no_run
/// # async fn example(client: kubegen::client::Client) -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
/// use kubegen::controller::{Action, Controller, GenerationChanged};
/// use kubegen::informers::SharedInformerFactory;
/// use tokio_util::sync::CancellationToken;
///
/// let factory = SharedInformerFactory::new(client, std::time::Duration::ZERO);
/// let controller = Controller::<Deployment>::builder(&factory)
///     .with_event_filter(GenerationChanged)
///     .owns::<Pod>()
///     .max_concurrent_reconciles(4)
///     .build();
/// let reconcile = |deployment: Arc<Deployment>, _ctx: Arc<()>| async move {
///     tracing::info!(name = ?deployment.metadata.name, "reconciling");
///     Ok::<_, std::io::Error>(Action::done())
/// };
/// controller.run(reconcile, Arc::new(()), CancellationToken::new()).await?;
/// # Ok(()) }
/// ```
pub struct Controller<K: Object> {
    pub(super) name: String,
    pub(super) factory: SharedInformerFactory,
    pub(super) informer: SharedIndexInformer<K>,
    pub(super) queue: RateLimitingQueue<Request>,
    pub(super) sources: Vec<Source>,
    pub(super) settings: Settings,
    pub(super) recorder: Option<EventRecorder>,
    pub(super) metrics: Option<ControllerMetrics>,
    pub(super) consistency: Option<Arc<ConsistencyStore<K>>>,
    pub(super) handover: Option<Handover>,
}

impl<K: Object> std::fmt::Debug for Controller<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sources: Vec<&str> = self.sources.iter().map(|s| s.type_name).collect();
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("sources", &sources)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// What every worker shares.
struct Worker<K: Object, C, F> {
    name: String,
    indexer: ReadOnlyIndexer<K>,
    queue: RateLimitingQueue<Request>,
    reconcile: F,
    ctx: Arc<C>,
    timeout: Option<Duration>,
    recorder: Option<EventRecorder>,
    metrics: Option<ControllerMetrics>,
    consistency: Option<Arc<ConsistencyStore<K>>>,
    consistency_wait: Duration,
    in_flight: AtomicUsize,
    handover: Option<Handover>,
}

/// How one reconcile ended.
enum Outcome<E> {
    Done(Action),
    Failed(E),
    Panicked(Box<dyn Any + Send>),
    TimedOut(Duration),
}

impl<K: Object> Controller<K> {
    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The controller's queue: a request added here is reconciled like one from an event.
    pub fn queue(&self) -> &RateLimitingQueue<Request> {
        &self.queue
    }

    /// The primary type's shared informer.
    pub fn informer(&self) -> &SharedIndexInformer<K> {
        &self.informer
    }

    /// Runs the controller until `stop` fires (see the module docs): `reconcile` is called
    /// with the latest cached object and `ctx`. Returns what the shutdown did, or an error
    /// if it was stopped before its caches synced.
    pub async fn run<C, F, Fut, E>(
        self,
        reconcile: F,
        ctx: Arc<C>,
        stop: CancellationToken,
    ) -> Result<ShutdownReport, ControllerError>
    where
        C: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let Self {
            name,
            factory,
            informer,
            queue,
            sources,
            settings,
            recorder,
            metrics,
            consistency,
            handover,
        } = self;
        let mut registered = Vec::with_capacity(sources.len());
        for source in sources {
            match (source.register)(queue.clone()) {
                Ok(r) => registered.push(r),
                Err(source) => {
                    remove_all(registered).await;
                    queue.shut_down();
                    return Err(ControllerError::Informer {
                        controller: name,
                        source,
                    });
                }
            }
        }
        factory.start();
        let caches: Vec<&dyn CacheSynced> =
            registered.iter().map(|r| r as &dyn CacheSynced).collect();
        if !wait_for_cache_sync(&stop, &caches).await {
            remove_all(registered).await;
            queue.shut_down();
            return Err(ControllerError::CacheSyncStopped(name));
        }
        tracing::info!(controller = %name, workers = settings.max_concurrent_reconciles, "caches synced; starting workers");
        if let Some(metrics) = &metrics {
            metrics.max_concurrent_reconciles(settings.max_concurrent_reconciles);
        }
        let worker = Arc::new(Worker {
            name: name.clone(),
            indexer: informer.indexer(),
            queue: queue.clone(),
            reconcile,
            ctx,
            timeout: settings.reconcile_timeout,
            recorder,
            metrics,
            consistency,
            consistency_wait: settings.consistency_wait,
            in_flight: AtomicUsize::new(0),
            handover,
        });
        let mut workers = JoinSet::new();
        for _ in 0..settings.max_concurrent_reconciles {
            workers.spawn(worker.clone().work(stop.clone()));
        }
        stop.cancelled().await;

        let dropped_requests = queue.len() + queue.waiting_len();
        let in_flight = worker.in_flight.load(Ordering::SeqCst);
        queue.shut_down();
        let drained = tokio::time::timeout(settings.graceful_shutdown_timeout, async {
            while workers.join_next().await.is_some() {}
        })
        .await;
        let abandoned_in_flight = match drained {
            Ok(()) => 0,
            Err(_) => {
                let abandoned = worker.in_flight.load(Ordering::SeqCst);
                workers.abort_all();
                while workers.join_next().await.is_some() {}
                abandoned
            }
        };
        remove_all(registered).await;
        let report = ShutdownReport {
            finished_in_flight: in_flight.saturating_sub(abandoned_in_flight),
            abandoned_in_flight,
            dropped_requests,
        };
        tracing::info!(controller = %name, ?report, "controller stopped");
        Ok(report)
    }
}

async fn remove_all(registered: Vec<Registered>) {
    for r in registered {
        (r.remove)().await;
    }
}

impl<K, C, F, Fut, E> Worker<K, C, F>
where
    K: Object,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    /// Takes requests until `stop` fires or the queue is shut down.
    async fn work(self: Arc<Self>, stop: CancellationToken) {
        loop {
            let request = tokio::select! {
                biased;
                () = stop.cancelled() => return,
                request = self.queue.get() => match request {
                    Some(request) => request,
                    None => return,
                },
            };
            self.process(&request).await;
            self.queue.done(&request);
        }
    }

    async fn process(&self, request: &Request) {
        let key = request.cache_key();
        if !self.caught_up(request, &key).await {
            return;
        }
        let Some(obj) = self.indexer.get_by_key(&key) else {
            tracing::debug!(controller = %self.name, %request, "not in the cache (deleted): nothing to reconcile");
            self.queue.forget(request);
            return;
        };
        if let Some(handover) = &self.handover
            && !self.owned_by_this_member(handover, request, &obj).await
        {
            return;
        }
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        if let Some(metrics) = &self.metrics {
            metrics.started();
        }
        let started = Instant::now();
        let outcome = self.reconcile_once(obj.clone()).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let seconds = started.elapsed().as_secs_f64();
        let record = |result, terminal, panicked| {
            if let Some(metrics) = &self.metrics {
                metrics.finished(seconds, result, terminal, panicked);
            }
        };
        match outcome {
            Outcome::Done(action) => {
                self.queue.forget(request);
                match action.requeue_delay() {
                    Some(delay) => {
                        let priority = action.priority().unwrap_or(0);
                        self.queue
                            .at_priority(priority)
                            .add_after(request.clone(), delay);
                        record(ReconcileResult::RequeueAfter, false, false);
                    }
                    None => record(ReconcileResult::Success, false, false),
                }
                tracing::debug!(controller = %self.name, %request, ?action, "reconciled");
            }
            Outcome::Failed(error) if is_terminal(&error) => {
                self.queue.forget(request);
                record(ReconcileResult::Error, true, false);
                tracing::error!(controller = %self.name, %request, error = %error, "terminal reconcile error; not retrying");
                if let Some(recorder) = &self.recorder {
                    recorder.event(obj.as_ref(), EventType::Warning, "ReconcileError", &error);
                }
            }
            Outcome::Failed(error) => {
                record(ReconcileResult::Error, false, false);
                tracing::warn!(controller = %self.name, %request, error = %error, retries = self.queue.num_requeues(request), "reconcile failed; retrying with backoff");
                self.queue.add_rate_limited(request.clone());
            }
            Outcome::Panicked(panic) => {
                record(ReconcileResult::Error, false, true);
                tracing::error!(controller = %self.name, %request, panic = panic_message(&panic), "reconcile panicked; retrying with backoff");
                self.queue.add_rate_limited(request.clone());
            }
            Outcome::TimedOut(timeout) => {
                record(ReconcileResult::Error, false, false);
                tracing::warn!(controller = %self.name, %request, ?timeout, "reconcile timed out; retrying with backoff");
                self.queue.add_rate_limited(request.clone());
            }
        }
    }

    /// A sharded controller: whether the object is this member's to reconcile. A drained
    /// object is handed back instead (step 4 of the handover in
    /// [`sharding`](crate::sharding)): this worker holds the request, so no reconcile of
    /// it runs on this member now, and once its labels are gone none starts again.
    async fn owned_by_this_member(&self, handover: &Handover, request: &Request, obj: &K) -> bool {
        match handover.verdict(obj) {
            Verdict::Reconcile => true,
            Verdict::NotOurs => {
                tracing::debug!(controller = %self.name, %request, "assigned to another member: not reconciled here");
                self.queue.forget(request);
                false
            }
            Verdict::HandBack => {
                match handover.hand_back(obj).await {
                    Ok(()) => {
                        tracing::info!(controller = %self.name, %request, "drained: handed back to the sharder");
                        self.queue.forget(request);
                    }
                    Err(error) if error.is_not_found() => self.queue.forget(request),
                    Err(error) => {
                        tracing::warn!(controller = %self.name, %request, %error, "handing back a drained object failed; retrying");
                        self.queue.add_rate_limited(request.clone());
                    }
                }
                false
            }
        }
    }

    /// Read-your-own-writes: whether the cache reflects the controller's writes of the
    /// request's object; if not in time, the request is requeued with backoff.
    async fn caught_up(&self, request: &Request, key: &str) -> bool {
        let Some(store) = &self.consistency else {
            return true;
        };
        if store.is_ready(key) {
            return true;
        }
        let started = Instant::now();
        let ready = store.ensure_ready(key, self.consistency_wait).await;
        if let Some(metrics) = &self.metrics {
            metrics.consistency_wait(started.elapsed().as_secs_f64(), !ready);
        }
        if !ready {
            tracing::warn!(controller = %self.name, %request, "the cache has not caught up with our own write: requeuing instead of reconciling stale state");
            self.queue.add_rate_limited(request.clone());
        }
        ready
    }

    /// Runs the reconcile function once, catching a panic and applying the timeout.
    async fn reconcile_once(&self, obj: Arc<K>) -> Outcome<E> {
        let future = AssertUnwindSafe((self.reconcile)(obj, self.ctx.clone())).catch_unwind();
        let result = match self.timeout {
            Some(timeout) => match tokio::time::timeout(timeout, future).await {
                Ok(result) => result,
                Err(_) => return Outcome::TimedOut(timeout),
            },
            None => future.await,
        };
        match result {
            Ok(Ok(action)) => Outcome::Done(action),
            Ok(Err(error)) => Outcome::Failed(error),
            Err(panic) => Outcome::Panicked(panic),
        }
    }
}

/// The message of a panic payload, when it is a string.
fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(not a string)")
}
