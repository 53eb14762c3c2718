//! The machine behind [`Queue`](super::Queue), [`DelayingQueue`](super::DelayingQueue) and
//! [`RateLimitingQueue`](super::RateLimitingQueue): one lock-guarded state, written once,
//! with its reasoning beside it (as `cache/queue_core.rs` is for the FIFOs). The three
//! handles only forward to [`Core`].
//!
//! # Items and their states
//!
//! The queue stores each item once, in a slot of a slab. Each item is *dirty* (needs
//! processing), *processing* (handed to a worker by `get`, not yet `done`), *waiting*
//! (scheduled by `add_after`), or a combination; its slot lives exactly as long as one of
//! these holds. A hash table maps items to slots, and the FIFO order holds the slot numbers
//! of the dirty items that are not being processed. This gives client-go's four add cases:
//!
//! 1. a new item is queued;
//! 2. an item that is already queued is not queued twice;
//! 3. an item being processed is parked (marked dirty) and queued again when `done` is called;
//! 4. an add after shutdown is ignored.
//!
//! Hence one item is never handed to two workers at once.
//!
//! # Delays
//!
//! Scheduled items live in a min-heap of slot numbers ordered by ready time. An item that is
//! already waiting keeps its **earliest** ready time: scheduling it again later is a no-op,
//! scheduling it sooner moves it forward (the old heap entry goes stale; a sequence number
//! tells live entries from stale ones, and stale entries are compacted once they dominate).
//! One timer task per delaying queue sleeps with tokio's clock until the next ready time (or
//! until an earlier item arrives) and then marks the ready items dirty, where the usual
//! de-duplication applies. There is no polling loop. The timer task holds only a [`Weak`]
//! reference and a cancellation token: it ends on shutdown and when the last handle is
//! dropped. Items still waiting at shutdown are dropped, as in client-go. A plain `add` of a
//! waiting item cancels the scheduled add and queues it now (kubernetes issue 132805; see
//! [`RateLimitingQueue`](super::RateLimitingQueue)).
//!
//! # Cost
//!
//! The hot path is cheap: items are hashed before the lock is taken; `get` and `done` take
//! the lock once each, and so does an `add` on the thread that takes the items; an `add`
//! from another thread while a worker is busy leaves the item in the intake (`intake.rs`),
//! which the next critical section applies as a batch, so the state's cache lines stay with
//! the worker's core; `add` moves the item into its slot and `get` finds the slot
//! without hashing, so the only copy the queue makes is the one `get` hands out; that copy
//! is written into an item the queue let go of earlier (a finished one, or a duplicate add)
//! with [`Clone::clone_from`], so for `String` keys a round trip allocates nothing (the
//! channel it is measured against moves its one `String`); a finished item beyond the few
//! kept is dropped after releasing the lock. (A kept item's old content is dropped by
//! `clone_from` under the lock: key types own plain data, and dropping one must not call
//! back into its queue.) The clock is read only when metrics are
//! recorded; and a `get` is woken only when one is blocked. Blocked `get` calls park their
//! waker in a list kept under the same lock (`waiters.rs`), so parking and waking take no
//! second lock, and an add takes a parked waker out as it wakes it: a burst of adds into an
//! idle queue wakes each parked worker once instead of signalling once per item. Nothing
//! polls.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::hash::BuildHasher;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry as TableEntry;
use parking_lot::{Mutex, MutexGuard};
use slab::Slab;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::QueueConfig;
use super::intake::{Intake, Pending};
use super::item::QueueItem;
use super::metrics::QueueMetrics;
use super::ready::{ReadyQueue, Ticketed};
use super::waiters::Waiters;

/// How often the unfinished-work gauges are refreshed (client-go's
/// `defaultUnfinishedWorkUpdatePeriod`).
pub(super) const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// One item and its bookkeeping. A slot exists while the item is dirty, processing or
/// waiting.
///
/// Kept small (48 bytes for a `String` item) because `get` and `done` touch one slot per
/// item and a backlog of thousands of slots should stay in the core's cache: the schedule
/// of a waiting item lives in [`WaitHeap`], the metrics timestamps in [`Stamps`].
#[derive(Debug)]
pub(super) struct Slot<T> {
    pub(super) item: T,
    /// The item's hash (the table's key; kept so the table can grow and drop the slot
    /// without hashing the item again).
    hash: u64,
    /// Needs processing (client-go's `dirty` set).
    pub(super) dirty: bool,
    /// Handed out by `get`, `done` not yet called (client-go's `processing` set).
    pub(super) processing: bool,
    /// Scheduled by `add_after` (its [`Waiting`] is in [`WaitHeap::schedules`]).
    pub(super) waiting: bool,
    /// The priority it is (or will be) queued at; the highest asked for wins.
    priority: i32,
    /// The ticket of its entry in the ready queue while it is queued, else [`NO_TICKET`].
    ticket: u64,
}

/// [`Slot::ticket`] of a slot that is not queued (tickets count up from 0 and never reach
/// it).
const NO_TICKET: u64 = u64::MAX;

impl<T> Ticketed for &Slot<T> {
    fn ticket(&self) -> Option<u64> {
        (self.ticket != NO_TICKET).then_some(self.ticket)
    }
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
        !self.dirty && !self.processing && !self.waiting
    }
}

/// Everything guarded by the queue's lock.
///
/// `repr(C)` keeps the fields every `add`, `get` and `done` touches first, next to the lock
/// word, so a hand-over of the lock between threads moves as few cache lines as possible;
/// the delaying and metrics fields come last.
#[repr(C)]
pub(super) struct State<T> {
    /// Slots of the dirty items that are not being processed, in the order they are handed
    /// out (by priority, then first in first out).
    pub(super) queue: ReadyQueue,
    /// The slot of each item, by the item's hash.
    pub(super) table: HashTable<usize>,
    /// Every item that is dirty, processing or waiting.
    pub(super) slots: Slab<Slot<T>>,
    /// How many items are being processed.
    pub(super) processing: usize,
    /// The blocked `get` calls; adds skip the wake-up when nobody is parked.
    pub(super) waiters: Waiters,
    pub(super) shutting_down: bool,
    /// `shut_down_with_drain` is waiting for the processing items.
    drain: bool,
    /// The delaying queue's timer heap (empty for a plain queue).
    pub(super) waiting: WaitHeap,
    /// Metrics timestamps, by slot number (used only when the queue records metrics).
    stamps: Vec<Stamps>,
    /// Items the queue let go of (finished, or duplicates of queued ones), kept to be
    /// overwritten by the copies `get` hands out ([`Clone::clone_from`] reuses a `String`'s
    /// buffer): a key then costs no allocation per round trip. At most [`SPARE_ITEMS`].
    spare: Vec<T>,
    /// The buffer the intake's adds are moved into to be applied (empty between critical
    /// sections; swapped with the intake's, so neither side allocates in the steady state).
    batch: Vec<Pending<T>>,
}

/// How many let-go items a queue keeps for reuse (see [`State::spare`]); more would only
/// hold memory, as a worker hands each copy back before it takes the next.
const SPARE_ITEMS: usize = 16;

impl<T> State<T> {
    /// Keeps `item` for reuse if there is room; otherwise hands it back, to be dropped after
    /// the lock is released.
    fn keep_spare(&mut self, item: T) -> Option<T> {
        if self.spare.len() < SPARE_ITEMS {
            self.spare.push(item);
            None
        } else {
            Some(item)
        }
    }
}

impl<T: Eq> State<T> {
    /// The slot of `item`, created idle (and owning `item`) if the item has none. If it has
    /// one, `item` is handed back so the caller can drop it after releasing the lock.
    pub(super) fn slot_for(&mut self, hash: u64, item: T) -> (usize, Option<T>) {
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
                    waiting: false,
                    priority: 0,
                    ticket: NO_TICKET,
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
pub(super) struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The state and signals shared by every handle of one queue.
pub(super) struct Core<T> {
    pub(super) state: Padded<Mutex<State<T>>>,
    /// Adds not applied yet (see `intake.rs`); on cache lines of their own, apart from the
    /// state lock's.
    pub(super) intake: Padded<Intake<T>>,
    /// Set by shutdown, so adds after it are dropped without touching the intake.
    closed: AtomicBool,
    /// Hashes items before the lock is taken.
    hasher: foldhash::fast::RandomState,
    /// Wakes `shut_down_with_drain` when the last processing item is done.
    drain_notify: Notify,
    /// The delaying queue's timer task, if this queue is a delaying queue.
    pub(super) timer: Option<TimerHandle>,
    /// Cancelled on shutdown and when the last handle is dropped: stops background tasks.
    pub(super) cancel: CancellationToken,
    pub(super) metrics: Option<QueueMetrics>,
    metrics_task_started: AtomicBool,
    pub(super) name: String,
}

impl<T> Drop for Core<T> {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl<T: QueueItem> Core<T> {
    pub(super) fn new(config: &QueueConfig<T>, delaying: bool) -> Arc<Self> {
        let metrics = match (&config.metrics_provider, config.name.is_empty()) {
            (Some(provider), false) => Some(QueueMetrics::new(provider.as_ref(), &config.name)),
            _ => None,
        };
        // The waiter list publishes its parked count; the intake's adds read it.
        let parked = Arc::new(AtomicUsize::new(0));
        let shared = Arc::new(Self {
            state: Padded(Mutex::new(State {
                queue: ReadyQueue::default(),
                slots: Slab::new(),
                table: HashTable::new(),
                stamps: Vec::new(),
                processing: 0,
                shutting_down: false,
                drain: false,
                waiters: Waiters::new(Arc::clone(&parked)),
                waiting: WaitHeap::default(),
                spare: Vec::new(),
                batch: Vec::new(),
            })),
            intake: Padded(Intake::new(parked)),
            closed: AtomicBool::new(false),
            hasher: foldhash::fast::RandomState::default(),
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
    pub(super) fn hash(&self, item: &T) -> u64 {
        self.hasher.hash_one(item)
    }

    /// Starts the background tasks (delay timer, unfinished-work gauges) if they are needed
    /// and a tokio runtime is available. Called from constructors and from every `get`/
    /// `add_after`, so a queue built outside a runtime starts them once one is in reach.
    pub(super) fn ensure_background(self: &Arc<Self>) {
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

    /// Marks the item in slot `i` dirty at `priority` and queues it unless it is already
    /// dirty or being processed. Returns whether the ready queue changed (an item was
    /// queued or moved up), i.e. whether a blocked `get` should be woken.
    ///
    /// A waiting schedule of the item (from `add_after`) is cancelled: the immediate add
    /// supersedes the scheduled one (see [`RateLimitingQueue`](super::RateLimitingQueue)).
    /// An item already dirty keeps its place unless `priority` is higher: then a queued
    /// item moves up, and a parked one will be queued at the higher priority.
    #[inline]
    pub(super) fn mark_dirty(&self, state: &mut State<T>, i: usize, priority: i32) -> bool {
        let Some(slot) = state.slots.get_mut(i) else {
            return false;
        };
        if slot.waiting {
            slot.waiting = false;
            state.waiting.unschedule(i);
        }
        if slot.dirty {
            if priority > slot.priority {
                slot.priority = priority;
                if slot.ticket != NO_TICKET {
                    slot.ticket = state.queue.push(i, priority, true);
                    return true;
                }
            }
            return false;
        }
        slot.dirty = true;
        slot.priority = priority;
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
        let Some(slot) = state.slots.get_mut(i) else {
            return false;
        };
        slot.ticket = state.queue.push(i, priority, false);
        true
    }

    /// Takes the state lock and applies the adds waiting in the intake, so whatever the
    /// caller does next sees every add that returned before (see `intake.rs`). Every
    /// critical section of the queue starts here.
    #[inline]
    pub(super) fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.applied(self.state.lock())
    }

    /// `state`, just locked, with the intake's adds applied.
    #[inline]
    fn applied<'a>(&self, mut state: MutexGuard<'a, State<T>>) -> MutexGuard<'a, State<T>> {
        self.intake.record_holder();
        if self.intake.has_pending() {
            self.apply_intake(&mut state);
        }
        state
    }

    /// Applies the intake's adds in the order they were made, each exactly as a direct
    /// add would be. Adds that arrive after shutdown are dropped, and so are duplicates
    /// beyond the kept spare items: under the lock (see [`State::spare`] on why that is
    /// harmless for key types).
    fn apply_intake(&self, state: &mut State<T>) {
        let mut batch = std::mem::take(&mut state.batch);
        self.intake.take_into(&mut batch);
        for Pending {
            hash,
            item,
            priority,
        } in batch.drain(..)
        {
            if state.shutting_down {
                continue;
            }
            let (i, duplicate) = state.slot_for(hash, item);
            self.mark_dirty(state, i, priority);
            if let Some(duplicate) = duplicate {
                drop(state.keep_spare(duplicate));
            }
        }
        state.batch = batch;
    }

    /// The waker of one parked `get`, if `queued` (an item was just queued) and one is
    /// parked; the caller wakes it after releasing the lock.
    #[inline]
    fn waker_for(state: &mut State<T>, queued: bool) -> Option<Waker> {
        if queued && state.waiters.parked() > 0 {
            state.waiters.wake_one()
        } else {
            None
        }
    }

    pub(super) fn add(&self, item: T, priority: i32) {
        let hash = self.hash(&item);
        let (state, item) = if self.metrics.is_some() {
            (self.lock(), item)
        } else if !self.intake.held_elsewhere()
            && let Some(state) = self.state.try_lock()
        {
            // This thread took the lock last and nobody holds it: apply the add at once.
            (self.applied(state), item)
        } else {
            // Another thread works the queue: leave the add in the intake for whoever takes
            // the lock next, instead of waiting for the lock and pulling the state's cache
            // lines over (see `intake.rs`).
            match self.add_to_intake(hash, item, priority) {
                Ok(()) => return,
                // Full: this add applies the intake and itself.
                Err(item) => (self.lock(), item),
            }
        };
        self.add_locked(state, hash, item, priority);
    }

    /// The direct add, under the lock.
    fn add_locked(&self, mut state: MutexGuard<'_, State<T>>, hash: u64, item: T, priority: i32) {
        if state.shutting_down {
            return;
        }
        let (i, duplicate) = state.slot_for(hash, item);
        let queued = self.mark_dirty(&mut state, i, priority);
        let duplicate = duplicate.and_then(|item| state.keep_spare(item));
        let waker = Self::waker_for(&mut state, queued);
        drop(state);
        drop(duplicate);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Leaves an add in the intake, and wakes a parked `get` if there is one; hands the
    /// item back if the intake is full.
    fn add_to_intake(&self, hash: u64, item: T, priority: i32) -> Result<(), T> {
        if self.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        let pending = Pending {
            hash,
            item,
            priority,
        };
        match self.intake.push(pending) {
            Ok(false) => Ok(()),
            Ok(true) => {
                // Whoever applied the intake (this lock, or another thread's critical
                // section since the push) may have queued the item: wake a parked `get` for
                // every queued item no woken `get` is already on its way to take.
                let waker = {
                    let mut state = self.lock();
                    let unclaimed = state.queue.len() > state.waiters.woken();
                    Self::waker_for(&mut state, unclaimed)
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
                Ok(())
            }
            Err(pending) => Err(pending.item),
        }
    }

    /// Takes the head of the queue, marks it processing and returns a copy of its item.
    fn pop_locked(&self, state: &mut State<T>) -> Option<T> {
        loop {
            let State {
                queue,
                slots,
                spare,
                ..
            } = &mut *state;
            let i = queue.pop(|i| slots.get(i))?;
            let Some(slot) = slots.get_mut(i) else {
                // Every queued slot exists; skip rather than panic if that ever breaks.
                tracing::warn!(queue = %self.name, "queued slot had no item");
                continue;
            };
            slot.ticket = NO_TICKET;
            slot.dirty = false;
            slot.processing = true;
            // The copy handed out goes into a let-go item's memory where there is one.
            let item = match spare.pop() {
                Some(mut copy) => {
                    copy.clone_from(&slot.item);
                    copy
                }
                None => slot.item.clone(),
            };
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

    pub(super) async fn get(self: &Arc<Self>) -> Option<T> {
        self.ensure_background();
        let mut get = PendingGet {
            core: self,
            key: None,
        };
        std::future::poll_fn(|cx| get.poll(cx)).await
    }

    pub(super) fn done(&self, item: &T) {
        let hash = self.hash(item);
        let mut state = self.lock();
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
        let mut waker = None;
        if finished.requeue {
            let priority = state
                .slots
                .get(finished.slot)
                .map_or(0, |slot| slot.priority);
            let ticket = state.queue.push(finished.slot, priority, false);
            if let Some(slot) = state.slots.get_mut(finished.slot) {
                slot.ticket = ticket;
            }
            waker = Self::waker_for(&mut state, true);
        }
        let drained = state.drain && state.processing == 0;
        let released = finished.released.and_then(|item| state.keep_spare(item));
        drop(state);
        drop(released);
        if let Some(waker) = waker {
            waker.wake();
        }
        if drained {
            self.drain_notify.notify_waiters();
        }
    }

    /// Marks the queue shutting down; `drain` records whether a drain is waiting.
    fn begin_shutdown(&self, drain: bool) {
        let mut released = Vec::new();
        let wakers = {
            let mut state = self.lock();
            self.closed.store(true, Ordering::Release);
            state.shutting_down = true;
            state.drain = drain;
            // Items still waiting for their delay are dropped, as in client-go.
            if state.waiting.live > 0 {
                let mut idle = Vec::new();
                for (i, slot) in &mut state.slots {
                    if std::mem::take(&mut slot.waiting) && slot.is_idle() {
                        idle.push(i);
                    }
                }
                released.extend(idle.into_iter().filter_map(|i| state.release_if_idle(i)));
            }
            state.waiting.clear();
            state.waiters.wake_all()
        };
        drop(released);
        self.cancel.cancel();
        wakers.into_iter().for_each(Waker::wake);
        self.drain_notify.notify_waiters();
    }

    pub(super) fn shut_down(&self) {
        self.begin_shutdown(false);
    }

    pub(super) async fn shut_down_with_drain(&self) {
        self.begin_shutdown(true);
        loop {
            let mut notified = pin!(self.drain_notify.notified());
            {
                let state = self.lock();
                if state.processing == 0 || !state.drain {
                    return;
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// The number of items queued for processing.
    pub(super) fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Whether shutdown has begun.
    pub(super) fn shutting_down(&self) -> bool {
        self.lock().shutting_down
    }

    /// How many items wait for their delay to pass.
    pub(super) fn waiting_len(&self) -> usize {
        self.lock().waiting.live
    }

    /// Publishes the summed and the longest age of the work in progress.
    fn update_unfinished_work(&self) {
        let Some(metrics) = &self.metrics else {
            return;
        };
        let now = Instant::now();
        let (total, longest) = {
            let state = self.lock();
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

/// One `get` call: polls the queue, parking in [`State::waiters`] while it is empty (see
/// `waiters.rs`).
struct PendingGet<'a, T: QueueItem> {
    core: &'a Core<T>,
    /// Its entry in [`State::waiters`], while it has one.
    key: Option<usize>,
}

impl<T: QueueItem> PendingGet<'_, T> {
    /// Takes the next item, or parks. One lock acquisition either way; a `get` that finds an
    /// item at once never touches the waiter list.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.core.lock();
        self.poll_locked(&mut state, cx)
    }

    /// The critical section of [`poll`](Self::poll), apart so a test can run it with an add
    /// landing in the intake between `lock` and parking.
    fn poll_locked(&mut self, state: &mut State<T>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let core = self.core;
        let mut item = core.pop_locked(state);
        if item.is_none() && !state.shutting_down {
            // Parked in the same critical section that saw the queue empty: no direct add
            // is missed. `park` publishes the parked count before the intake is looked at
            // again, so an add that went into the intake meanwhile is not missed either
            // (`intake.rs`, "No lost wake-up").
            self.key = Some(state.waiters.park(self.key, cx.waker()));
            if !core.intake.has_pending() {
                return Poll::Pending;
            }
            core.apply_intake(state);
            item = core.pop_locked(state);
            if item.is_none() {
                return Poll::Pending;
            }
        }
        if let Some(key) = self.key.take() {
            state.waiters.remove(key);
        }
        Poll::Ready(item)
    }
}

impl<T: QueueItem> Drop for PendingGet<'_, T> {
    /// A cancelled `get` leaves the waiter list; if it had been woken, it hands the wake-up
    /// on to the next parked `get` while items are queued, so no item waits for nobody.
    fn drop(&mut self) {
        let Some(key) = self.key else {
            return;
        };
        let waker = {
            let mut state = self.core.lock();
            let owed = state.waiters.remove(key) && state.queue.len() > 0;
            Core::waker_for(&mut state, owed)
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Refreshes the unfinished-work gauges until shutdown or until every handle is dropped.
async fn unfinished_work_loop<T: QueueItem>(shared: Weak<Core<T>>, cancel: CancellationToken) {
    let mut ticker = tokio::time::interval(UNFINISHED_WORK_UPDATE_PERIOD);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.update_unfinished_work();
    }
}

/// Delays beyond this are clamped, so `Instant + delay` cannot overflow (about 30 years).
const MAX_DELAY: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// An item's scheduled ready time; `seq` identifies its heap entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Waiting {
    ready_at: Instant,
    seq: u64,
    /// The priority it is queued at when ready (the highest asked for).
    priority: i32,
}

/// A heap entry: the slot of the item scheduled at `ready_at`. The entry is live while the
/// slot's [`Waiting::seq`] equals `seq` (sequence numbers are never reused, so a stale entry
/// never matches a slot that was freed and reused).
pub(super) struct HeapEntry {
    ready_at: Instant,
    seq: u64,
    slot: usize,
}

impl PartialEq for HeapEntry {
    fn eq(&self, other: &Self) -> bool {
        self.ready_at == other.ready_at && self.seq == other.seq
    }
}
impl Eq for HeapEntry {}
impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapEntry {
    /// Reversed, so the std max-heap pops the earliest ready time (then the oldest entry).
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.ready_at, other.seq).cmp(&(self.ready_at, self.seq))
    }
}

/// The timer heap. Entries whose item was re-scheduled earlier, added directly, or dropped
/// stay in the heap as stale entries until popped or compacted; an entry is live when the
/// item's slot holds the entry's [`Waiting::seq`].
#[derive(Default)]
pub(super) struct WaitHeap {
    pub(super) heap: BinaryHeap<HeapEntry>,
    /// The schedule of each waiting item, by slot number: `Some` exactly for the slots with
    /// [`Slot::waiting`] set (kept here so the slots every `get` and `done` touch stay
    /// small).
    schedules: Vec<Option<Waiting>>,
    next_seq: u64,
    /// Items whose slot has `waiting` set.
    pub(super) live: usize,
}

impl WaitHeap {
    pub(super) fn clear(&mut self) {
        self.heap.clear();
        self.schedules.clear();
        self.live = 0;
    }

    /// The schedule of slot `slot`, if it is waiting.
    fn schedule(&self, slot: usize) -> Option<Waiting> {
        self.schedules.get(slot).copied().flatten()
    }

    /// Records the schedule of slot `slot` (the caller sets [`Slot::waiting`] and counts it
    /// in `live`).
    fn set_schedule(&mut self, slot: usize, waiting: Waiting) {
        if self.schedules.len() <= slot {
            self.schedules.resize(slot + 1, None);
        }
        self.schedules[slot] = Some(waiting);
    }

    /// Forgets the schedule of slot `slot`, whose [`Slot::waiting`] the caller clears.
    fn unschedule(&mut self, slot: usize) {
        if let Some(schedule) = self.schedules.get_mut(slot) {
            *schedule = None;
        }
        self.live -= 1;
    }

    fn next_ready_at(&self) -> Option<Instant> {
        self.heap.peek().map(|entry| entry.ready_at)
    }
}

/// The delaying queue's timer task handle.
#[derive(Debug, Default)]
pub(super) struct TimerHandle {
    /// Wakes the timer task when a new earliest ready time arrives.
    notify: Arc<Notify>,
    started: AtomicBool,
}

impl TimerHandle {
    /// Spawns the timer task once, if a tokio runtime is available.
    pub(super) fn ensure_started<T: QueueItem>(&self, shared: &Arc<Core<T>>) {
        if self.started.load(Ordering::Acquire) {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self
            .started
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            handle.spawn(timer_loop(
                Arc::downgrade(shared),
                Arc::clone(&self.notify),
                shared.cancel.clone(),
            ));
        }
    }
}

/// Sleeps until the next ready time, adds the ready items, repeats. Holds no strong
/// reference to the queue while sleeping.
async fn timer_loop<T: QueueItem>(
    shared: Weak<Core<T>>,
    notify: Arc<Notify>,
    cancel: CancellationToken,
) {
    loop {
        let next = match shared.upgrade() {
            Some(shared) => shared.fire_ready(Instant::now()),
            None => return,
        };
        // `notify_one` stores a permit, so a wake-up sent since `fire_ready` is not lost.
        let notified = notify.notified();
        match next {
            Some(at) => tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                () = tokio::time::sleep_until(at) => {}
                () = notified => {}
            },
            None => tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                () = notified => {}
            },
        }
    }
}

impl<T: QueueItem> Core<T> {
    /// Schedules `item` to be added at `priority` after `delay`.
    pub(super) fn add_after(self: &Arc<Self>, item: T, delay: Duration, priority: i32) {
        let hash = self.hash(&item);
        // Declared before the lock guard, so an early return releases the lock first.
        let duplicate;
        let wake_timer = {
            let mut state = self.lock();
            if state.shutting_down {
                return;
            }
            if let Some(metrics) = &self.metrics {
                metrics.retry();
            }
            let slot;
            (slot, duplicate) = state.slot_for(hash, item);
            if delay.is_zero() {
                let queued = self.mark_dirty(&mut state, slot, priority);
                let waker = Self::waker_for(&mut state, queued);
                drop(state);
                if let Some(waker) = waker {
                    waker.wake();
                }
                return;
            }
            let now = Instant::now();
            let ready_at = now
                .checked_add(delay.min(MAX_DELAY))
                .unwrap_or(now + MAX_DELAY);
            let seq = state.waiting.next_seq;
            let state = &mut *state;
            let Some(entry) = state.slots.get_mut(slot) else {
                return;
            };
            let current = if entry.waiting {
                state.waiting.schedule(slot)
            } else {
                None
            };
            let priority = match current {
                Some(mut waiting) if waiting.ready_at <= ready_at => {
                    waiting.priority = waiting.priority.max(priority);
                    state.waiting.set_schedule(slot, waiting);
                    return;
                }
                Some(waiting) => waiting.priority.max(priority),
                None => {
                    state.waiting.live += 1;
                    priority
                }
            };
            entry.waiting = true;
            state.waiting.set_schedule(
                slot,
                Waiting {
                    ready_at,
                    seq,
                    priority,
                },
            );
            state.waiting.next_seq += 1;
            let earliest = state
                .waiting
                .next_ready_at()
                .is_none_or(|next| ready_at < next);
            state.waiting.heap.push(HeapEntry {
                ready_at,
                seq,
                slot,
            });
            // Drop stale entries once they dominate the heap.
            if state.waiting.heap.len() > 64 && state.waiting.heap.len() > 2 * state.waiting.live {
                let WaitHeap {
                    heap, schedules, ..
                } = &mut state.waiting;
                heap.retain(|e| is_live(schedules.get(e.slot).copied().flatten(), e.seq));
            }
            earliest
        };
        drop(duplicate);
        if let Some(timer) = &self.timer {
            if wake_timer {
                timer.notify.notify_one();
            }
            timer.ensure_started(self);
        }
    }

    /// Adds every item whose ready time has come; returns the next ready time.
    fn fire_ready(&self, now: Instant) -> Option<Instant> {
        let mut wakers = Vec::new();
        let next = {
            let mut state = self.lock();
            if state.shutting_down {
                return None;
            }
            while let Some(top) = state.waiting.heap.peek() {
                if top.ready_at > now {
                    break;
                }
                let Some(entry) = state.waiting.heap.pop() else {
                    break;
                };
                let waiting = state.waiting.schedule(entry.slot);
                let live = is_live(waiting, entry.seq);
                let priority = waiting.map_or(0, |w| w.priority);
                // `mark_dirty` clears the item's `waiting` and the live count.
                if live && self.mark_dirty(&mut state, entry.slot, priority) {
                    wakers.extend(Self::waker_for(&mut state, true));
                }
            }
            state.waiting.next_ready_at()
        };
        wakers.into_iter().for_each(Waker::wake);
        next
    }
}

/// Whether a heap entry with sequence number `seq` is the slot's current schedule.
fn is_live(waiting: Option<Waiting>, seq: u64) -> bool {
    waiting.is_some_and(|w| w.seq == seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_slot_fits_in_48_bytes() {
        assert!(size_of::<Slot<String>>() <= 48);
    }

    /// The race the intake's handshake exists for (`intake.rs`, "No lost wake-up"): an add
    /// lands in the intake after a `get` took the lock and found nothing, and reads the
    /// parked count before that `get` publishes it, so the add wakes nobody. The `get` must
    /// then find the add itself instead of parking.
    #[test]
    fn a_get_that_parks_after_an_unseen_add_takes_the_item() {
        let queue = crate::workqueue::Queue::<u32>::new();
        let core = &*queue.core;
        let mut get = PendingGet { core, key: None };
        let mut cx = Context::from_waker(Waker::noop());
        let mut state = core.state.lock();
        // The add, on another core, between the get's look at the intake and its parking.
        let hash = core.hash(&7);
        let woke_someone = core.intake.push(Pending {
            hash,
            item: 7,
            priority: 0,
        });
        assert!(matches!(woke_someone, Ok(false)), "nobody parked yet");
        let polled = get.poll_locked(&mut state, &mut cx);
        assert!(
            matches!(polled, Poll::Ready(Some(7))),
            "the get parked with an add in the intake: {polled:?}"
        );
        assert_eq!(state.waiters.parked(), 0);
        assert_eq!(state.processing, 1);
    }

    /// Copies handed out are written into items the queue let go of, whatever their old
    /// length, and the queue keeps at most `SPARE_ITEMS` of them.
    #[tokio::test]
    async fn handed_out_copies_reuse_let_go_items_and_few_are_kept() {
        let queue = crate::workqueue::Queue::<String>::new();
        let core = &queue.core;
        let keys: Vec<String> = (0..100)
            .map(|i| format!("ns/{i}-{}", "x".repeat(i % 7 * 9 + 1)))
            .collect();
        for round in 0..3 {
            for key in &keys {
                queue.add(key.clone());
                // A duplicate of a queued item is let go at once.
                queue.add(key.clone());
            }
            for key in &keys {
                let got = queue.get().await.expect("queued");
                assert_eq!(&got, key, "round {round}");
                queue.done(&got);
            }
            let state = core.lock();
            assert!(state.spare.len() <= SPARE_ITEMS);
            assert!(!state.spare.is_empty(), "finished items are kept for reuse");
            assert!(state.slots.is_empty(), "every slot freed once idle");
        }
    }
}
