//! The informer's fan-out to its handlers (client-go's `sharedProcessor` and
//! `processorListener`).
//!
//! Each handler gets its own unbounded buffer and its own thread, so a slow handler only
//! grows its buffer: it never blocks the informer or the other handlers, and it never
//! occupies an async worker. A handler added with [`Dispatch::Task`] (one that never
//! blocks) gets a task on the informer's runtime instead of a thread. Notifications reach
//! a handler in order, one at a time; a handler that panics is logged and keeps receiving.

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use parking_lot::Mutex;
use tokio::{
    sync::{mpsc, oneshot},
    time::Instant,
};

use crate::cache::{DeletedObject, Dispatch, ResourceEventHandler};

/// client-go's floor for handler resync periods.
pub(crate) const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// One notification for one handler.
pub(crate) enum Notification<K> {
    Add {
        obj: Arc<K>,
        is_in_initial_list: bool,
    },
    Update {
        old: Arc<K>,
        new: Arc<K>,
    },
    Delete(DeletedObject<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Add {
                obj,
                is_in_initial_list,
            } => Self::Add {
                obj: obj.clone(),
                is_in_initial_list: *is_in_initial_list,
            },
            Self::Update { old, new } => Self::Update {
                old: old.clone(),
                new: new.clone(),
            },
            Self::Delete(d) => Self::Delete(d.clone()),
        }
    }
}

impl<K> Notification<K> {
    fn is_initial(&self) -> bool {
        matches!(
            self,
            Self::Add {
                is_in_initial_list: true,
                ..
            }
        )
    }
}

/// The resync period a handler actually gets, given what it asked for and the informer's
/// check period (client-go's `determineResyncPeriod`).
pub(crate) fn determine_resync_period(desired: Duration, check: Duration) -> Duration {
    if desired.is_zero() {
        return desired;
    }
    if check.is_zero() {
        tracing::warn!(
            ?desired,
            "informer has resync disabled; the handler will not resync"
        );
        return Duration::ZERO;
    }
    if desired < check {
        tracing::warn!(
            ?desired,
            ?check,
            "handler resync period raised to the informer's check period"
        );
        return check;
    }
    desired
}

struct ResyncState {
    period: Duration,
    next: Instant,
}

/// One registered handler: its buffer, thread and resync bookkeeping.
pub(crate) struct Listener<K> {
    pub(crate) id: u64,
    handler: Arc<dyn ResourceEventHandler<K>>,
    sender: Mutex<Option<mpsc::UnboundedSender<Notification<K>>>>,
    receiver: Mutex<Option<mpsc::UnboundedReceiver<Notification<K>>>>,
    stopped: Arc<AtomicBool>,
    requested_resync: Duration,
    resync: Mutex<ResyncState>,
    /// Initial-list adds queued but not yet handled.
    pending_initial: Arc<AtomicUsize>,
    /// Notifications queued but not yet handled (the one in the callback included).
    pending: Arc<AtomicUsize>,
    dispatch: Dispatch,
    /// The handler's thread, once started (with [`Dispatch::Thread`]).
    thread: std::sync::OnceLock<std::thread::ThreadId>,
}

/// What a listener's thread or task needs to handle what its buffer holds.
struct Delivery<K> {
    handler: Arc<dyn ResourceEventHandler<K>>,
    stopped: Arc<AtomicBool>,
    pending_initial: Arc<AtomicUsize>,
    pending: Arc<AtomicUsize>,
}

impl<K: 'static> Delivery<K> {
    /// Handles one notification; false once the listener has stopped. `backlog` is what
    /// still waits behind it.
    fn handle(&self, notification: &Notification<K>, backlog: usize) -> bool {
        if self.stopped.load(Ordering::SeqCst) {
            return false;
        }
        let _ = backlog;
        #[cfg(feature = "planted-bugs")]
        let dropped = crate::planted_bugs::LISTENER_DROPS_UNDER_LOAD.load(Ordering::Relaxed)
            && backlog >= crate::planted_bugs::LOAD;
        #[cfg(not(feature = "planted-bugs"))]
        let dropped = false;
        if !dropped {
            deliver(self.handler.as_ref(), notification);
        }
        if notification.is_initial() {
            self.pending_initial.fetch_sub(1, Ordering::SeqCst);
        }
        self.pending.fetch_sub(1, Ordering::SeqCst);
        true
    }
}

static NEXT_LISTENER_ID: AtomicU64 = AtomicU64::new(1);

impl<K: Send + Sync + 'static> Listener<K> {
    pub(crate) fn new(
        handler: Arc<dyn ResourceEventHandler<K>>,
        requested_resync: Duration,
        resync: Duration,
        dispatch: Dispatch,
    ) -> Arc<Self> {
        let (tx, rx) = mpsc::unbounded_channel();
        Arc::new(Self {
            id: NEXT_LISTENER_ID.fetch_add(1, Ordering::Relaxed),
            handler,
            sender: Mutex::new(Some(tx)),
            receiver: Mutex::new(Some(rx)),
            stopped: Arc::new(AtomicBool::new(false)),
            requested_resync,
            resync: Mutex::new(ResyncState {
                period: resync,
                next: Instant::now() + resync,
            }),
            pending_initial: Arc::new(AtomicUsize::new(0)),
            pending: Arc::new(AtomicUsize::new(0)),
            dispatch,
            thread: std::sync::OnceLock::new(),
        })
    }

    /// The count of notifications queued for the handler and not yet handled.
    pub(crate) fn pending_counter(&self) -> Arc<AtomicUsize> {
        self.pending.clone()
    }

    /// Buffers a notification; never blocks.
    pub(crate) fn notify(&self, notification: Notification<K>) {
        let initial = notification.is_initial();
        if let Some(tx) = self.sender.lock().as_ref() {
            if initial {
                self.pending_initial.fetch_add(1, Ordering::SeqCst);
            }
            self.pending.fetch_add(1, Ordering::SeqCst);
            if tx.send(notification).is_err() {
                self.pending.fetch_sub(1, Ordering::SeqCst);
                if initial {
                    self.pending_initial.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }

    /// Whether every initial-list add given to this handler has been handled.
    pub(crate) fn initial_delivered(&self) -> bool {
        self.pending_initial.load(Ordering::SeqCst) == 0
    }

    /// Starts the handler's thread, or its task on `runtime` ([`Dispatch::Task`]; a thread
    /// when there is no runtime); the returned receiver fires when it has exited.
    pub(crate) fn start(
        self: &Arc<Self>,
        runtime: Option<&tokio::runtime::Handle>,
    ) -> Option<oneshot::Receiver<()>> {
        let mut rx = self.receiver.lock().take()?;
        let (done_tx, done_rx) = oneshot::channel();
        let delivery = Delivery {
            handler: self.handler.clone(),
            stopped: self.stopped.clone(),
            pending_initial: self.pending_initial.clone(),
            pending: self.pending.clone(),
        };
        if let (Dispatch::Task, Some(runtime)) = (self.dispatch, runtime) {
            runtime.spawn(async move {
                while let Some(notification) = rx.recv().await {
                    if !delivery.handle(&notification, rx.len()) {
                        break;
                    }
                    // Many notifications in a row yield to the runtime now and then.
                    tokio::task::consume_budget().await;
                }
                let _ = done_tx.send(());
            });
            return Some(done_rx);
        }
        let spawned = std::thread::Builder::new()
            .name(format!("kubegen-handler-{}", self.id))
            .spawn(move || {
                while let Some(notification) = rx.blocking_recv() {
                    if !delivery.handle(&notification, rx.len()) {
                        break;
                    }
                }
                let _ = done_tx.send(());
            });
        match spawned {
            Ok(handle) => {
                let _ = self.thread.set(handle.thread().id());
                Some(done_rx)
            }
            Err(error) => {
                tracing::error!(%error, "could not start an event handler thread");
                None
            }
        }
    }

    /// Stops delivery: buffered notifications are dropped.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.sender.lock().take();
        // A listener that never started still holds its receiver: dropping it frees the buffer.
        self.receiver.lock().take();
    }

    fn should_resync(&self, now: Instant) -> bool {
        let state = self.resync.lock();
        !state.period.is_zero() && now >= state.next
    }

    fn determine_next_resync(&self, now: Instant) {
        let mut state = self.resync.lock();
        state.next = now + state.period;
    }

    fn set_resync_period(&self, period: Duration) {
        self.resync.lock().period = period;
    }

    #[cfg(test)]
    pub(crate) fn resync_period(&self) -> Duration {
        self.resync.lock().period
    }
}

fn deliver<K: 'static>(handler: &dyn ResourceEventHandler<K>, notification: &Notification<K>) {
    let result = catch_unwind(AssertUnwindSafe(|| match notification {
        Notification::Add {
            obj,
            is_in_initial_list,
        } => handler.on_add(obj, *is_in_initial_list),
        Notification::Update { old, new } => handler.on_update(old, new),
        Notification::Delete(obj) => handler.on_delete(obj),
    }));
    if result.is_err() {
        tracing::error!("event handler panicked; it keeps receiving notifications");
    }
}

/// The set of listeners and which of them are due for a resync.
pub(crate) struct Processor<K> {
    listeners: Vec<Arc<Listener<K>>>,
    syncing: Vec<Arc<Listener<K>>>,
    started: bool,
    /// The runtime the informer runs on (for [`Dispatch::Task`] handlers), once started.
    runtime: Option<tokio::runtime::Handle>,
    /// Per started listener (by id): fires when its thread or task has exited.
    running: Vec<(u64, oneshot::Receiver<()>)>,
}

impl<K: Send + Sync + 'static> Processor<K> {
    pub(crate) fn new() -> Self {
        Self {
            listeners: Vec::new(),
            syncing: Vec::new(),
            started: false,
            runtime: None,
            running: Vec::new(),
        }
    }

    /// Registers a listener, starting it at once if the processor runs.
    pub(crate) fn add_listener(&mut self, listener: Arc<Listener<K>>) {
        if self.started {
            self.running.extend(
                listener
                    .start(self.runtime.as_ref())
                    .map(|done| (listener.id, done)),
            );
        }
        self.syncing.push(listener.clone());
        self.listeners.push(listener);
    }

    /// Unregisters a listener and stops it; `None` if it was not registered. Otherwise
    /// what fires once a callback in flight has returned: nothing to wait for when the
    /// listener never started, or when called from its own thread (a handler removing
    /// itself would wait for itself).
    pub(crate) fn remove_listener(&mut self, id: u64) -> Option<Option<oneshot::Receiver<()>>> {
        let pos = self.listeners.iter().position(|l| l.id == id)?;
        let listener = self.listeners.remove(pos);
        listener.stop();
        self.syncing.retain(|l| l.id != id);
        let done = self
            .running
            .iter()
            .position(|(l, _)| *l == id)
            .map(|i| self.running.swap_remove(i).1);
        let own_thread = listener.thread.get() == Some(&std::thread::current().id());
        Some(done.filter(|_| !own_thread))
    }

    /// Sends a notification to every listener, or only to those due for a resync.
    pub(crate) fn distribute(&self, notification: Notification<K>, sync: bool) {
        let targets = if sync { &self.syncing } else { &self.listeners };
        for listener in targets {
            listener.notify(notification.clone());
        }
    }

    /// Starts every listener's thread (or task, on the current runtime).
    pub(crate) fn start(&mut self) {
        self.started = true;
        self.runtime = tokio::runtime::Handle::try_current().ok();
        for listener in &self.listeners {
            self.running.extend(
                listener
                    .start(self.runtime.as_ref())
                    .map(|done| (listener.id, done)),
            );
        }
    }

    /// Stops every listener and hands back what to wait on for their threads to exit.
    pub(crate) fn stop(&mut self) -> Vec<oneshot::Receiver<()>> {
        for listener in &self.listeners {
            listener.stop();
        }
        std::mem::take(&mut self.running)
            .into_iter()
            .map(|(_, done)| done)
            .collect()
    }

    /// Picks the listeners due for a resync now and schedules their next one; true if any.
    pub(crate) fn should_resync(&mut self) -> bool {
        let now = Instant::now();
        self.syncing.clear();
        for listener in &self.listeners {
            if listener.should_resync(now) {
                listener.determine_next_resync(now);
                self.syncing.push(listener.clone());
            }
        }
        !self.syncing.is_empty()
    }

    /// Re-derives every listener's resync period after the check period changed.
    pub(crate) fn resync_check_period_changed(&self, check: Duration) {
        for listener in &self.listeners {
            listener.set_resync_period(determine_resync_period(listener.requested_resync, check));
        }
    }

    pub(crate) fn is_registered(&self, id: u64) -> bool {
        self.listeners.iter().any(|l| l.id == id)
    }

    pub(crate) fn len(&self) -> usize {
        self.listeners.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc as std_mpsc;

    use super::*;

    struct Forward(Mutex<std_mpsc::Sender<String>>);

    impl ResourceEventHandler<i32> for Forward {
        fn on_add(&self, obj: &Arc<i32>, initial: bool) {
            if **obj < 0 {
                panic!("negative");
            }
            let _ = self.0.lock().send(format!("add {obj} {initial}"));
        }
        fn on_update(&self, old: &Arc<i32>, new: &Arc<i32>) {
            let _ = self.0.lock().send(format!("update {old} {new}"));
        }
    }

    fn listener(resync: Duration) -> (Arc<Listener<i32>>, std_mpsc::Receiver<String>) {
        let (tx, rx) = std_mpsc::channel();
        (
            Listener::new(
                Arc::new(Forward(Mutex::new(tx))),
                resync,
                resync,
                Dispatch::Thread,
            ),
            rx,
        )
    }

    fn add(n: i32, initial: bool) -> Notification<i32> {
        Notification::Add {
            obj: Arc::new(n),
            is_in_initial_list: initial,
        }
    }

    #[test]
    fn resync_period_rules_follow_client_go() {
        let s = Duration::from_secs;
        assert_eq!(determine_resync_period(s(0), s(10)), s(0));
        assert_eq!(
            determine_resync_period(s(30), s(0)),
            s(0),
            "informer without resync"
        );
        assert_eq!(
            determine_resync_period(s(5), s(10)),
            s(10),
            "raised to the check period"
        );
        assert_eq!(determine_resync_period(s(30), s(10)), s(30));
    }

    #[test]
    fn notifications_buffered_before_start_arrive_in_order() {
        let (l, rx) = listener(Duration::ZERO);
        let mut p = Processor::new();
        p.add_listener(l.clone());
        for i in 0..100 {
            p.distribute(add(i, true), false);
        }
        assert!(!l.initial_delivered());
        p.start();
        let got: Vec<String> = (0..100).map(|_| rx.recv().unwrap()).collect();
        assert_eq!(
            got,
            (0..100)
                .map(|i| format!("add {i} true"))
                .collect::<Vec<_>>()
        );
        for _ in p.stop() {}
    }

    #[test]
    fn a_panicking_handler_keeps_receiving() {
        let (l, rx) = listener(Duration::ZERO);
        let mut p = Processor::new();
        p.add_listener(l);
        p.start();
        p.distribute(add(-1, false), false);
        p.distribute(add(7, false), false);
        assert_eq!(rx.recv().unwrap(), "add 7 false");
        p.stop();
    }

    #[test]
    fn sync_notifications_go_only_to_listeners_due_for_resync() {
        let (due, due_rx) = listener(Duration::from_secs(1));
        let (never, never_rx) = listener(Duration::ZERO);
        let mut p = Processor::new();
        p.add_listener(due);
        p.add_listener(never);
        p.start();
        // Right after creation nobody is due: their first resync is one period away.
        assert!(!p.should_resync());
        std::thread::sleep(Duration::from_millis(1100));
        assert!(p.should_resync());
        p.distribute(
            Notification::Update {
                old: Arc::new(1),
                new: Arc::new(1),
            },
            true,
        );
        p.distribute(
            Notification::Update {
                old: Arc::new(2),
                new: Arc::new(3),
            },
            false,
        );
        assert_eq!(due_rx.recv().unwrap(), "update 1 1");
        assert_eq!(due_rx.recv().unwrap(), "update 2 3");
        assert_eq!(
            never_rx.recv().unwrap(),
            "update 2 3",
            "the sync went to the due listener only"
        );
        assert!(!p.should_resync(), "the next resync is a period away again");
        p.stop();
    }

    #[test]
    fn removed_listener_gets_nothing_more() {
        let (l, rx) = listener(Duration::ZERO);
        let mut p = Processor::new();
        p.add_listener(l.clone());
        p.start();
        assert!(p.remove_listener(l.id).is_some());
        assert!(p.remove_listener(l.id).is_none());
        p.distribute(add(1, false), false);
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn initial_delivery_is_tracked_per_listener() {
        let (l, rx) = listener(Duration::ZERO);
        let mut p = Processor::new();
        p.add_listener(l.clone());
        p.distribute(add(1, true), false);
        p.distribute(add(2, false), false);
        assert!(!l.initial_delivered());
        p.start();
        rx.recv().unwrap();
        rx.recv().unwrap();
        // The count drops right after the handler returns, on the handler's thread.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !l.initial_delivered() && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(l.initial_delivered());
        p.stop();
    }

    #[test]
    fn check_period_change_recomputes_listener_periods() {
        let (l, _rx) = listener(Duration::from_secs(3));
        let mut p = Processor::new();
        p.add_listener(l.clone());
        p.resync_check_period_changed(Duration::from_secs(5));
        assert_eq!(l.resync_period(), Duration::from_secs(5));
        p.resync_check_period_changed(Duration::from_secs(2));
        assert_eq!(l.resync_period(), Duration::from_secs(3));
    }
}
