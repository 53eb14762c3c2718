//! Typed work queues and rate limiters (client-go's `util/workqueue`, typed as in
//! client-go 1.31+, async on tokio).
//!
//! A controller's event handlers put object keys on a queue; worker tasks take them off,
//! reconcile, and report back. Three handles over one shared machine (`core.rs`), each
//! cheap to clone (an `Arc` inside) and shared by many workers; each has its own methods,
//! and each offers everything the one before it does:
//!
//! * [`Queue<T>`]: fair (FIFO) and stingy: an item is queued at most once, and never handed
//!   to two workers at once. An item added while it is being processed is parked and queued
//!   again on [`done`](Queue::done), which is mandatory after every [`get`](Queue::get).
//!   [`shut_down`](Queue::shut_down) stops accepting items while `get` keeps handing out the
//!   queued ones; [`shut_down_with_drain`](Queue::shut_down_with_drain) also waits for the
//!   items in flight.
//! * [`DelayingQueue<T>`]: adds [`add_after`](DelayingQueue::add_after); a waiting item keeps
//!   its earliest ready time, and one tokio timer task per queue (ended by shutdown or by
//!   dropping the last handle) moves ready items into the queue.
//! * [`RateLimitingQueue<T>`]: adds [`add_rate_limited`](RateLimitingQueue::add_rate_limited),
//!   [`forget`](RateLimitingQueue::forget) and
//!   [`num_requeues`](RateLimitingQueue::num_requeues) on top of a [`RateLimiter`].
//!   Unlike client-go, a plain `add` of an item waiting on a backoff replaces the delayed
//!   add instead of running the item twice (kubernetes issue 132805; see
//!   [`RateLimitingQueue`]).
//!
//! # Priorities
//!
//! Every add may carry a priority (`queue.at_priority(p).add(item)`, and likewise
//! `add_after` and `add_rate_limited` through [`AtPriority`]; a plain add is priority 0):
//! `get` hands out the highest
//! priority first, and items of one priority in the order they were added
//! (controller-runtime's `priorityqueue`, which controllers use so the objects of a first
//! list and resyncs, queued at a low priority, wait behind fresh events). An item already
//! queued that is added again at a higher priority moves up; it never moves down. One item
//! is still queued once and never handed to two workers at once.
//!
//! Rate limiters: [`ItemExponentialFailureRateLimiter`], [`ItemFastSlowRateLimiter`],
//! [`BucketRateLimiter`], [`MaxOfRateLimiter`], [`WithMaxWaitRateLimiter`] and
//! [`default_controller_rate_limiter`].
//!
//! Metrics: a named queue built with a [`MetricsProvider`] (see [`QueueConfig`]) records
//! client-go's `workqueue_*` series; [`PrometheusMetricsProvider`] registers them in a
//! `prometheus-client` registry, [`NoopMetricsProvider`] discards them.
//!
//! A worker loop:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use kubegen::workqueue::{QueueConfig, RateLimitingQueue};
//!
//! let queue: RateLimitingQueue<String> =
//!     RateLimitingQueue::with_config(QueueConfig::new().name("foos"));
//! queue.add("default/foo".to_owned());
//! queue.shut_down(); // queued items are still handed out
//!
//! let worker = tokio::spawn({
//!     let queue = queue.clone();
//!     async move {
//!         let mut handled = 0;
//!         while let Some(key) = queue.get().await {
//!             let result: Result<(), ()> = Ok(()); // reconcile(&key).await
//!             match result {
//!                 Ok(()) => queue.forget(&key),
//!                 Err(()) if queue.num_requeues(&key) < 5 => queue.add_rate_limited(key.clone()),
//!                 Err(()) => queue.forget(&key), // give up
//!             }
//!             queue.done(&key);
//!             handled += 1;
//!         }
//!         handled
//!     }
//! });
//! assert_eq!(worker.await.unwrap(), 1);
//! # }
//! ```

mod config;
mod core;
mod delaying;
mod error;
mod intake;
mod item;
mod metrics;
mod priority;
mod prometheus;
mod queue;
mod rate_limiter;
mod rate_limiting;
mod ready;
#[cfg(test)]
mod test_support;
mod waiters;

pub use config::QueueConfig;
pub use delaying::DelayingQueue;
pub use error::Error;
pub use item::QueueItem;
pub use metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, NoopMetricsProvider,
    SettableGaugeMetric,
};
pub use priority::AtPriority;
pub use prometheus::PrometheusMetricsProvider;
pub use queue::Queue;
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter,
};
pub use rate_limiting::RateLimitingQueue;
