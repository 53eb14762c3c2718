//! [`RateLimitingQueue<T>`]: a [`DelayingQueue`] whose retries are paced by a
//! [`RateLimiter`] (client-go's `TypedRateLimitingInterface`).
//!
//! A plain `add` of an item waiting on a backoff replaces the delayed add (kubernetes
//! issue 132805); see [`RateLimitingQueue`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::config::QueueConfig;
use super::delaying::DelayingQueue;
use super::queue::Queue;
use super::rate_limiter::{RateLimiter, default_controller_rate_limiter};
use super::{AtPriority, item::QueueItem};

/// A [`DelayingQueue`] with rate-limited retries.
///
/// Everything a [`DelayingQueue`] does, plus [`add_rate_limited`](Self::add_rate_limited),
/// [`forget`](Self::forget) and [`num_requeues`](Self::num_requeues). Cheap to clone: clones
/// share the queue and the limiter.
///
/// # A plain `add` during a backoff (kubernetes issue 132805)
///
/// In client-go, when an item waits on an `AddRateLimited` backoff and something calls the
/// plain `Add` (typically an informer event), the item is processed at once **and** the
/// delayed add still fires later. If that immediate run fails, the worker calls
/// `AddRateLimited` again, so one event costs an extra failure: the failure count (and the
/// next backoff) grows although the item only failed once per real attempt, and the stale
/// delayed add triggers yet another run.
///
/// Here a plain [`add`](Self::add) of an item that is waiting **cancels the pending delayed
/// add** and queues the item now: there is exactly one pending run, never two. The rate
/// limiter is not consulted, so the failure count is neither raised nor reset: if the run
/// fails, the next [`add_rate_limited`](Self::add_rate_limited) continues the
/// backoff where it was; if it succeeds, the worker's [`forget`](Self::forget)
/// clears it. A plain add is an explicit request for prompt processing, so it is not delayed
/// by the old backoff; callers that want every enqueue to respect the backoff use
/// `add_rate_limited` (which, as in client-go, counts each call as a failure) or check
/// [`num_requeues`](Self::num_requeues) first.
///
/// # Example
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use kubegen::workqueue::RateLimitingQueue;
///
/// let queue: RateLimitingQueue<String> = RateLimitingQueue::default();
/// queue.add("default/foo".to_owned());
/// while let Some(key) = queue.get().await {
///     let reconciled = queue.num_requeues(&key) >= 2; // pretend: fails twice
///     if reconciled {
///         queue.forget(&key); // success: clear the backoff
///         queue.shut_down();
///     } else {
///         queue.add_rate_limited(key.clone()); // retry after 5 ms, then 10 ms
///     }
///     queue.done(&key);
/// }
/// # }
/// ```
pub struct RateLimitingQueue<T: QueueItem> {
    queue: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T: QueueItem> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<T: QueueItem> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T: QueueItem> Default for RateLimitingQueue<T> {
    /// An unnamed queue with [`default_controller_rate_limiter`].
    fn default() -> Self {
        Self::with_config(QueueConfig::new())
    }
}

impl<T: QueueItem> RateLimitingQueue<T> {
    /// An unnamed queue without metrics, paced by `limiter`.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(QueueConfig::new().rate_limiter(limiter))
    }

    /// A queue built from `config`; without a rate limiter it uses
    /// [`default_controller_rate_limiter`].
    pub fn with_config(mut config: QueueConfig<T>) -> Self {
        let limiter = config
            .rate_limiter
            .take()
            .unwrap_or_else(|| Arc::new(default_controller_rate_limiter()));
        Self {
            queue: DelayingQueue::with_config(config),
            limiter,
        }
    }

    /// Marks `item` as needing processing now. Ignored after shutdown; a no-op when the item
    /// is already queued; parks the item until [`done`](Self::done) when it is being
    /// processed. If the item waits on a backoff, that delayed add is cancelled and the
    /// failure count is kept (see [above](Self#a-plain-add-during-a-backoff-kubernetes-issue-132805)).
    pub fn add(&self, item: T) {
        self.queue.add(item);
    }

    /// This queue's adds at `priority` (see [`Queue::at_priority`]); a rate-limited add is
    /// queued at it once its backoff has passed.
    pub fn at_priority(&self, priority: i32) -> AtPriority<'_, Self> {
        AtPriority {
            queue: self,
            priority,
        }
    }

    /// Adds `item` after the delay the rate limiter gives it, which records one more failure
    /// for per-item limiters. Ignored after shutdown (the limiter is not asked then).
    pub fn add_rate_limited(&self, item: T) {
        self.at_priority(0).add_rate_limited(item);
    }

    /// Adds `item` once `delay` has passed, without asking the rate limiter; a zero delay
    /// adds it at once. If the item is already waiting, the earlier of the two ready times
    /// is kept. Ignored after shutdown. Counts as a retry in the metrics.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.add_after(item, delay);
    }

    /// Waits for the next item and marks it as being processed; the caller must call
    /// [`done`](Self::done) with it. After shutdown, queued items are still handed out;
    /// `None` means the queue is shut down and empty, and the worker should stop.
    ///
    /// Cancel-safe: dropping the future never loses an item.
    pub async fn get(&self) -> Option<T> {
        self.queue.get().await
    }

    /// Marks `item` as processed. If it was added again meanwhile, it is queued again.
    /// Calling `done` for an item that is not being processed does nothing. `done` does not
    /// clear the backoff: call [`forget`](Self::forget) for that.
    pub fn done(&self, item: &T) {
        self.queue.done(item);
    }

    /// Clears the rate limiter's history of `item` (call it after a success or when giving
    /// up). It does not remove the item from the queue and does not replace
    /// [`done`](Self::done).
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many failures the rate limiter recorded for `item`.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }

    /// The number of items queued for processing (parked, processing and waiting items
    /// excluded). For information only: do not gate `add` or `get` on it.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no item is queued for processing.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// How many items are waiting for their delay (or backoff) to pass.
    pub fn waiting_len(&self) -> usize {
        self.queue.waiting_len()
    }

    /// Stops accepting items, drops the items waiting for a delay, ends the timer task and
    /// wakes every blocked [`get`](Self::get). Queued items are still handed out.
    pub fn shut_down(&self) {
        self.queue.shut_down();
    }

    /// Like [`shut_down`](Self::shut_down), then waits until every item being processed is
    /// [`done`](Self::done). Workers must keep calling `done` or this waits forever; a
    /// concurrent [`shut_down`](Self::shut_down) ends the wait at once.
    pub async fn shut_down_with_drain(&self) {
        self.queue.shut_down_with_drain().await;
    }

    /// Whether [`shut_down`](Self::shut_down) or
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) was called.
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// The same queue as a plain [`Queue`] handle (for code that only adds, gets and
    /// finishes items); clone it to keep it.
    pub fn as_queue(&self) -> &Queue<T> {
        self.queue.as_queue()
    }

    /// The same queue as a [`DelayingQueue`] handle (no rate limiter); clone it to keep it.
    pub fn as_delaying_queue(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

impl<T: QueueItem> AtPriority<'_, RateLimitingQueue<T>> {
    /// [`RateLimitingQueue::add`] at this priority.
    pub fn add(&self, item: T) {
        self.queue.queue.at_priority(self.priority).add(item);
    }

    /// [`RateLimitingQueue::add_rate_limited`], queued at this priority once its backoff
    /// has passed.
    pub fn add_rate_limited(&self, item: T) {
        if self.queue.shutting_down() {
            return;
        }
        let delay = self.queue.limiter.when(&item);
        self.queue
            .queue
            .at_priority(self.priority)
            .add_after(item, delay);
    }

    /// [`RateLimitingQueue::add_after`], queued at this priority once ready.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue
            .queue
            .at_priority(self.priority)
            .add_after(item, delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::test_support::RecordingProvider;
    use crate::workqueue::{ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter};
    use tokio::time::Instant;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn exponential() -> ItemExponentialFailureRateLimiter<&'static str> {
        ItemExponentialFailureRateLimiter::new(ms(100), Duration::from_secs(100))
    }

    #[tokio::test(start_paused = true)]
    async fn add_rate_limited_backs_off_exponentially() {
        let queue = RateLimitingQueue::new(exponential());
        let start = Instant::now();
        queue.add_rate_limited("x");
        assert_eq!(queue.num_requeues(&"x"), 1);
        assert_eq!(queue.get().await, Some("x"));
        assert_eq!(start.elapsed(), ms(100));
        queue.add_rate_limited("x");
        queue.done(&"x");
        assert_eq!(queue.get().await, Some("x"));
        assert_eq!(start.elapsed(), ms(300));
        assert_eq!(queue.num_requeues(&"x"), 2);
        queue.forget(&"x");
        assert_eq!(queue.num_requeues(&"x"), 0);
        assert_eq!(queue.len(), 0, "forget does not touch the queue");
        queue.done(&"x");
    }

    #[tokio::test(start_paused = true)]
    async fn plain_add_during_backoff_runs_once_and_keeps_the_failure_count() {
        let queue = RateLimitingQueue::new(exponential());
        // The item failed once and waits 100 ms for its retry.
        queue.add("x");
        let x = queue.get().await.unwrap();
        queue.add_rate_limited(x);
        queue.done(&x);
        assert_eq!(queue.num_requeues(&"x"), 1);
        assert_eq!(queue.waiting_len(), 1);

        // An informer event arrives during the backoff.
        queue.add("x");
        assert_eq!(queue.waiting_len(), 0, "the delayed add is cancelled");
        assert_eq!(queue.num_requeues(&"x"), 1, "a plain add is not a failure");
        let x = queue.get().await.unwrap();
        queue.done(&x); // success would `forget`; here we leave the count alone

        // client-go would run x a second time when the old backoff expires.
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(queue.len(), 0, "no stale retry fires");
        assert_eq!(queue.num_requeues(&"x"), 1);

        // A real failure continues the backoff where it was: 200 ms, not 400 ms.
        let start = Instant::now();
        queue.add("x");
        let x = queue.get().await.unwrap();
        queue.add_rate_limited(x);
        queue.done(&x);
        assert_eq!(queue.get().await, Some("x"));
        assert_eq!(start.elapsed(), ms(200));
        assert_eq!(queue.num_requeues(&"x"), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn plain_add_while_processing_with_pending_retry_parks_once() {
        let queue = RateLimitingQueue::new(exponential());
        queue.add("x");
        let x = queue.get().await.unwrap();
        queue.add_rate_limited(x); // fails, retry in 100 ms
        queue.add("x"); // event while still processing: parked, retry cancelled
        queue.done(&x);
        assert_eq!(queue.get().await, Some("x"));
        queue.done(&"x");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.num_requeues(&"x"), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn add_rate_limited_after_shutdown_records_nothing() {
        let queue = RateLimitingQueue::new(exponential());
        queue.shut_down();
        queue.add_rate_limited("x");
        assert_eq!(queue.num_requeues(&"x"), 0);
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn default_queue_uses_the_controller_limiter() {
        let queue: RateLimitingQueue<&str> = RateLimitingQueue::default();
        let start = Instant::now();
        queue.add_rate_limited("x");
        queue.add_rate_limited("x");
        // Waiting keeps the earliest ready time: 5 ms (the 10 ms retry is merged).
        assert_eq!(queue.get().await, Some("x"));
        assert_eq!(start.elapsed(), ms(5));
        assert_eq!(queue.num_requeues(&"x"), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn retries_are_counted_in_metrics() {
        let provider = RecordingProvider::default();
        let queue = RateLimitingQueue::with_config(
            QueueConfig::new()
                .name("limited")
                .metrics_provider(provider.clone())
                .rate_limiter(ItemFastSlowRateLimiter::new(ms(1), ms(10), 1)),
        );
        queue.add("a");
        let a = queue.get().await.unwrap();
        queue.add_rate_limited(a);
        queue.done(&a);
        let a = queue.get().await.unwrap();
        queue.add_rate_limited(a);
        queue.done(&a);
        let a = queue.get().await.unwrap();
        queue.forget(&a);
        queue.done(&a);
        let snap = provider.snapshot("limited");
        assert_eq!(snap.retries, 2);
        assert_eq!(snap.adds, 3);
        assert_eq!(snap.depth, 0);
        assert_eq!(snap.work_duration.len(), 3);
        assert_eq!(queue.as_queue().len(), 0);
    }
}
