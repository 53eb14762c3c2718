//! Running an informer: [`UnstartedInformer`], the one value that can start it, and `run`,
//! the reflector and the delta loop side by side until stopped, then the handlers' shutdown
//! (client-go's `sharedIndexInformer.Run`).
//!
//! client-go checks at run time that `Run` is called once (`informer already started`);
//! here the builder hands out one [`UnstartedInformer`] and `run` consumes it, so a second
//! start does not compile. Everything else (handlers, indexers, the cache) is reached
//! through the [`SharedIndexInformer`] it dereferences to, before and after start.

use std::{fmt, ops::Deref, sync::Arc};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::Cacheable;
use crate::cache::{
    DeltaFifo, DeltaFifoOptions, PopError, Queue, Queued, RealFifo, RealFifoOptions, Reflector,
    TransformFunc,
};
use crate::cache::{QueueKind, SharedIndexInformer};

/// How many items the delta loop processes per hold of the queue's lock.
const POP_BATCH: usize = 64;

/// An informer that has not started: what [`SharedIndexInformerBuilder::build`] and the
/// constructors return, and the only value that can [`run`](Self::run) it.
///
/// It dereferences to the informer's [`SharedIndexInformer`], so handlers, indexers and
/// listers are added and taken from it directly; [`handle`](Self::handle) clones that
/// handle for whoever needs the informer after it has started (a controller, a lister, a
/// factory). `run` consumes this value: an informer starts at most once, and the type says
/// so.
///
/// ```
/// # use kubegen::{cache::{ListWatch, SharedIndexInformer}, client::{Client, ResourceClient}};
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # async fn demo(client: Client) {
/// let configmaps = ResourceClient::<ConfigMap>::all(client);
/// let informer = SharedIndexInformer::builder(ListWatch::new(configmaps)).build();
/// let lister = informer.lister(); // reads the cache, before and after start
/// let handle = informer.handle(); // the shared informer, cheap to clone
/// let stop = tokio_util::sync::CancellationToken::new();
/// let running = tokio::spawn(informer.run(stop.clone()));
/// // informer.run(stop) again: does not compile, `informer` has moved.
/// stop.cancel();
/// running.await.unwrap();
/// assert!(handle.is_stopped());
/// # drop(lister);
/// # }
/// ```
///
/// A second start is a compile error (use of a moved value):
///
/// ```compile_fail,E0382
/// # use kubegen::{cache::{ListWatch, SharedIndexInformer}, client::{Client, ResourceClient}};
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # async fn demo(client: Client) {
/// let configmaps = ResourceClient::<ConfigMap>::all(client);
/// let informer = SharedIndexInformer::builder(ListWatch::new(configmaps)).build();
/// let stop = tokio_util::sync::CancellationToken::new();
/// let first = informer.run(stop.clone());
/// let second = informer.run(stop);
/// # }
/// ```
///
/// [`SharedIndexInformerBuilder::build`]: crate::cache::SharedIndexInformerBuilder::build
#[must_use = "an informer does nothing until it runs"]
pub struct UnstartedInformer<K: Cacheable> {
    informer: SharedIndexInformer<K>,
}

impl<K: Cacheable> UnstartedInformer<K> {
    pub(super) fn new(informer: SharedIndexInformer<K>) -> Self {
        Self { informer }
    }

    /// The shared informer (a clone of the handle this value dereferences to), for use
    /// after `run` has taken this value.
    pub fn handle(&self) -> SharedIndexInformer<K> {
        self.informer.clone()
    }

    /// Lists, watches and dispatches until `stop` is cancelled. Shutdown stops the
    /// reflector and the delta loop first, then the handlers (their pending notifications
    /// are dropped). The future owns the informer (spawn it as it is).
    pub async fn run(self, stop: CancellationToken) {
        self.informer.run(stop).await;
    }

    /// [`run`](Self::run) on a task of the current tokio runtime: the shared handle and
    /// the task, which ends once `stop` is cancelled and the informer has shut down.
    pub fn spawn(self, stop: CancellationToken) -> (SharedIndexInformer<K>, JoinHandle<()>) {
        let handle = self.handle();
        (handle, tokio::spawn(self.run(stop)))
    }
}

impl<K: Cacheable> Deref for UnstartedInformer<K> {
    type Target = SharedIndexInformer<K>;

    fn deref(&self) -> &SharedIndexInformer<K> {
        &self.informer
    }
}

impl<K: Cacheable> AsRef<SharedIndexInformer<K>> for UnstartedInformer<K> {
    fn as_ref(&self) -> &SharedIndexInformer<K> {
        &self.informer
    }
}

impl<K: Cacheable> fmt::Debug for UnstartedInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("UnstartedInformer")
            .field(&self.informer)
            .finish()
    }
}

impl<K: Cacheable> SharedIndexInformer<K> {
    /// The body of [`UnstartedInformer::run`]: reached only through it, so once.
    async fn run(&self, stop: CancellationToken) {
        let check_period = {
            let mut state = self.inner.state.lock();
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
                    |item: Queued<'_, K>, initial: bool| informer.handle_item(item, initial);
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
}
