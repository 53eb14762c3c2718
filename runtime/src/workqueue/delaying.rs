//! [`DelayingQueue<T>`]: a work queue that can also add an item after a delay (client-go's
//! `TypedDelayingInterface`).
//!
//! A handle over the shared `Core` (`core.rs`, which also holds the timer heap and the timer
//! task); it wraps a [`Queue`] so [`as_queue`](DelayingQueue::as_queue) can lend one.

use std::fmt;
use std::time::Duration;

use super::config::QueueConfig;
use super::core::Core;
use super::queue::Queue;
use super::{AtPriority, item::QueueItem};

/// A fair, de-duplicating work queue with [`add_after`](Self::add_after) (client-go's
/// `TypedDelayingInterface`).
///
/// Everything a [`Queue`] does, plus delayed adds. An item that is already waiting keeps its
/// earliest ready time. One timer task per queue, driven by tokio's clock, adds ready items
/// to the queue; it ends on shutdown (waiting items are dropped) and when the last handle is
/// dropped. A plain [`add`](Self::add) of a waiting item cancels its delayed add and queues
/// it now (see [`RateLimitingQueue`](super::RateLimitingQueue)). Clones share the queue.
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
                core: Core::new(&config, true),
            },
        }
    }

    /// Marks `item` as needing processing now. Ignored after shutdown; a no-op when the item
    /// is already queued; parks the item until [`done`](Self::done) when it is being
    /// processed. If the item is waiting for a delay, that delayed add is cancelled.
    pub fn add(&self, item: T) {
        self.queue.core.add(item, 0);
    }

    /// This queue's adds at `priority` (see [`Queue::at_priority`]); an item scheduled
    /// twice keeps the higher priority.
    pub fn at_priority(&self, priority: i32) -> AtPriority<'_, Self> {
        AtPriority {
            queue: self,
            priority,
        }
    }

    /// Adds `item` once `delay` has passed; a zero delay adds it at once. If the item is
    /// already waiting, the earlier of the two ready times is kept. Ignored after shutdown.
    /// Counts as a retry in the metrics.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.core.add_after(item, delay, 0);
    }

    /// Waits for the next item and marks it as being processed; the caller must call
    /// [`done`](Self::done) with it. After shutdown, queued items are still handed out;
    /// `None` means the queue is shut down and empty, and the worker should stop.
    ///
    /// Cancel-safe: dropping the future never loses an item.
    pub async fn get(&self) -> Option<T> {
        self.queue.core.get().await
    }

    /// Marks `item` as processed. If it was added again meanwhile (directly, or by a delay
    /// that passed), it is queued again. Calling `done` for an item that is not being
    /// processed does nothing.
    pub fn done(&self, item: &T) {
        self.queue.core.done(item);
    }

    /// The number of items queued for processing (parked, processing and waiting items
    /// excluded). For information only: do not gate `add` or `get` on it.
    pub fn len(&self) -> usize {
        self.queue.core.len()
    }

    /// Whether no item is queued for processing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many items are waiting for their delay to pass.
    pub fn waiting_len(&self) -> usize {
        self.queue.core.waiting_len()
    }

    /// Stops accepting items, drops the items waiting for a delay, ends the timer task and
    /// wakes every blocked [`get`](Self::get). Queued items are still handed out.
    pub fn shut_down(&self) {
        self.queue.core.shut_down();
    }

    /// Like [`shut_down`](Self::shut_down), then waits until every item being processed is
    /// [`done`](Self::done). Workers must keep calling `done` or this waits forever; a
    /// concurrent [`shut_down`](Self::shut_down) ends the wait at once.
    pub async fn shut_down_with_drain(&self) {
        self.queue.core.shut_down_with_drain().await;
    }

    /// Whether [`shut_down`](Self::shut_down) or
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) was called.
    pub fn shutting_down(&self) -> bool {
        self.queue.core.shutting_down()
    }

    /// The same queue as a plain [`Queue`] handle (for code that only adds, gets and
    /// finishes items); clone it to keep it.
    pub fn as_queue(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T: QueueItem> AtPriority<'_, DelayingQueue<T>> {
    /// [`DelayingQueue::add`] at this priority.
    pub fn add(&self, item: T) {
        self.queue.queue.core.add(item, self.priority);
    }

    /// [`DelayingQueue::add_after`], queued at this priority once ready.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.queue.core.add_after(item, delay, self.priority);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::test_support::RecordingProvider;
    use tokio::time::Instant;

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
        assert_eq!(queue.queue.core.lock().slots.len(), 1);
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
            queue.queue.core.lock().slots.len(),
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
        let heap_len = queue.queue.core.lock().waiting.heap.len();
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
                assert!(queue.queue.core.lock().slots.is_empty(), "every slot is freed");
                arrivals
            });
            // Arrival times never go backwards.
            proptest::prop_assert!(arrivals.windows(2).all(|w| w[0].0 <= w[1].0));
            arrivals.sort();
            proptest::prop_assert_eq!(arrivals, expected);
        }
    }
}
