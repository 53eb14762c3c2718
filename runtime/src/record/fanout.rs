//! The fan-out hub shared by an [`EventBroadcaster`](super::EventBroadcaster) and its
//! [`EventRecorder`](super::EventRecorder)s: the watchers' bounded queues and the
//! broadcaster's lifecycle state. Recorders only [`distribute`](FanOut::distribute); the
//! broadcaster registers watchers and shuts the hub down.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use k8s_openapi::api::core::v1::Event;
use parking_lot::{Mutex, RwLock};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use super::config::BroadcasterConfig;

/// One watcher's queue.
pub(super) struct Watcher {
    pub(super) id: u64,
    pub(super) tx: mpsc::Sender<Arc<Event>>,
}

/// The hub: watcher queues plus the broadcaster's configuration and lifecycle.
pub(crate) struct FanOut {
    pub(super) config: BroadcasterConfig,
    pub(super) watchers: RwLock<Vec<Watcher>>,
    pub(super) next_id: AtomicU64,
    pub(super) shut_down: AtomicBool,
    /// Cancels retry pauses at shutdown: from then on each event gets one attempt.
    pub(super) cancel: CancellationToken,
    pub(super) tasks: Mutex<Vec<JoinHandle<()>>>,
    pub(super) dropped: AtomicU64,
}

impl FanOut {
    /// Hands `event` to every watcher without waiting; a full queue drops it.
    pub(crate) fn distribute(&self, event: Event) {
        if self.shut_down.load(Ordering::Acquire) {
            tracing::debug!(reason = ?event.reason, "event broadcaster is shut down, event dropped");
            return;
        }
        let event = Arc::new(event);
        for w in self.watchers.read().iter() {
            match w.tx.try_send(event.clone()) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(
                        object = ?event.involved_object.name,
                        reason = ?event.reason,
                        "unable to record event: too many queued events, event dropped"
                    );
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
    }
}
