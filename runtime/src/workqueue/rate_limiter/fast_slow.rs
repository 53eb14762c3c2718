//! [`ItemFastSlowRateLimiter`]: a fast delay for the first attempts, then a slow one.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use parking_lot::Mutex;

use super::RateLimiter;
use crate::workqueue::item::QueueItem;

/// Returns `fast` for an item's first `max_fast_attempts` calls to
/// [`when`](RateLimiter::when), then `slow`.
pub struct ItemFastSlowRateLimiter<T> {
    attempts: Mutex<HashMap<T, u32, ahash::RandomState>>,
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast", &self.fast)
            .field("slow", &self.slow)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .finish_non_exhaustive()
    }
}

impl<T: QueueItem> ItemFastSlowRateLimiter<T> {
    /// `fast` for the first `max_fast_attempts` attempts of an item, `slow` afterwards.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        Self {
            attempts: Mutex::new(HashMap::default()),
            fast,
            slow,
            max_fast_attempts,
        }
    }
}

impl<T: QueueItem> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let attempts = {
            let mut map = self.attempts.lock();
            let count = map.entry(item.clone()).or_insert(0);
            *count = count.saturating_add(1);
            *count
        };
        if attempts <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.attempts.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.attempts.lock().get(item).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_for_max_fast_attempts_then_slow() {
        let ms = Duration::from_millis;
        let limiter = ItemFastSlowRateLimiter::new(ms(5), ms(10_000), 3);
        let delays: Vec<Duration> = (0..5).map(|_| limiter.when(&"one")).collect();
        assert_eq!(delays, vec![ms(5), ms(5), ms(5), ms(10_000), ms(10_000)]);
        assert_eq!(limiter.num_requeues(&"one"), 5);
        assert_eq!(limiter.when(&"two"), ms(5), "items are independent");
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), ms(5));
    }

    #[test]
    fn zero_fast_attempts_is_always_slow() {
        let limiter =
            ItemFastSlowRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1), 0);
        assert_eq!(limiter.when(&1), Duration::from_secs(1));
    }
}
