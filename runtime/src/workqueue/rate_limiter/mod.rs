//! Rate limiters: how long an item waits before it is retried (client-go's
//! `default_rate_limiters.go`).
//!
//! A [`RateLimiter`] is asked [`when`](RateLimiter::when) an item may be retried; each call
//! records one more failure for per-item limiters, so call it once per failed attempt (the
//! [`RateLimitingQueue`](super::RateLimitingQueue) does this in `add_rate_limited`).
//! [`forget`](RateLimiter::forget) clears the item's history after a success.
//!
//! * [`ItemExponentialFailureRateLimiter`]: `base · 2^failures`, capped.
//! * [`ItemFastSlowRateLimiter`]: a fast delay for the first attempts, then a slow one.
//! * [`BucketRateLimiter`]: an overall token bucket (qps and burst), no per-item state.
//! * [`MaxOfRateLimiter`]: the longest delay of several limiters.
//! * [`WithMaxWaitRateLimiter`]: caps another limiter's delay.
//! * [`default_controller_rate_limiter`]: client-go's default, the max of an exponential
//!   5 ms..1000 s limiter and a 10 qps / burst 100 bucket.

mod bucket;
mod exponential;
mod fast_slow;
mod max_of;
mod max_wait;

use std::sync::Arc;
use std::time::Duration;

pub use bucket::BucketRateLimiter;
pub use exponential::ItemExponentialFailureRateLimiter;
pub use fast_slow::ItemFastSlowRateLimiter;
pub use max_of::MaxOfRateLimiter;
pub use max_wait::WithMaxWaitRateLimiter;

use super::item::QueueItem;

/// Decides how long an item waits before it is retried (client-go's `TypedRateLimiter[T]`).
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` should wait now. Per-item limiters count this call as one failure.
    fn when(&self, item: &T) -> Duration;
    /// Stops tracking `item` (after success, or when giving up on it).
    fn forget(&self, item: &T);
    /// How many failures are recorded for `item`.
    fn num_requeues(&self, item: &T) -> u32;
}

impl<T, L: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<L> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

impl<T, L: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<L> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

/// client-go's `DefaultTypedControllerRateLimiter`: the max of a per-item exponential
/// backoff (5 ms doubling up to 1000 s) and an overall token bucket (10 qps, burst 100).
pub fn default_controller_rate_limiter<T: QueueItem>() -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::controller_default()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn default_controller_limiter_combines_backoff_and_bucket() {
        let limiter = default_controller_rate_limiter::<String>();
        let ms = Duration::from_millis;
        let key = |s: &str| s.to_owned();
        // Per-item backoff dominates while the bucket has tokens.
        assert_eq!(limiter.when(&key("a")), ms(5));
        assert_eq!(limiter.when(&key("a")), ms(10));
        assert_eq!(limiter.when(&key("b")), ms(5));
        assert_eq!(limiter.num_requeues(&key("a")), 2);
        // Drain the rest of the 100-token burst with fresh items: 97 tokens remain.
        for i in 0..97 {
            assert_eq!(limiter.when(&format!("k{i}")), ms(5));
        }
        // The bucket is empty: the next fresh item waits for a token at 10 qps.
        assert_eq!(limiter.when(&key("c")), ms(100));
        limiter.forget(&key("a"));
        assert_eq!(limiter.num_requeues(&key("a")), 0);
        assert_eq!(
            limiter.when(&key("a")),
            ms(200),
            "bucket delay beats the reset backoff"
        );
    }

    #[test]
    fn arc_and_box_forward_to_the_limiter() {
        let limiter: Arc<dyn RateLimiter<u8>> = Arc::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(1),
            Duration::from_secs(1),
        ));
        let boxed: Box<dyn RateLimiter<u8>> = Box::new(Arc::clone(&limiter));
        assert_eq!(boxed.when(&1), Duration::from_millis(1));
        assert_eq!(limiter.when(&1), Duration::from_millis(2));
        assert_eq!(boxed.num_requeues(&1), 2);
        boxed.forget(&1);
        assert_eq!(limiter.num_requeues(&1), 0);
    }
}
