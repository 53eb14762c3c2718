//! [`Queue<T>`]: the fair, stingy work queue (client-go's `workqueue.Typed[T]`).
//!
//! The queue keeps one table of items. Each item is *dirty* (needs processing), *processing*
//! (handed to a worker by [`Queue::get`], not yet [`Queue::done`]), *waiting* (scheduled by a
//! [`DelayingQueue`](super::DelayingQueue)), or a combination. Only dirty items that are not
//! being processed are in the FIFO order. This gives client-go's four add cases:
//!
//! 1. a new item is queued;
//! 2. an item that is already queued is not queued twice;
//! 3. an item being processed is parked (marked dirty) and queued again when `done` is called;
//! 4. an add after shutdown is ignored.
//!
//! Hence one item is never handed to two workers at once.
//!
//! All three queue types share this state behind one `Arc`, so a handle is cheap to clone and
//! every clone sees the same queue. Blocked [`Queue::get`] calls wait on a
//! [`tokio::sync::Notify`]; nothing polls.

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::QueueConfig;
use super::delaying::{TimerHandle, WaitHeap, Waiting};
use super::metrics::QueueMetrics;

/// How often the unfinished-work gauges are refreshed (client-go's
/// `defaultUnfinishedWorkUpdatePeriod`).
pub(crate) const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// The bounds every queue item satisfies.
pub trait QueueItem: Clone + Eq + Hash + Send + Sync + 'static {}
impl<T: Clone + Eq + Hash + Send + Sync + 'static> QueueItem for T {}

/// The per-item bookkeeping. An entry exists while the item is dirty, processing or waiting.
#[derive(Debug, Default)]
pub(crate) struct Entry {
    /// Needs processing (client-go's `dirty` set).
    pub(crate) dirty: bool,
    /// Handed out by `get`, `done` not yet called (client-go's `processing` set).
    pub(crate) processing: bool,
    /// Scheduled by `add_after`; the earliest ready time wins.
    pub(crate) waiting: Option<Waiting>,
    /// When the item became dirty (metrics only).
    added_at: Option<Instant>,
    /// When the item was handed to a worker (metrics only).
    started_at: Option<Instant>,
}

impl Entry {
    fn is_idle(&self) -> bool {
        !self.dirty && !self.processing && self.waiting.is_none()
    }
}

/// Everything guarded by the queue's lock.
pub(crate) struct State<T> {
    /// Dirty items that are not being processed, in the order they are handed out.
    pub(crate) queue: VecDeque<T>,
    /// Every item that is dirty, processing or waiting.
    pub(crate) items: HashMap<T, Entry, ahash::RandomState>,
    /// How many items are being processed.
    pub(crate) processing: usize,
    pub(crate) shutting_down: bool,
    /// `shut_down_with_drain` is waiting for the processing items.
    drain: bool,
    /// How many `get` calls are registered with `get_notify`; adds skip the wake-up when
    /// nobody waits.
    get_waiters: usize,
    /// The delaying queue's timer heap (empty for a plain queue).
    pub(crate) waiting: WaitHeap<T>,
}

/// The state and signals shared by every handle of one queue.
pub(crate) struct Shared<T> {
    pub(crate) state: Mutex<State<T>>,
    /// Wakes blocked `get` calls.
    pub(crate) get_notify: Notify,
    /// Wakes `shut_down_with_drain` when the last processing item is done.
    drain_notify: Notify,
    /// The delaying queue's timer task, if this queue is a delaying queue.
    pub(crate) timer: Option<TimerHandle>,
    /// Cancelled on shutdown and when the last handle is dropped: stops background tasks.
    pub(crate) cancel: CancellationToken,
    pub(crate) metrics: Option<QueueMetrics>,
    metrics_task_started: AtomicBool,
    name: String,
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl<T: QueueItem> Shared<T> {
    pub(crate) fn new(config: &QueueConfig<T>, delaying: bool) -> Arc<Self> {
        let metrics = match (&config.metrics_provider, config.name.is_empty()) {
            (Some(provider), false) => Some(QueueMetrics::new(provider.as_ref(), &config.name)),
            _ => None,
        };
        let shared = Arc::new(Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                items: HashMap::default(),
                processing: 0,
                shutting_down: false,
                drain: false,
                get_waiters: 0,
                waiting: WaitHeap::default(),
            }),
            get_notify: Notify::new(),
            drain_notify: Notify::new(),
            timer: delaying.then(TimerHandle::default),
            cancel: CancellationToken::new(),
            metrics,
            metrics_task_started: AtomicBool::new(false),
            name: config.name.clone(),
        });
        shared.ensure_background();
        shared
    }

    /// The clock reading for metrics, or `None` when the queue records no metrics.
    fn metrics_now(&self) -> Option<Instant> {
        self.metrics.as_ref().map(|_| Instant::now())
    }

    /// Starts the background tasks (delay timer, unfinished-work gauges) if they are needed
    /// and a tokio runtime is available. Called from constructors and from every `get`/
    /// `add_after`, so a queue built outside a runtime starts them once one is in reach.
    pub(crate) fn ensure_background(self: &Arc<Self>) {
        if let Some(timer) = &self.timer {
            timer.ensure_started(self);
        }
        if self.metrics.is_some()
            && !self.metrics_task_started.load(Ordering::Acquire)
            && let Ok(handle) = tokio::runtime::Handle::try_current()
            && self
                .metrics_task_started
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            handle.spawn(unfinished_work_loop(
                Arc::downgrade(self),
                self.cancel.clone(),
            ));
        }
    }

    /// Marks `item` dirty and queues it unless it is already dirty or being processed.
    /// Returns whether a blocked `get` should be woken.
    ///
    /// A waiting entry of the item (from `add_after`) is cancelled: the immediate add
    /// supersedes the scheduled one (see [`RateLimitingQueue`](super::RateLimitingQueue)).
    pub(crate) fn add_locked(&self, state: &mut State<T>, item: T) -> bool {
        if state.shutting_down {
            return false;
        }
        let State {
            items,
            queue,
            waiting,
            get_waiters,
            ..
        } = state;
        match items.entry(item) {
            MapEntry::Occupied(mut occupied) => {
                let entry = occupied.get_mut();
                if entry.waiting.take().is_some() {
                    waiting.live -= 1;
                }
                if entry.dirty {
                    return false;
                }
                entry.dirty = true;
                entry.added_at = self.metrics_now();
                if let Some(metrics) = &self.metrics {
                    metrics.add();
                }
                if entry.processing {
                    return false;
                }
                queue.push_back(occupied.key().clone());
            }
            MapEntry::Vacant(vacant) => {
                let added_at = self.metrics_now();
                if let Some(metrics) = &self.metrics {
                    metrics.add();
                }
                queue.push_back(vacant.key().clone());
                vacant.insert(Entry {
                    dirty: true,
                    added_at,
                    ..Entry::default()
                });
            }
        }
        *get_waiters > 0
    }

    pub(crate) fn add(&self, item: T) {
        let wake = {
            let mut state = self.state.lock();
            self.add_locked(&mut state, item)
        };
        if wake {
            self.get_notify.notify_one();
        }
    }

    /// Takes the head of the queue and marks it processing.
    fn pop_locked(&self, state: &mut State<T>) -> Option<T> {
        let item = state.queue.pop_front()?;
        let now = self.metrics_now();
        let added_at = match state.items.get_mut(&item) {
            Some(entry) => {
                entry.dirty = false;
                entry.processing = true;
                entry.started_at = now;
                entry.added_at.take()
            }
            None => {
                // Every queued item has an entry; recover rather than lose track of it.
                tracing::warn!(queue = %self.name, "queued item had no entry");
                state.items.insert(
                    item.clone(),
                    Entry {
                        processing: true,
                        started_at: now,
                        ..Entry::default()
                    },
                );
                None
            }
        };
        state.processing += 1;
        if let (Some(metrics), Some(now)) = (&self.metrics, now) {
            metrics.get(added_at, now);
        }
        Some(item)
    }

    pub(crate) async fn get(self: &Arc<Self>) -> Option<T> {
        self.ensure_background();
        let mut registration = GetRegistration {
            shared: self,
            registered: false,
        };
        loop {
            let mut notified = pin!(self.get_notify.notified());
            {
                let mut state = self.state.lock();
                if registration.registered {
                    registration.registered = false;
                    state.get_waiters -= 1;
                }
                if let Some(item) = self.pop_locked(&mut state) {
                    return Some(item);
                }
                if state.shutting_down {
                    return None;
                }
                // Register before releasing the lock, so an add in between is not missed.
                notified.as_mut().enable();
                state.get_waiters += 1;
                registration.registered = true;
            }
            notified.await;
        }
    }

    pub(crate) fn done(&self, item: &T) {
        let mut state = self.state.lock();
        // Remove first: the common case (not re-added meanwhile) costs one lookup.
        let Some((key, mut entry)) = state.items.remove_entry(item) else {
            tracing::debug!(queue = %self.name, "done called for an item that is not being processed");
            return;
        };
        if !entry.processing {
            state.items.insert(key, entry);
            tracing::debug!(queue = %self.name, "done called for an item that is not being processed");
            return;
        }
        entry.processing = false;
        state.processing -= 1;
        if let Some(metrics) = &self.metrics {
            metrics.done(entry.started_at.take(), Instant::now());
        }
        let mut wake = false;
        if entry.dirty {
            state.queue.push_back(key.clone());
            state.items.insert(key, entry);
            wake = state.get_waiters > 0;
        } else if entry.waiting.is_some() {
            state.items.insert(key, entry);
        }
        let drained = state.drain && state.processing == 0;
        drop(state);
        if wake {
            self.get_notify.notify_one();
        }
        if drained {
            self.drain_notify.notify_waiters();
        }
    }

    /// Marks the queue shutting down; `drain` records whether a drain is waiting.
    fn begin_shutdown(&self, drain: bool) {
        {
            let mut state = self.state.lock();
            state.shutting_down = true;
            state.drain = drain;
            // Items still waiting for their delay are dropped, as in client-go.
            if state.waiting.live > 0 {
                state.items.retain(|_, entry| {
                    entry.waiting = None;
                    !entry.is_idle()
                });
            }
            state.waiting.clear();
        }
        self.cancel.cancel();
        self.get_notify.notify_waiters();
        self.drain_notify.notify_waiters();
    }

    pub(crate) fn shut_down(&self) {
        self.begin_shutdown(false);
    }

    pub(crate) async fn shut_down_with_drain(&self) {
        self.begin_shutdown(true);
        loop {
            let mut notified = pin!(self.drain_notify.notified());
            {
                let state = self.state.lock();
                if state.processing == 0 || !state.drain {
                    return;
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Publishes the summed and the longest age of the work in progress.
    fn update_unfinished_work(&self) {
        let Some(metrics) = &self.metrics else {
            return;
        };
        let now = Instant::now();
        let (total, longest) = {
            let state = self.state.lock();
            state
                .items
                .values()
                .filter_map(|entry| entry.started_at)
                .map(|started| now.saturating_duration_since(started).as_secs_f64())
                .fold((0.0_f64, 0.0_f64), |(total, longest), age| {
                    (total + age, longest.max(age))
                })
        };
        metrics.update_unfinished_work(total, longest);
    }
}

/// Keeps `State::get_waiters` exact when a `get` future is dropped while registered.
struct GetRegistration<'a, T: QueueItem> {
    shared: &'a Shared<T>,
    registered: bool,
}

impl<T: QueueItem> Drop for GetRegistration<'_, T> {
    fn drop(&mut self) {
        if self.registered {
            self.shared.state.lock().get_waiters -= 1;
        }
    }
}

/// Refreshes the unfinished-work gauges until shutdown or until every handle is dropped.
async fn unfinished_work_loop<T: QueueItem>(shared: Weak<Shared<T>>, cancel: CancellationToken) {
    let mut ticker = tokio::time::interval(UNFINISHED_WORK_UPDATE_PERIOD);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.update_unfinished_work();
    }
}

/// A fair, de-duplicating work queue (client-go's `workqueue.Typed[T]`).
///
/// Adding an item has client-go's four outcomes:
///
/// 1. a new item is queued;
/// 2. an item that is already queued is not queued twice;
/// 3. an item being processed (handed out by [`get`](Self::get), not yet
///    [`done`](Self::done)) is parked and queued again when `done` is called;
/// 4. an add after shutdown is ignored.
///
/// So one item is never handed to two workers at once. Clones share the queue.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use kubegen::workqueue::Queue;
///
/// let queue: Queue<String> = Queue::new();
/// queue.add("default/a".to_owned());
/// queue.add("default/a".to_owned()); // already queued: no-op
/// assert_eq!(queue.len(), 1);
///
/// let key = queue.get().await.unwrap();
/// // ... reconcile `key` ...
/// queue.done(&key);
///
/// queue.shut_down();
/// assert_eq!(queue.get().await, None);
/// # }
/// ```
pub struct Queue<T: QueueItem> {
    pub(crate) shared: Arc<Shared<T>>,
}

impl<T: QueueItem> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: QueueItem> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("Queue")
            .field("name", &self.shared.name)
            .field("len", &state.queue.len())
            .field("processing", &state.processing)
            .field("shutting_down", &state.shutting_down)
            .finish_non_exhaustive()
    }
}

impl<T: QueueItem> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: QueueItem> Queue<T> {
    /// An unnamed queue without metrics.
    pub fn new() -> Self {
        Self::with_config(QueueConfig::new())
    }

    /// A queue with the given name and metrics provider (the rate limiter of `config` is not
    /// used by a plain queue).
    pub fn with_config(config: QueueConfig<T>) -> Self {
        Self {
            shared: Shared::new(&config, false),
        }
    }

    /// Marks `item` as needing processing. Ignored after shutdown; a no-op when the item is
    /// already queued; parks the item until [`done`](Self::done) when it is being processed.
    pub fn add(&self, item: T) {
        self.shared.add(item);
    }

    /// The number of items queued for processing (parked and processing items excluded).
    /// For information only: do not gate `add` or `get` on it.
    pub fn len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    /// Whether no item is queued for processing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits for the next item and marks it as being processed; the caller must call
    /// [`done`](Self::done) with it. After shutdown, queued items are still handed out;
    /// `None` means the queue is shut down and empty, and the worker should stop.
    ///
    /// Cancel-safe: dropping the future never loses an item.
    pub async fn get(&self) -> Option<T> {
        self.shared.get().await
    }

    /// Marks `item` as processed. If it was added again meanwhile, it is queued again.
    /// Calling `done` for an item that is not being processed does nothing.
    pub fn done(&self, item: &T) {
        self.shared.done(item);
    }

    /// Stops accepting items and wakes every blocked [`get`](Self::get). Queued items are
    /// still handed out; items waiting for a delay are dropped.
    pub fn shut_down(&self) {
        self.shared.shut_down();
    }

    /// Like [`shut_down`](Self::shut_down), then waits until every item being processed is
    /// [`done`](Self::done). Workers must keep calling `done` or this waits forever; a
    /// concurrent [`shut_down`](Self::shut_down) ends the wait at once.
    pub async fn shut_down_with_drain(&self) {
        self.shared.shut_down_with_drain().await;
    }

    /// Whether [`shut_down`](Self::shut_down) or
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) was called.
    pub fn shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::test_support::RecordingProvider;
    use proptest::prelude::*;
    use std::collections::HashSet;

    #[tokio::test]
    async fn new_item_is_queued() {
        let queue = Queue::new();
        queue.add("a");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.len(), 0);
    }

    #[tokio::test]
    async fn queued_item_is_not_queued_twice() {
        let queue = Queue::new();
        queue.add("a");
        queue.add("b");
        queue.add("a");
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.get().await, Some("b"));
        assert!(queue.is_empty());
    }

    #[tokio::test]
    async fn add_while_processing_requeues_on_done() {
        let queue = Queue::new();
        queue.add("a");
        let item = queue.get().await.unwrap();
        queue.add("a");
        queue.add("a");
        assert_eq!(queue.len(), 0, "parked, not queued while processing");
        queue.done(&item);
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        assert_eq!(queue.len(), 0);
    }

    #[tokio::test]
    async fn add_after_done_behaves_like_first_add() {
        let queue = Queue::new();
        queue.add("a");
        let item = queue.get().await.unwrap();
        queue.done(&item);
        assert!(queue.shared.state.lock().items.is_empty());
        queue.add("a");
        assert_eq!(queue.get().await, Some("a"));
    }

    #[tokio::test]
    async fn add_after_shutdown_is_ignored_and_queue_drains() {
        let queue = Queue::new();
        queue.add(1);
        queue.add(2);
        queue.shut_down();
        queue.add(3);
        assert!(queue.shutting_down());
        assert_eq!(queue.get().await, Some(1));
        assert_eq!(queue.get().await, Some(2));
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test]
    async fn done_on_unknown_item_is_ignored() {
        let queue = Queue::new();
        queue.done(&7);
        queue.add(7);
        queue.done(&7); // queued, not processing: must not queue it a second time
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some(7));
        queue.done(&7);
        assert_eq!(queue.len(), 0);
    }

    #[tokio::test]
    async fn parked_item_is_handed_out_after_shutdown() {
        let queue = Queue::new();
        queue.add("a");
        let item = queue.get().await.unwrap();
        queue.add("a");
        queue.shut_down();
        queue.done(&item);
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shutdown_wakes_every_blocked_get() {
        let queue: Queue<u32> = Queue::new();
        let waiters: Vec<_> = (0..16)
            .map(|_| {
                let queue = queue.clone();
                tokio::spawn(async move { queue.get().await })
            })
            .collect();
        // Wait until all 16 are registered as blocked.
        tokio::time::timeout(Duration::from_secs(10), async {
            while queue.shared.state.lock().get_waiters < 16 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the gets never blocked");
        queue.shut_down();
        for waiter in waiters {
            let got = tokio::time::timeout(Duration::from_secs(10), waiter)
                .await
                .expect("a blocked get was not woken by shut_down")
                .unwrap();
            assert_eq!(got, None);
        }
    }

    #[tokio::test]
    async fn cancelled_get_loses_nothing() {
        use futures::FutureExt;
        let queue: Queue<u32> = Queue::new();
        assert_eq!(
            queue.get().now_or_never(),
            None,
            "nothing queued: get is pending"
        );
        assert_eq!(
            queue.shared.state.lock().get_waiters,
            0,
            "the dropped get unregistered"
        );
        queue.add(1);
        assert_eq!(queue.get().now_or_never(), Some(Some(1)));
        assert_eq!(queue.shared.state.lock().processing, 1);
    }

    #[tokio::test]
    async fn blocked_get_receives_a_later_add() {
        let queue: Queue<u32> = Queue::new();
        let worker = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        tokio::task::yield_now().await;
        queue.add(5);
        assert_eq!(worker.await.unwrap(), Some(5));
    }

    #[tokio::test]
    async fn drain_shutdown_waits_for_items_in_flight() {
        let queue: Queue<u32> = Queue::new();
        queue.add(1);
        queue.add(2);
        queue.add(3);
        let first = queue.get().await.unwrap();
        let second = queue.get().await.unwrap();
        let drain = tokio::spawn({
            let queue = queue.clone();
            async move { queue.shut_down_with_drain().await }
        });
        tokio::task::yield_now().await;
        assert!(queue.shutting_down());
        queue.add(4); // refused
        queue.done(&first);
        tokio::task::yield_now().await;
        assert!(!drain.is_finished(), "one item is still in flight");
        // Queued items are still handed out during the drain.
        let third = queue.get().await.unwrap();
        assert_eq!(third, 3);
        queue.done(&second);
        queue.done(&third);
        tokio::time::timeout(Duration::from_secs(10), drain)
            .await
            .expect("drain did not finish after the last done")
            .unwrap();
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test]
    async fn shut_down_ends_a_pending_drain() {
        let queue: Queue<u32> = Queue::new();
        queue.add(1);
        let _item = queue.get().await.unwrap();
        let drain = tokio::spawn({
            let queue = queue.clone();
            async move { queue.shut_down_with_drain().await }
        });
        tokio::task::yield_now().await;
        assert!(!drain.is_finished());
        queue.shut_down();
        tokio::time::timeout(Duration::from_secs(10), drain)
            .await
            .expect("shut_down did not end the drain")
            .unwrap();
    }

    #[tokio::test]
    async fn drain_with_nothing_in_flight_returns_at_once() {
        let queue: Queue<u32> = Queue::new();
        queue.add(1);
        queue.shut_down_with_drain().await;
        assert_eq!(queue.get().await, Some(1));
    }

    fn assert_close(actual: &[f64], expected: &[f64]) {
        assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
        for (a, e) in actual.iter().zip(expected) {
            assert!((a - e).abs() < 1e-9, "{actual:?} vs {expected:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn metrics_follow_a_scripted_sequence() {
        let provider = RecordingProvider::default();
        let queue: Queue<&str> = Queue::with_config(
            QueueConfig::new()
                .name("scripted")
                .metrics_provider(provider.clone()),
        );
        // Let the gauge task start: it ticks at t = 0, 500, 1000, 1500 ms.
        tokio::task::yield_now().await;
        queue.add("a");
        queue.add("b");
        queue.add("a"); // duplicate: not counted
        tokio::time::advance(Duration::from_millis(100)).await;
        let a = queue.get().await.unwrap(); // t=100: waited 100 ms
        queue.add("a"); // parked while processing: counted, dirty since t=100
        tokio::time::advance(Duration::from_millis(300)).await;
        queue.done(&a); // t=400: worked 300 ms, queued again behind b
        let b = queue.get().await.unwrap();
        assert_eq!(b, "b", "fair: b was queued first"); // waited 400 ms
        tokio::time::advance(Duration::from_millis(200)).await;
        let a = queue.get().await.unwrap(); // t=600: waited 500 ms since the parked add
        let snap = provider.snapshot("scripted");
        assert_eq!(snap.adds, 3);
        assert_eq!(snap.depth, 0);
        assert_close(&snap.latency, &[0.1, 0.4, 0.5]);
        assert_close(&snap.work_duration, &[0.3]);
        tokio::time::sleep(Duration::from_millis(1000)).await; // t=1600
        // At the t=1500 tick, b had run 1.1 s and a 0.9 s.
        let snap = provider.snapshot("scripted");
        assert_close(&[snap.unfinished_work_seconds], &[2.0]);
        assert_close(&[snap.longest_running_processor_seconds], &[1.1]);
        queue.done(&a);
        queue.done(&b);
        let snap = provider.snapshot("scripted");
        assert_close(&snap.work_duration, &[0.3, 1.0, 1.2]);
        assert_eq!(snap.retries, 0);
        assert_eq!(snap.depth, 0);
    }

    #[tokio::test]
    async fn unnamed_queue_records_no_metrics() {
        let provider = RecordingProvider::default();
        let queue: Queue<u8> =
            Queue::with_config(QueueConfig::new().metrics_provider(provider.clone()));
        queue.add(1);
        assert!(provider.names().is_empty());
        assert!(queue.shared.metrics.is_none());
    }

    #[tokio::test]
    async fn dropped_queue_stops_its_metrics_task() {
        let provider = RecordingProvider::default();
        let queue: Queue<u8> = Queue::with_config(
            QueueConfig::new()
                .name("dropped")
                .metrics_provider(provider),
        );
        let weak = Arc::downgrade(&queue.shared);
        let metrics = tokio::runtime::Handle::current().metrics();
        assert_eq!(metrics.num_alive_tasks(), 1);
        drop(queue);
        assert!(weak.upgrade().is_none(), "the task must not hold the queue");
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(metrics.num_alive_tasks(), 0);
    }

    /// The operations of the model test.
    #[derive(Debug, Clone)]
    enum Op {
        Add(u8),
        Get,
        /// Done for the n-th processing item (modulo their count).
        Done(usize),
        ShutDown,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u8..8).prop_map(Op::Add),
            3 => Just(Op::Get),
            3 => (0usize..8).prop_map(Op::Done),
            1 => Just(Op::ShutDown),
        ]
    }

    /// client-go's queue, written as directly as possible.
    #[derive(Default)]
    struct Model {
        queue: Vec<u8>,
        dirty: HashSet<u8>,
        processing: Vec<u8>,
        shutting_down: bool,
    }

    impl Model {
        fn add(&mut self, item: u8) {
            if self.shutting_down || self.dirty.contains(&item) {
                return;
            }
            self.dirty.insert(item);
            if !self.processing.contains(&item) {
                self.queue.push(item);
            }
        }
        fn get(&mut self) -> Option<u8> {
            if self.queue.is_empty() {
                return None;
            }
            let item = self.queue.remove(0);
            self.processing.push(item);
            self.dirty.remove(&item);
            Some(item)
        }
        fn done(&mut self, item: u8) {
            self.processing.retain(|p| *p != item);
            if self.dirty.contains(&item) {
                self.queue.push(item);
            }
        }
    }

    proptest! {
        #[test]
        fn queue_matches_the_client_go_model(ops in proptest::collection::vec(op(), 1..200)) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let queue: Queue<u8> = Queue::new();
            let mut model = Model::default();
            for op in ops {
                match op {
                    Op::Add(item) => {
                        queue.add(item);
                        model.add(item);
                    }
                    Op::Get => {
                        // Only call get when it cannot block forever.
                        if !model.queue.is_empty() || model.shutting_down {
                            let got = runtime.block_on(queue.get());
                            prop_assert_eq!(got, model.get());
                        }
                    }
                    Op::Done(n) => {
                        if !model.processing.is_empty() {
                            let item = model.processing[n % model.processing.len()];
                            queue.done(&item);
                            model.done(item);
                        }
                    }
                    Op::ShutDown => {
                        queue.shut_down();
                        model.shutting_down = true;
                    }
                }
                prop_assert_eq!(queue.len(), model.queue.len());
                prop_assert_eq!(queue.shutting_down(), model.shutting_down);
                let state = queue.shared.state.lock();
                prop_assert_eq!(state.processing, model.processing.len());
                // An item is never processing twice, and the table holds exactly the
                // dirty and processing items.
                let expected: HashSet<u8> =
                    model.dirty.iter().chain(model.processing.iter()).copied().collect();
                let actual: HashSet<u8> = state.items.keys().copied().collect();
                prop_assert_eq!(actual, expected);
            }
        }
    }
}
