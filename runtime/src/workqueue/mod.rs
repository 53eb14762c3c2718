//! Typed work queues and rate limiters (client-go's `util/workqueue`).
//!
//! This module will hold `Queue<T>`, `DelayingQueue<T>`, `RateLimitingQueue<T>`, the
//! `RateLimiter<T>` family and the `MetricsProvider` trait. Issue 3 delivers it.
