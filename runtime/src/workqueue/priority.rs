//! [`AtPriority`]: a queue seen at one priority, so every way to add an item takes a
//! priority without a `_with_priority` twin of each (controller-runtime's
//! `priorityqueue.AddWithOpts` with `AddOpts.Priority`).
//!
//! ```
//! use std::time::Duration;
//! use kubegen::workqueue::DelayingQueue;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let queue: DelayingQueue<&str> = DelayingQueue::new();
//! queue.add("routine");
//! queue.at_priority(10).add("urgent");
//! queue.at_priority(-1).add_after("later", Duration::ZERO);
//! assert_eq!(queue.get().await, Some("urgent"));
//! # });
//! ```

/// A borrowed queue whose adds go in at one priority; see the module docs and the
/// [work queue docs](super#priorities). Made by `at_priority` on [`Queue`](super::Queue),
/// [`DelayingQueue`](super::DelayingQueue) and
/// [`RateLimitingQueue`](super::RateLimitingQueue), each of which gives it the adds it has.
#[derive(Debug, Clone, Copy)]
pub struct AtPriority<'q, Q> {
    pub(super) queue: &'q Q,
    pub(super) priority: i32,
}

impl<'q, Q> AtPriority<'q, Q> {
    /// The priority the adds use.
    pub fn priority(&self) -> i32 {
        self.priority
    }
}
