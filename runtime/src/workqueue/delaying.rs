//! [`DelayingQueue<T>`]: a [`Queue`] that can add an item after a delay (client-go's
//! `TypedDelayingInterface`).
//!
//! Scheduled items live in a min-heap ordered by ready time. An item that is already waiting
//! keeps its **earliest** ready time: scheduling it again later is a no-op, scheduling it
//! sooner moves it forward. One timer task per queue sleeps with tokio's clock until the next
//! ready time (or until an earlier item arrives) and then adds the ready items to the queue,
//! where the usual de-duplication applies. There is no polling loop.
//!
//! The timer task holds only a [`Weak`] reference to the queue and a cancellation token: it
//! ends on shutdown, and when the last queue handle is dropped. Items still waiting at
//! shutdown are dropped, as in client-go.
//!
//! A plain [`add`](Queue::add) of an item that is waiting cancels the scheduled add and queues
//! the item now (see [`RateLimitingQueue`](super::RateLimitingQueue) for why).

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::QueueConfig;
use super::queue::{Queue, QueueItem, Shared};

/// Delays beyond this are clamped, so `Instant + delay` cannot overflow (about 30 years).
const MAX_DELAY: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// An item's scheduled ready time; `seq` identifies its heap entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Waiting {
    ready_at: Instant,
    seq: u64,
}

/// A heap entry: the slot of the item scheduled at `ready_at`. The entry is live while the
/// slot's [`Waiting::seq`] equals `seq` (sequence numbers are never reused, so a stale entry
/// never matches a slot that was freed and reused).
struct HeapEntry {
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
pub(crate) struct WaitHeap {
    heap: BinaryHeap<HeapEntry>,
    next_seq: u64,
    /// Items whose slot has `waiting` set.
    pub(crate) live: usize,
}

impl WaitHeap {
    pub(crate) fn clear(&mut self) {
        self.heap.clear();
        self.live = 0;
    }

    fn next_ready_at(&self) -> Option<Instant> {
        self.heap.peek().map(|entry| entry.ready_at)
    }
}

/// The delaying queue's timer task handle.
#[derive(Debug, Default)]
pub(crate) struct TimerHandle {
    /// Wakes the timer task when a new earliest ready time arrives.
    notify: Arc<Notify>,
    started: AtomicBool,
}

impl TimerHandle {
    /// Spawns the timer task once, if a tokio runtime is available.
    pub(crate) fn ensure_started<T: QueueItem>(&self, shared: &Arc<Shared<T>>) {
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
    shared: Weak<Shared<T>>,
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
                () = cancel.cancelled() => return,
                () = tokio::time::sleep_until(at) => {}
                () = notified => {}
            },
            None => tokio::select! {
                () = cancel.cancelled() => return,
                () = notified => {}
            },
        }
    }
}

impl<T: QueueItem> Shared<T> {
    /// Schedules `item` to be added after `delay`.
    pub(crate) fn add_after(self: &Arc<Self>, item: T, delay: Duration) {
        let hash = self.hash(&item);
        // Declared before the lock guard, so an early return releases the lock first.
        let duplicate;
        let wake_timer = {
            let mut state = self.state.lock();
            if state.shutting_down {
                return;
            }
            if let Some(metrics) = &self.metrics {
                metrics.retry();
            }
            let slot;
            (slot, duplicate) = state.slot_for(hash, item);
            if delay.is_zero() {
                let wake = self.mark_dirty(&mut state, slot);
                drop(state);
                if wake {
                    self.get_notify.notify_one();
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
            match entry.waiting {
                Some(waiting) if waiting.ready_at <= ready_at => return,
                Some(_) => {}
                None => state.waiting.live += 1,
            }
            entry.waiting = Some(Waiting { ready_at, seq });
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
                let slots = &state.slots;
                state
                    .waiting
                    .heap
                    .retain(|e| is_live(slots.get(e.slot).and_then(|s| s.waiting), e.seq));
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
        let mut added = 0usize;
        let next = {
            let mut state = self.state.lock();
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
                let live = is_live(
                    state.slots.get(entry.slot).and_then(|s| s.waiting),
                    entry.seq,
                );
                // `mark_dirty` clears the item's `waiting` and the live count.
                if live && self.mark_dirty(&mut state, entry.slot) {
                    added += 1;
                }
            }
            state.waiting.next_ready_at()
        };
        for _ in 0..added {
            self.get_notify.notify_one();
        }
        next
    }
}

/// Whether a heap entry with sequence number `seq` is the slot's current schedule.
fn is_live(waiting: Option<Waiting>, seq: u64) -> bool {
    waiting.is_some_and(|w| w.seq == seq)
}

/// A [`Queue`] with [`add_after`](Self::add_after) (client-go's `TypedDelayingInterface`).
///
/// An item that is already waiting keeps its earliest ready time. One timer task per queue,
/// driven by tokio's clock, adds ready items to the queue; it ends on shutdown (waiting items
/// are dropped) and when the last handle is dropped. A plain `add` of a waiting item cancels
/// its delayed add and queues it now (see [`RateLimitingQueue`](super::RateLimitingQueue)).
///
/// Dereferences to [`Queue`] for `add`, `get`, `done`, `len` and shutdown.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use std::time::Duration;
/// use kubegen::workqueue::DelayingQueue;
///
/// let queue: DelayingQueue<&str> = DelayingQueue::new();
/// queue.add_after("later", Duration::from_secs(2));
/// queue.add_after("sooner", Duration::from_secs(1));
/// assert_eq!(queue.get().await, Some("sooner"));
/// assert_eq!(queue.get().await, Some("later"));
/// # }
/// ```
pub struct DelayingQueue<T: QueueItem> {
    queue: Queue<T>,
}

impl<T: QueueItem> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
        }
    }
}

impl<T: QueueItem> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("queue", &self.queue)
            .field("waiting", &self.waiting_len())
            .finish()
    }
}

impl<T: QueueItem> Default for DelayingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: QueueItem> Deref for DelayingQueue<T> {
    type Target = Queue<T>;
    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T: QueueItem> DelayingQueue<T> {
    /// An unnamed delaying queue without metrics.
    pub fn new() -> Self {
        Self::with_config(QueueConfig::new())
    }

    /// A delaying queue with the given name and metrics provider (the rate limiter of `config`
    /// is not used).
    ///
    /// The timer task starts here when called inside a tokio runtime, otherwise at the first
    /// `add_after` or `get` made inside one.
    pub fn with_config(config: QueueConfig<T>) -> Self {
        Self {
            queue: Queue {
                shared: Shared::new(&config, true),
            },
        }
    }

    /// Adds `item` once `delay` has passed; a zero delay adds it at once. If the item is
    /// already waiting, the earlier of the two ready times is kept. Ignored after shutdown.
    /// Counts as a retry in the metrics.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.shared.add_after(item, delay);
    }

    /// How many items are waiting for their delay to pass.
    pub fn waiting_len(&self) -> usize {
        self.queue.shared.state.lock().waiting.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::test_support::RecordingProvider;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[tokio::test(start_paused = true)]
    async fn items_become_ready_in_delay_order() {
        let queue = DelayingQueue::new();
        let start = Instant::now();
        queue.add_after("c", ms(300));
        queue.add_after("a", ms(100));
        queue.add_after("b", ms(200));
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.waiting_len(), 3);
        for (expected, at) in [("a", 100), ("b", 200), ("c", 300)] {
            assert_eq!(queue.get().await, Some(expected));
            assert_eq!(start.elapsed(), ms(at));
        }
        assert_eq!(queue.waiting_len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_item_keeps_its_earliest_ready_time() {
        let queue = DelayingQueue::new();
        let start = Instant::now();
        queue.add_after("x", ms(1000));
        queue.add_after("x", ms(200)); // sooner: moves forward
        queue.add_after("x", ms(5000)); // later: ignored
        assert_eq!(queue.waiting_len(), 1);
        assert_eq!(queue.get().await, Some("x"));
        assert_eq!(start.elapsed(), ms(200));
        queue.done(&"x");
        // The superseded 1000 ms entry is stale and must not add x again.
        tokio::time::sleep(ms(10_000)).await;
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.waiting_len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn zero_delay_adds_immediately() {
        let queue = DelayingQueue::new();
        queue.add_after(1, Duration::ZERO);
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.waiting_len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn plain_add_supersedes_a_waiting_entry() {
        let queue = DelayingQueue::new();
        queue.add_after("x", ms(500));
        queue.add("x");
        assert_eq!(queue.waiting_len(), 0);
        assert_eq!(queue.get().await, Some("x"));
        queue.done(&"x");
        tokio::time::sleep(ms(1000)).await;
        assert_eq!(queue.len(), 0, "the cancelled delayed add must not fire");
    }

    #[tokio::test(start_paused = true)]
    async fn stale_entry_does_not_fire_for_the_next_item_in_its_slot() {
        let queue = DelayingQueue::new();
        let start = Instant::now();
        queue.add_after("x", ms(100));
        queue.add("x"); // supersedes the delayed add; its heap entry goes stale
        let x = queue.get().await.unwrap();
        queue.done(&x); // x's slot is freed...
        queue.add_after("y", ms(500)); // ...and reused by y
        assert_eq!(queue.shared.state.lock().slots.len(), 1);
        assert_eq!(queue.get().await, Some("y"));
        assert_eq!(
            start.elapsed(),
            ms(500),
            "x's stale entry must not release y early"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn ready_item_being_processed_is_parked() {
        let queue = DelayingQueue::new();
        queue.add("x");
        let x = queue.get().await.unwrap();
        queue.add_after("x", ms(50));
        tokio::time::sleep(ms(100)).await;
        assert_eq!(queue.len(), 0, "parked while processing");
        queue.done(&x);
        assert_eq!(queue.get().await, Some("x"));
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_item_wakes_a_sleeping_timer() {
        let queue = DelayingQueue::new();
        let start = Instant::now();
        queue.add_after("late", Duration::from_secs(3600));
        tokio::time::sleep(ms(10)).await; // the timer now sleeps for an hour
        queue.add_after("early", ms(40));
        assert_eq!(queue.get().await, Some("early"));
        assert_eq!(start.elapsed(), ms(50));
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_drops_waiting_items_and_stops_the_timer() {
        let metrics = tokio::runtime::Handle::current().metrics();
        let queue = DelayingQueue::new();
        queue.add_after(1, ms(100));
        queue.add(2);
        assert_eq!(metrics.num_alive_tasks(), 1);
        queue.shut_down();
        queue.add_after(3, ms(1));
        assert_eq!(queue.waiting_len(), 0);
        assert_eq!(
            queue.shared.state.lock().slots.len(),
            1,
            "the waiting item's slot is freed; the queued item keeps its own"
        );
        tokio::time::sleep(ms(200)).await;
        assert_eq!(metrics.num_alive_tasks(), 0);
        assert_eq!(queue.get().await, Some(2));
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_every_handle_ends_the_timer_task() {
        let metrics = tokio::runtime::Handle::current().metrics();
        let queue = DelayingQueue::new();
        queue.add_after("x", Duration::from_secs(3600));
        let clone = queue.clone();
        assert_eq!(metrics.num_alive_tasks(), 1);
        drop(queue);
        tokio::task::yield_now().await;
        assert_eq!(metrics.num_alive_tasks(), 1, "a handle is still alive");
        drop(clone);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(metrics.num_alive_tasks(), 0);
    }

    #[test]
    fn queue_built_outside_a_runtime_starts_its_timer_later() {
        let queue = DelayingQueue::new();
        queue.add_after("x", ms(10));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        assert_eq!(runtime.block_on(queue.get()), Some("x"));
    }

    #[tokio::test(start_paused = true)]
    async fn huge_delay_does_not_overflow() {
        let queue = DelayingQueue::new();
        queue.add_after(1, Duration::MAX);
        assert_eq!(queue.waiting_len(), 1);
        queue.add(2);
        assert_eq!(queue.get().await, Some(2));
    }

    #[tokio::test(start_paused = true)]
    async fn stale_heap_entries_are_compacted() {
        let queue = DelayingQueue::new();
        for round in 0..100u64 {
            // Each round re-schedules the same item sooner, leaving a stale entry.
            queue.add_after(7, Duration::from_secs(10_000 - round));
        }
        let heap_len = queue.shared.state.lock().waiting.heap.len();
        assert!(heap_len <= 66, "heap kept {heap_len} entries for one item");
        assert_eq!(queue.waiting_len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn every_add_after_counts_as_a_retry() {
        let provider = RecordingProvider::default();
        let queue = DelayingQueue::with_config(
            QueueConfig::new()
                .name("delayed")
                .metrics_provider(provider.clone()),
        );
        queue.add_after(1, ms(10));
        queue.add_after(1, ms(20));
        queue.add_after(2, Duration::ZERO);
        let snap = provider.snapshot("delayed");
        assert_eq!(snap.retries, 3);
        assert_eq!(snap.adds, 1, "only the zero-delay item is added yet");
        assert_eq!(queue.get().await, Some(2));
        assert_eq!(queue.get().await, Some(1));
        assert_eq!(provider.snapshot("delayed").adds, 2);
    }

    proptest::proptest! {
        /// Each item waits for its earliest requested delay; a zero delay adds it at once
        /// (cancelling its wait), and a later positive delay schedules it again.
        #[test]
        fn items_arrive_at_their_earliest_delay(
            schedule in proptest::collection::vec((0u8..16, 0u64..2000), 1..60)
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            // Model: queued now, and/or waiting until the earliest positive delay.
            let mut queued = std::collections::BTreeSet::new();
            let mut waiting = std::collections::BTreeMap::new();
            for &(item, delay) in &schedule {
                if delay == 0 {
                    queued.insert(item);
                    waiting.remove(&item);
                } else {
                    let at = waiting.entry(item).or_insert(delay);
                    *at = (*at).min(delay);
                }
            }
            let mut expected: Vec<(Duration, u8)> = queued.iter().map(|&i| (Duration::ZERO, i)).collect();
            expected.extend(waiting.iter().map(|(&i, &d)| (ms(d), i)));
            expected.sort();
            let mut arrivals = runtime.block_on(async {
                let queue = DelayingQueue::new();
                let start = Instant::now();
                for &(item, delay) in &schedule {
                    queue.add_after(item, ms(delay));
                }
                let mut arrivals = Vec::new();
                for _ in 0..expected.len() {
                    let item = queue.get().await.unwrap();
                    arrivals.push((start.elapsed(), item));
                    queue.done(&item);
                }
                // Nothing else may arrive: superseded entries are stale.
                tokio::time::sleep(ms(5000)).await;
                assert_eq!(queue.len(), 0);
                assert!(queue.shared.state.lock().slots.is_empty(), "every slot is freed");
                arrivals
            });
            // Arrival times never go backwards.
            proptest::prop_assert!(arrivals.windows(2).all(|w| w[0].0 <= w[1].0));
            arrivals.sort();
            proptest::prop_assert_eq!(arrivals, expected);
        }
    }
}
