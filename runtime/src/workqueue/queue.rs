//! [`Queue<T>`]: the fair, stingy work queue (client-go's `workqueue.Typed[T]`).
//!
//! The queue stores each item once, in a slot of a slab. Each item is *dirty* (needs
//! processing), *processing* (handed to a worker by [`Queue::get`], not yet
//! [`Queue::done`]), *waiting* (scheduled by a [`DelayingQueue`](super::DelayingQueue)), or a
//! combination; its slot lives exactly as long as one of these holds. A hash table maps items
//! to slots, and the FIFO order holds the slot numbers of the dirty items that are not being
//! processed. This gives client-go's four add cases:
//!
//! 1. a new item is queued;
//! 2. an item that is already queued is not queued twice;
//! 3. an item being processed is parked (marked dirty) and queued again when `done` is called;
//! 4. an add after shutdown is ignored.
//!
//! Hence one item is never handed to two workers at once.
//!
//! The hot path is cheap: items are hashed before the lock is taken; `add`, `get` and `done`
//! take the lock once each; `add` moves the item into its slot and `get` finds the slot
//! without hashing, so the only copy the queue makes is the one `get` hands out; `done`
//! drops a finished item after releasing the lock; the clock is read only when metrics are
//! recorded; and a `get` is woken only when one is blocked.
//!
//! All three queue types share this state behind one `Arc`, so a handle is cheap to clone and
//! every clone sees the same queue. Blocked [`Queue::get`] calls wait on a
//! [`tokio::sync::Notify`]; nothing polls.

use std::collections::VecDeque;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry as TableEntry;
use parking_lot::Mutex;
use slab::Slab;
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

/// One item and its bookkeeping. A slot exists while the item is dirty, processing or
/// waiting.
#[derive(Debug)]
pub(crate) struct Slot<T> {
    pub(crate) item: T,
    /// The item's hash (the table's key; kept so the table can grow and drop the slot
    /// without hashing the item again).
    hash: u64,
    /// Needs processing (client-go's `dirty` set).
    pub(crate) dirty: bool,
    /// Handed out by `get`, `done` not yet called (client-go's `processing` set).
    pub(crate) processing: bool,
    /// Scheduled by `add_after`; the earliest ready time wins.
    pub(crate) waiting: Option<Waiting>,
}

/// The metrics timestamps of one slot, kept apart from [`Slot`] so a queue without metrics
/// keeps its slots small and never touches them.
#[derive(Debug, Default, Clone, Copy)]
struct Stamps {
    /// When the item became dirty.
    added_at: Option<Instant>,
    /// When the item was handed to a worker.
    started_at: Option<Instant>,
}

impl<T> Slot<T> {
    fn is_idle(&self) -> bool {
        !self.dirty && !self.processing && self.waiting.is_none()
    }
}

/// Everything guarded by the queue's lock.
///
/// `repr(C)` keeps the fields every `add`, `get` and `done` touches first, next to the lock
/// word, so a hand-over of the lock between threads moves as few cache lines as possible;
/// the delaying and metrics fields come last.
#[repr(C)]
pub(crate) struct State<T> {
    /// Slots of the dirty items that are not being processed, in the order they are handed
    /// out.
    pub(crate) queue: VecDeque<usize>,
    /// The slot of each item, by the item's hash.
    table: HashTable<usize>,
    /// Every item that is dirty, processing or waiting.
    pub(crate) slots: Slab<Slot<T>>,
    /// How many items are being processed.
    pub(crate) processing: usize,
    /// How many `get` calls are registered with `get_notify`; adds skip the wake-up when
    /// nobody waits.
    get_waiters: usize,
    pub(crate) shutting_down: bool,
    /// `shut_down_with_drain` is waiting for the processing items.
    drain: bool,
    /// The delaying queue's timer heap (empty for a plain queue).
    pub(crate) waiting: WaitHeap,
    /// Metrics timestamps, by slot number (used only when the queue records metrics).
    stamps: Vec<Stamps>,
}

impl<T: Eq> State<T> {
    /// The slot of `item`, created idle (and owning `item`) if the item has none. If it has
    /// one, `item` is handed back so the caller can drop it after releasing the lock.
    pub(crate) fn slot_for(&mut self, hash: u64, item: T) -> (usize, Option<T>) {
        let Self { table, slots, .. } = self;
        let entry = table.entry(
            hash,
            |&i| {
                slots
                    .get(i)
                    .is_some_and(|slot| slot.hash == hash && slot.item == item)
            },
            |&i| slots.get(i).map_or(0, |slot| slot.hash),
        );
        match entry {
            TableEntry::Occupied(occupied) => (*occupied.get(), Some(item)),
            TableEntry::Vacant(vacant) => {
                let i = slots.insert(Slot {
                    item,
                    hash,
                    dirty: false,
                    processing: false,
                    waiting: None,
                });
                vacant.insert(i);
                (i, None)
            }
        }
    }

    /// Ends the processing of `item` (hash `hash`), with one table lookup. Returns `None`
    /// if the item is not being processed. A slot that is no longer needed is freed, and its
    /// item returned in [`Finished::released`].
    fn finish(&mut self, hash: u64, item: &T) -> Option<Finished<T>> {
        let Self { table, slots, .. } = self;
        let found = table
            .find_entry(hash, |&i| {
                slots
                    .get(i)
                    .is_some_and(|slot| slot.hash == hash && slot.item == *item)
            })
            .ok()?;
        let i = *found.get();
        let slot = slots.get_mut(i)?;
        if !slot.processing {
            return None;
        }
        slot.processing = false;
        if slot.is_idle() {
            found.remove();
            return Some(Finished {
                slot: i,
                requeue: false,
                released: slots.try_remove(i).map(|slot| slot.item),
            });
        }
        Some(Finished {
            slot: i,
            requeue: slot.dirty,
            released: None,
        })
    }

    /// The metrics timestamps of slot `i`.
    fn stamps_mut(&mut self, i: usize) -> &mut Stamps {
        if self.stamps.len() <= i {
            self.stamps.resize(i + 1, Stamps::default());
        }
        &mut self.stamps[i]
    }

    /// Frees slot `i` if its item is no longer dirty, processing or waiting, and returns
    /// the item so the caller can drop it after releasing the lock.
    fn release_if_idle(&mut self, i: usize) -> Option<T> {
        let slot = self.slots.get(i)?;
        if !slot.is_idle() {
            return None;
        }
        if let Ok(found) = self.table.find_entry(slot.hash, |&j| j == i) {
            found.remove();
        }
        self.slots.try_remove(i).map(|slot| slot.item)
    }
}

/// What [`State::finish`] did.
struct Finished<T> {
    /// The item's slot (already free when `released` is set).
    slot: usize,
    /// The item was added while it was processed: queue the slot again.
    requeue: bool,
    /// The item of the freed slot, to be dropped after the lock is released.
    released: Option<T>,
}

/// Keeps its content on cache lines of its own: the lock and the state it guards are written
/// by every `add`, `get` and `done`, and must not share a line with the fields read without
/// the lock (the hasher, the metrics handles, the signals).
#[repr(align(128))]
pub(crate) struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The state and signals shared by every handle of one queue.
pub(crate) struct Shared<T> {
    pub(crate) state: Padded<Mutex<State<T>>>,
    /// Hashes items before the lock is taken.
    hasher: foldhash::fast::RandomState,
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
            state: Padded(Mutex::new(State {
                queue: VecDeque::new(),
                slots: Slab::new(),
                table: HashTable::new(),
                stamps: Vec::new(),
                processing: 0,
                shutting_down: false,
                drain: false,
                get_waiters: 0,
                waiting: WaitHeap::default(),
            })),
            hasher: foldhash::fast::RandomState::default(),
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

    /// The hash of `item` (computed before taking the lock).
    pub(crate) fn hash(&self, item: &T) -> u64 {
        self.hasher.hash_one(item)
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

    /// Marks the item in slot `i` dirty and queues it unless it is already dirty or being
    /// processed. Returns whether a blocked `get` should be woken.
    ///
    /// A waiting schedule of the item (from `add_after`) is cancelled: the immediate add
    /// supersedes the scheduled one (see [`RateLimitingQueue`](super::RateLimitingQueue)).
    pub(crate) fn mark_dirty(&self, state: &mut State<T>, i: usize) -> bool {
        let Some(slot) = state.slots.get_mut(i) else {
            return false;
        };
        if slot.waiting.take().is_some() {
            state.waiting.live -= 1;
        }
        if slot.dirty {
            return false;
        }
        slot.dirty = true;
        if let Some(metrics) = &self.metrics {
            let processing = slot.processing;
            state.stamps_mut(i).added_at = Some(Instant::now());
            metrics.add();
            if processing {
                return false;
            }
        } else if slot.processing {
            return false;
        }
        state.queue.push_back(i);
        state.get_waiters > 0
    }

    pub(crate) fn add(&self, item: T) {
        let hash = self.hash(&item);
        let (wake, duplicate) = {
            let mut state = self.state.lock();
            if state.shutting_down {
                return;
            }
            let (i, duplicate) = state.slot_for(hash, item);
            (self.mark_dirty(&mut state, i), duplicate)
        };
        drop(duplicate);
        if wake {
            self.get_notify.notify_one();
        }
    }

    /// Takes the head of the queue, marks it processing and returns a copy of its item.
    fn pop_locked(&self, state: &mut State<T>) -> Option<T> {
        loop {
            let i = state.queue.pop_front()?;
            let Some(slot) = state.slots.get_mut(i) else {
                // Every queued slot exists; skip rather than panic if that ever breaks.
                tracing::warn!(queue = %self.name, "queued slot had no item");
                continue;
            };
            slot.dirty = false;
            slot.processing = true;
            let item = slot.item.clone();
            if let Some(metrics) = &self.metrics {
                let now = Instant::now();
                let stamps = state.stamps_mut(i);
                stamps.started_at = Some(now);
                metrics.get(stamps.added_at.take(), now);
            }
            state.processing += 1;
            return Some(item);
        }
    }

    pub(crate) async fn get(self: &Arc<Self>) -> Option<T> {
        self.ensure_background();
        let mut registration = GetRegistration {
            shared: self,
            registered: false,
        };
        // Fast path: an item is queued, no wake-up registration needed.
        if let Some(item) = self.pop_locked(&mut self.state.lock()) {
            return Some(item);
        }
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
        let hash = self.hash(item);
        let mut state = self.state.lock();
        let Some(finished) = state.finish(hash, item) else {
            drop(state);
            tracing::debug!(queue = %self.name, "done called for an item that is not being processed");
            return;
        };
        state.processing -= 1;
        if let Some(metrics) = &self.metrics {
            let started_at = state.stamps_mut(finished.slot).started_at.take();
            metrics.done(started_at, Instant::now());
        }
        let mut wake = false;
        if finished.requeue {
            state.queue.push_back(finished.slot);
            wake = state.get_waiters > 0;
        }
        let drained = state.drain && state.processing == 0;
        drop(state);
        drop(finished.released);
        if wake {
            self.get_notify.notify_one();
        }
        if drained {
            self.drain_notify.notify_waiters();
        }
    }

    /// Marks the queue shutting down; `drain` records whether a drain is waiting.
    fn begin_shutdown(&self, drain: bool) {
        let mut released = Vec::new();
        {
            let mut state = self.state.lock();
            state.shutting_down = true;
            state.drain = drain;
            // Items still waiting for their delay are dropped, as in client-go.
            if state.waiting.live > 0 {
                let mut idle = Vec::new();
                for (i, slot) in &mut state.slots {
                    if slot.waiting.take().is_some() && slot.is_idle() {
                        idle.push(i);
                    }
                }
                released.extend(idle.into_iter().filter_map(|i| state.release_if_idle(i)));
            }
            state.waiting.clear();
        }
        drop(released);
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
                .slots
                .iter()
                .filter(|(_, slot)| slot.processing)
                .filter_map(|(i, _)| state.stamps.get(i).and_then(|stamps| stamps.started_at))
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
        assert!(queue.shared.state.lock().slots.is_empty());
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
                let actual: HashSet<u8> = state.slots.iter().map(|(_, slot)| slot.item).collect();
                prop_assert_eq!(actual, expected);
                prop_assert_eq!(state.table.len(), state.slots.len());
            }
        }
    }
}
