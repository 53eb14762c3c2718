//! [`WithMaxWaitRateLimiter`]: caps the delay of another limiter.

use std::time::Duration;

use super::RateLimiter;

/// Returns the inner limiter's delay, but never more than `max_wait`. Failure counting and
/// forgetting are the inner limiter's.
#[derive(Debug, Clone)]
pub struct WithMaxWaitRateLimiter<L> {
    limiter: L,
    max_wait: Duration,
}

impl<L> WithMaxWaitRateLimiter<L> {
    /// Wraps `limiter`, capping its delays at `max_wait`.
    pub fn new(limiter: L, max_wait: Duration) -> Self {
        Self { limiter, max_wait }
    }
}

impl<T, L: RateLimiter<T>> RateLimiter<T> for WithMaxWaitRateLimiter<L> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_wait)
    }

    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::ItemExponentialFailureRateLimiter;

    #[test]
    fn delays_are_capped_at_max_wait() {
        let ms = Duration::from_millis;
        let limiter = WithMaxWaitRateLimiter::new(
            ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1000)),
            ms(10),
        );
        let delays: Vec<Duration> = (0..6).map(|_| limiter.when(&"x")).collect();
        assert_eq!(delays, vec![ms(1), ms(2), ms(4), ms(8), ms(10), ms(10)]);
        assert_eq!(limiter.num_requeues(&"x"), 6);
        limiter.forget(&"x");
        assert_eq!(limiter.num_requeues(&"x"), 0);
        assert_eq!(limiter.when(&"x"), ms(1));
    }
}
