//! [`MaxOfRateLimiter`]: the longest delay of several limiters.

use std::fmt;
use std::time::Duration;

use super::RateLimiter;

/// Asks every limiter (so each records the attempt) and returns the longest delay;
/// `num_requeues` is the largest count and `forget` reaches every limiter.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// Combines `limiters`. With no limiter, every delay is zero.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }

    /// Adds one more limiter.
    #[must_use]
    pub fn with(mut self, limiter: impl RateLimiter<T> + 'static) -> Self {
        self.limiters.push(Box::new(limiter));
        self
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        // Not `max()` over an iterator that could stop early: every limiter must be asked.
        self.limiters
            .iter()
            .map(|limiter| limiter.when(item))
            .fold(Duration::ZERO, Duration::max)
    }

    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters
            .iter()
            .map(|limiter| limiter.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::{ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter};

    #[test]
    fn returns_the_longest_delay_and_asks_every_limiter() {
        let ms = Duration::from_millis;
        let limiter = MaxOfRateLimiter::new(Vec::new())
            .with(ItemFastSlowRateLimiter::new(ms(5), ms(3000), 3))
            .with(ItemExponentialFailureRateLimiter::new(
                ms(1),
                Duration::from_secs(1),
            ));
        let delays: Vec<Duration> = (0..6).map(|_| limiter.when(&"one")).collect();
        // fast/slow: 5 5 5 3000 3000 3000; exponential: 1 2 4 8 16 32
        assert_eq!(
            delays,
            vec![ms(5), ms(5), ms(5), ms(3000), ms(3000), ms(3000)]
        );
        assert_eq!(limiter.num_requeues(&"one"), 6);
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), ms(5));
    }

    #[test]
    fn counts_the_largest_requeue_number() {
        let ms = Duration::from_millis;
        let exp: std::sync::Arc<ItemExponentialFailureRateLimiter<u8>> =
            std::sync::Arc::new(ItemExponentialFailureRateLimiter::new(ms(1), ms(100)));
        exp.when(&1);
        exp.when(&1);
        let limiter = MaxOfRateLimiter::new(vec![
            Box::new(ItemFastSlowRateLimiter::new(ms(1), ms(2), 1)),
            Box::new(std::sync::Arc::clone(&exp)),
        ]);
        assert_eq!(limiter.when(&1), ms(4));
        assert_eq!(limiter.num_requeues(&1), 3);
    }

    #[test]
    fn empty_limiter_never_waits() {
        let limiter: MaxOfRateLimiter<u8> = MaxOfRateLimiter::new(Vec::new());
        assert_eq!(limiter.when(&1), Duration::ZERO);
        assert_eq!(limiter.num_requeues(&1), 0);
    }
}
