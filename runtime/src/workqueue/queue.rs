//! [`Queue<T>`]: the fair, stingy work queue (client-go's `workqueue.Typed[T]`).
//!
//! A handle over the shared `Core` (`core.rs`), which holds the state machine and
//! explains it.

use std::fmt;
use std::sync::Arc;

use super::config::QueueConfig;
use super::core::Core;
use super::{AtPriority, item::QueueItem};

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
    pub(super) core: Arc<Core<T>>,
}

impl<T: QueueItem> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self {
            core: Arc::clone(&self.core),
        }
    }
}

impl<T: QueueItem> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.core.lock();
        f.debug_struct("Queue")
            .field("name", &self.core.name)
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
            core: Core::new(&config, false),
        }
    }

    /// Marks `item` as needing processing. Ignored after shutdown; a no-op when the item is
    /// already queued; parks the item until [`done`](Self::done) when it is being processed.
    pub fn add(&self, item: T) {
        self.core.add(item, 0);
    }

    /// This queue's adds at `priority`: items of a higher priority are handed out first,
    /// those of one priority in the order they were added; `add` is priority 0. An item
    /// already queued moves up to a higher priority and never down (see the
    /// [module docs](super#priorities)).
    pub fn at_priority(&self, priority: i32) -> AtPriority<'_, Self> {
        AtPriority {
            queue: self,
            priority,
        }
    }

    /// The number of items queued for processing (parked and processing items excluded).
    /// For information only: do not gate `add` or `get` on it.
    pub fn len(&self) -> usize {
        self.core.len()
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
        self.core.get().await
    }

    /// Marks `item` as processed. If it was added again meanwhile, it is queued again.
    /// Calling `done` for an item that is not being processed does nothing.
    pub fn done(&self, item: &T) {
        self.core.done(item);
    }

    /// Stops accepting items and wakes every blocked [`get`](Self::get). Queued items are
    /// still handed out; items waiting for a delay are dropped.
    pub fn shut_down(&self) {
        self.core.shut_down();
    }

    /// Like [`shut_down`](Self::shut_down), then waits until every item being processed is
    /// [`done`](Self::done). Workers must keep calling `done` or this waits forever; a
    /// concurrent [`shut_down`](Self::shut_down) ends the wait at once.
    pub async fn shut_down_with_drain(&self) {
        self.core.shut_down_with_drain().await;
    }

    /// Whether [`shut_down`](Self::shut_down) or
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) was called.
    pub fn shutting_down(&self) -> bool {
        self.core.shutting_down()
    }
}

impl<T: QueueItem> AtPriority<'_, Queue<T>> {
    /// [`Queue::add`] at this priority.
    pub fn add(&self, item: T) {
        self.queue.core.add(item, self.priority);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::test_support::RecordingProvider;
    use proptest::prelude::*;
    use std::collections::HashSet;
    use std::sync::Arc;
    use std::time::Duration;

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
        assert!(queue.core.lock().slots.is_empty());
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
            while queue.core.lock().waiters.parked() < 16 {
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
            queue.core.lock().waiters.parked(),
            0,
            "the dropped get unregistered"
        );
        queue.add(1);
        assert_eq!(queue.get().now_or_never(), Some(Some(1)));
        assert_eq!(queue.core.lock().processing, 1);
    }

    #[tokio::test]
    async fn a_woken_get_that_is_dropped_passes_the_wake_up_on() {
        let queue: Queue<u32> = Queue::new();
        let mut first = Box::pin(queue.get());
        assert!(futures::poll!(&mut first).is_pending(), "nothing queued");
        let second = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        while queue.core.lock().waiters.parked() < 2 {
            tokio::task::yield_now().await;
        }
        queue.add(1);
        assert_eq!(
            queue.core.lock().waiters.parked(),
            1,
            "the add woke one get (the oldest)"
        );
        queue.add(1);
        assert_eq!(
            queue.core.lock().waiters.parked(),
            1,
            "a duplicate add wakes nobody"
        );
        // Cancelled before it ran: the item must not wait while `second` sleeps.
        drop(first);
        let got = tokio::time::timeout(Duration::from_secs(10), second)
            .await
            .expect("the wake-up was lost")
            .unwrap();
        assert_eq!(got, Some(1));
        assert_eq!(queue.core.lock().waiters.parked(), 0);
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

    /// The depth gauge moves inside `add` for a queue with metrics (client-go's `Add`): such
    /// a queue applies adds at once instead of through the intake.
    #[tokio::test]
    async fn a_queue_with_metrics_counts_an_add_before_any_get() {
        let provider = RecordingProvider::default();
        let queue: Queue<u8> = Queue::with_config(
            QueueConfig::new()
                .name("exact")
                .metrics_provider(provider.clone()),
        );
        queue.add(1);
        queue.add(2);
        queue.add(1);
        let snap = provider.snapshot("exact");
        assert_eq!((snap.adds, snap.depth), (2, 2));
        assert!(!queue.core.intake.has_pending(), "applied at once");
    }

    /// Adds that find the lock taken wait in the intake; a key added over and over then costs
    /// one slot and at most the intake's capacity, not one entry per add, and the add that
    /// finds the intake full waits for the lock and applies it (`intake.rs`, "Bounds").
    #[test]
    fn adds_while_the_lock_is_held_stay_bounded() {
        use crate::workqueue::intake::CAPACITY;
        let queue: Queue<String> = Queue::new();
        let held = queue.core.state.lock();
        for _ in 0..CAPACITY {
            queue.add("ns/hot".to_owned());
        }
        assert_eq!(queue.core.intake.len(), CAPACITY);
        let adder = std::thread::spawn({
            let queue = queue.clone();
            move || queue.add("ns/other".to_owned())
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !adder.is_finished(),
            "a full intake makes the add wait for the lock"
        );
        assert_eq!(queue.core.intake.len(), CAPACITY);
        drop(held);
        adder.join().expect("the adder panicked");
        assert_eq!(queue.core.intake.len(), 0);
        assert_eq!(queue.len(), 2);
        assert_eq!(
            queue.core.lock().slots.len(),
            2,
            "one slot per distinct key"
        );
    }

    /// Adds from a thread of their own, in bursts separated by pauses long enough for every
    /// worker to park: each burst must be processed in full, whichever side of the intake's
    /// parked-count handshake wins (`intake.rs`, "No lost wake-up"). A lost wake-up leaves
    /// items waiting for nobody and fails the round's timeout.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn adds_from_another_thread_always_reach_parked_workers() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let queue: Queue<u32> = Queue::new();
        let processed = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..3)
            .map(|_| {
                let (queue, processed) = (queue.clone(), Arc::clone(&processed));
                tokio::spawn(async move {
                    while let Some(item) = queue.get().await {
                        queue.done(&item);
                        processed.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        let producer = std::thread::spawn({
            let (queue, processed) = (queue.clone(), Arc::clone(&processed));
            move || {
                let mut expected = 0;
                for round in 0..300u32 {
                    let burst = 1 + round % 7;
                    for i in 0..burst {
                        queue.add(round * 8 + i);
                    }
                    expected += burst as usize;
                    let deadline = std::time::Instant::now() + Duration::from_secs(10);
                    while processed.load(Ordering::SeqCst) < expected {
                        assert!(
                            std::time::Instant::now() < deadline,
                            "round {round}: {} of {expected} processed; a wake-up was lost",
                            processed.load(Ordering::SeqCst)
                        );
                        std::thread::yield_now();
                    }
                    if round % 3 == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                }
            }
        });
        tokio::task::spawn_blocking(move || producer.join())
            .await
            .expect("join")
            .expect("the producer thread panicked");
        queue.shut_down();
        for worker in workers {
            worker.await.expect("worker");
        }
    }

    #[tokio::test]
    async fn unnamed_queue_records_no_metrics() {
        let provider = RecordingProvider::default();
        let queue: Queue<u8> =
            Queue::with_config(QueueConfig::new().metrics_provider(provider.clone()));
        queue.add(1);
        assert!(provider.names().is_empty());
        assert!(queue.core.metrics.is_none());
    }

    #[tokio::test]
    async fn dropped_queue_stops_its_metrics_task() {
        let provider = RecordingProvider::default();
        let queue: Queue<u8> = Queue::with_config(
            QueueConfig::new()
                .name("dropped")
                .metrics_provider(provider),
        );
        let weak = Arc::downgrade(&queue.core);
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

    /// controller-runtime's priority queue, as directly as possible: each queued item has a
    /// priority and an arrival number; `get` takes the highest priority, then the earliest
    /// arrival; a raise re-arrives the item at its new priority.
    #[derive(Default)]
    struct PriorityModel {
        /// (item, priority, arrival)
        queue: Vec<(u8, i32, u64)>,
        dirty: std::collections::HashMap<u8, i32>,
        processing: Vec<u8>,
        arrivals: u64,
    }

    impl PriorityModel {
        fn arrive(&mut self, item: u8, priority: i32) {
            self.arrivals += 1;
            self.queue.push((item, priority, self.arrivals));
        }
        fn add(&mut self, item: u8, priority: i32) {
            if let Some(current) = self.dirty.get_mut(&item) {
                if priority > *current {
                    *current = priority;
                    if let Some(i) = self.queue.iter().position(|e| e.0 == item) {
                        self.queue.remove(i);
                        self.arrive(item, priority);
                    }
                }
                return;
            }
            self.dirty.insert(item, priority);
            if !self.processing.contains(&item) {
                self.arrive(item, priority);
            }
        }
        fn get(&mut self) -> Option<u8> {
            let best = self
                .queue
                .iter()
                .enumerate()
                .max_by_key(|(_, (_, priority, arrival))| (*priority, std::cmp::Reverse(*arrival)))
                .map(|(i, _)| i)?;
            let (item, _, _) = self.queue.remove(best);
            self.dirty.remove(&item);
            self.processing.push(item);
            Some(item)
        }
        fn done(&mut self, item: u8) {
            self.processing.retain(|p| *p != item);
            if let Some(priority) = self.dirty.get(&item).copied() {
                self.arrive(item, priority);
            }
        }
    }

    proptest! {
        #[test]
        fn priorities_match_the_priority_queue_model(
            ops in proptest::collection::vec(
                prop_oneof![
                    4 => ((0u8..8), prop_oneof![Just(-100), Just(0), Just(5)])
                        .prop_map(|(item, priority)| (0u8, item, priority)),
                    3 => Just((1u8, 0u8, 0)),
                    3 => (0u8..8).prop_map(|n| (2u8, n, 0)),
                ],
                1..200,
            )
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let queue: Queue<u8> = Queue::new();
            let mut model = PriorityModel::default();
            for (op, n, priority) in ops {
                match op {
                    0 => {
                        queue.at_priority(priority).add(n);
                        model.add(n, priority);
                    }
                    1 => {
                        if !model.queue.is_empty() {
                            prop_assert_eq!(runtime.block_on(queue.get()), model.get());
                        }
                    }
                    _ => {
                        if !model.processing.is_empty() {
                            let item = model.processing[usize::from(n) % model.processing.len()];
                            queue.done(&item);
                            model.done(item);
                        }
                    }
                }
                prop_assert_eq!(queue.len(), model.queue.len());
            }
        }

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
                let state = queue.core.lock();
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
