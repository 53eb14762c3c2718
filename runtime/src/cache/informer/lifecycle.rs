//! Running an informer: the reflector and the delta loop side by side until stopped, then
//! the handlers' shutdown (client-go's `sharedIndexInformer.Run`).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::Cacheable;
use crate::cache::{
    DeltaFifo, DeltaFifoOptions, PopError, Queue, Queued, RealFifo, RealFifoOptions, Reflector,
    TransformFunc,
};
use crate::cache::{QueueKind, SharedIndexInformer};

/// How many items the delta loop processes per hold of the queue's lock.
const POP_BATCH: usize = 64;

impl<K: Cacheable> SharedIndexInformer<K> {
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
