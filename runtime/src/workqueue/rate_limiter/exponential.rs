//! [`ItemExponentialFailureRateLimiter`]: per-item `base · 2^failures`, capped.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use parking_lot::Mutex;

use super::RateLimiter;
use crate::workqueue::item::QueueItem;

/// Waits `base · 2^failures` for an item, capped at `max`; each [`when`](RateLimiter::when)
/// records one more failure, so the first call returns `base`. Never overflows: once the
/// product exceeds `max` (or `u128` nanoseconds) the result is `max`.
pub struct ItemExponentialFailureRateLimiter<T> {
    failures: Mutex<HashMap<T, u32, ahash::RandomState>>,
    base: Duration,
    max: Duration,
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base", &self.base)
            .field("max", &self.max)
            .field("tracked", &self.failures.lock().len())
            .finish()
    }
}

impl<T: QueueItem> ItemExponentialFailureRateLimiter<T> {
    /// A limiter starting at `base` and doubling up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            failures: Mutex::new(HashMap::default()),
            base,
            max,
        }
    }

    /// client-go's `DefaultItemBasedRateLimiter`: 1 ms doubling up to 1000 s.
    pub fn default_item_based() -> Self {
        Self::new(Duration::from_millis(1), Duration::from_secs(1000))
    }

    /// `base · 2^exponent`, capped at `max`.
    fn backoff(&self, exponent: u32) -> Duration {
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        let base = self.base.as_nanos();
        let nanos = 1u128
            .checked_shl(exponent)
            .and_then(|factor| base.checked_mul(factor));
        match nanos {
            Some(nanos) if nanos <= self.max.as_nanos() => {
                // `nanos <= max` fits a Duration.
                Duration::new(
                    u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX),
                    u32::try_from(nanos % 1_000_000_000).unwrap_or(0),
                )
            }
            _ => self.max,
        }
    }
}

impl<T: QueueItem> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exponent = {
            let mut failures = self.failures.lock();
            let count = failures.entry(item.clone()).or_insert(0);
            let exponent = *count;
            *count = count.saturating_add(1);
            exponent
        };
        self.backoff(exponent)
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.lock().get(item).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_from_base_up_to_the_cap() {
        let limiter = ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(1),
            Duration::from_secs(1),
        );
        let delays: Vec<u64> = (0..12)
            .map(|_| limiter.when(&"x").as_millis() as u64)
            .collect();
        assert_eq!(
            delays,
            vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]
        );
        assert_eq!(limiter.num_requeues(&"x"), 12);
        assert_eq!(limiter.num_requeues(&"y"), 0);
    }

    #[test]
    fn forget_restarts_at_base() {
        let limiter = ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        );
        limiter.when(&1);
        limiter.when(&1);
        assert_eq!(
            limiter.when(&2),
            Duration::from_millis(5),
            "items are independent"
        );
        limiter.forget(&1);
        assert_eq!(limiter.num_requeues(&1), 0);
        assert_eq!(limiter.when(&1), Duration::from_millis(5));
    }

    #[test]
    fn no_overflow_at_any_failure_count() {
        let limiter = ItemExponentialFailureRateLimiter::new(Duration::MAX, Duration::MAX);
        assert_eq!(limiter.when(&0), Duration::MAX);
        assert_eq!(limiter.when(&0), Duration::MAX);
        let limiter = ItemExponentialFailureRateLimiter::new(
            Duration::from_nanos(1),
            Duration::from_secs(30),
        );
        for exponent in [0u32, 1, 63, 64, 127, 128, 1000, u32::MAX] {
            let expected = if exponent < 35 {
                Duration::from_nanos(1 << exponent)
            } else {
                Duration::from_secs(30)
            };
            assert_eq!(limiter.backoff(exponent), expected, "exponent {exponent}");
        }
        limiter.failures.lock().insert(9, u32::MAX);
        assert_eq!(limiter.when(&9), Duration::from_secs(30));
        assert_eq!(limiter.num_requeues(&9), u32::MAX, "the count saturates");
    }

    #[test]
    fn zero_base_never_waits() {
        let limiter =
            ItemExponentialFailureRateLimiter::new(Duration::ZERO, Duration::from_secs(1));
        for _ in 0..200 {
            assert_eq!(limiter.when(&"z"), Duration::ZERO);
        }
    }

    #[test]
    fn default_item_based_starts_at_one_millisecond() {
        let limiter = ItemExponentialFailureRateLimiter::default_item_based();
        assert_eq!(limiter.when(&"a"), Duration::from_millis(1));
        assert_eq!(limiter.when(&"a"), Duration::from_millis(2));
    }
}
