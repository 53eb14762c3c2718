//! The fan-out hub shared by a broadcaster and its recorders — the core/v1
//! [`EventBroadcaster`](super::EventBroadcaster) and the `events.k8s.io/v1`
//! [`events::EventBroadcaster`](super::events::EventBroadcaster) alike: the watchers'
//! bounded queues, each drained by a tokio task, and the broadcaster's lifecycle state.
//! Recorders only [`distribute`](FanOut::distribute); the broadcaster starts watchers
//! ([`spawn_watcher`](FanOut::spawn_watcher)) and [`shuts the hub down`](FanOut::shutdown).

use std::sync::{
    Arc, Weak,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use parking_lot::{Mutex, RwLock};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use super::{config::BroadcasterConfig, recorded_event::sealed::Described};

/// One watcher's queue.
pub(crate) struct Watcher<E> {
    pub(crate) id: u64,
    pub(crate) tx: mpsc::Sender<Arc<E>>,
}

/// The hub: watcher queues plus the broadcaster's configuration and lifecycle.
pub(crate) struct FanOut<E> {
    pub(crate) config: BroadcasterConfig,
    pub(crate) watchers: RwLock<Vec<Watcher<E>>>,
    next_id: AtomicU64,
    pub(crate) shut_down: AtomicBool,
    /// Cancels retry pauses at shutdown: from then on each event gets one attempt.
    pub(crate) cancel: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    dropped: AtomicU64,
}

/// Stops one watcher started on a broadcaster.
#[derive(Clone)]
pub struct WatchHandle {
    id: u64,
    shared: Weak<dyn WatcherSet>,
}

impl std::fmt::Debug for WatchHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl WatchHandle {
    /// Stops sending new events to this watcher; it finishes the events already queued.
    pub fn stop(&self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.remove(self.id);
        }
    }
}

/// The watchers of a hub, whatever its event type (what a [`WatchHandle`] stops).
trait WatcherSet: Send + Sync {
    fn remove(&self, id: u64);
}

impl<E: Described> WatcherSet for FanOut<E> {
    fn remove(&self, id: u64) {
        self.watchers.write().retain(|w| w.id != id);
    }
}

impl<E: Described> FanOut<E> {
    /// A hub with no watchers.
    pub(crate) fn new(config: BroadcasterConfig) -> Self {
        Self {
            config,
            watchers: RwLock::new(Vec::new()),
            next_id: AtomicU64::new(0),
            shut_down: AtomicBool::new(false),
            cancel: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
        }
    }

    /// Hands `event` to every watcher without waiting; a full queue drops it.
    pub(crate) fn distribute(&self, event: E) {
        if self.shut_down.load(Ordering::Acquire) {
            tracing::debug!(reason = ?event.reason(), "event broadcaster is shut down, event dropped");
            return;
        }
        let event = Arc::new(event);
        for w in self.watchers.read().iter() {
            match w.tx.try_send(event.clone()) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(
                        object = ?event.object_name(),
                        reason = ?event.reason(),
                        "unable to record event: too many queued events, event dropped"
                    );
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
    }

    /// Starts a watcher: `run` drains its queue on a task of its own. Must be called
    /// within a tokio runtime; after shutdown the watcher is not started.
    pub(crate) fn spawn_watcher<F, Fut>(self: &Arc<Self>, run: F) -> WatchHandle
    where
        F: FnOnce(mpsc::Receiver<Arc<E>>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(self.config.queue_capacity);
        let weak: Weak<dyn WatcherSet> = Arc::downgrade(self) as Weak<dyn WatcherSet>;
        let handle = WatchHandle { id, shared: weak };
        let mut watchers = self.watchers.write();
        if self.shut_down.load(Ordering::Acquire) {
            tracing::warn!("event broadcaster is shut down, watcher not started");
            return handle;
        }
        let task = tokio::spawn(run(rx));
        watchers.push(Watcher { id, tx });
        self.tasks.lock().push(task);
        handle
    }

    /// Starts a watcher calling `handler` with every event (a broadcaster's
    /// `start_event_watcher`).
    pub(crate) fn spawn_handler(
        self: &Arc<Self>,
        handler: impl Fn(&E) + Send + Sync + 'static,
    ) -> WatchHandle {
        self.spawn_watcher(move |mut rx: mpsc::Receiver<Arc<E>>| async move {
            while let Some(event) = rx.recv().await {
                handler(&event);
            }
        })
    }

    /// How many events were dropped because a watcher's queue was full.
    pub(crate) fn dropped_events(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Runs `task` until shutdown, awaited by [`shutdown`](Self::shutdown) like the
    /// watchers (a broadcaster's periodic work).
    pub(crate) fn spawn_task(&self, task: impl Future<Output = ()> + Send + 'static) {
        let _guard = self.watchers.write();
        if self.shut_down.load(Ordering::Acquire) {
            return;
        }
        self.tasks.lock().push(tokio::spawn(task));
    }

    /// Stops queueing, closes the watchers' queues, ends retry pauses and waits for every
    /// task to finish its queue.
    pub(crate) async fn shutdown(&self) {
        {
            let mut watchers = self.watchers.write();
            self.shut_down.store(true, Ordering::Release);
            watchers.clear();
        }
        self.cancel.cancel();
        let tasks = std::mem::take(&mut *self.tasks.lock());
        for task in tasks {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "event watcher task failed");
            }
        }
    }
}
