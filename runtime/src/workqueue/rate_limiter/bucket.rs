//! [`BucketRateLimiter`]: an overall token bucket (golang.org/x/time/rate's `Reserve`).

use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use super::RateLimiter;
use crate::workqueue::Error;

/// A token bucket shared by all items: it refills at `qps` tokens per second up to `burst`,
/// and every [`when`](RateLimiter::when) takes one token. When the bucket is empty the token
/// is borrowed from the future and the delay is the time until it is refilled, so calls
/// made together get increasing delays (`1/qps`, `2/qps`, ...). It keeps no per-item state:
/// `forget` does nothing and `num_requeues` is always 0.
///
/// Time comes from tokio's clock, so tests can pause and advance it.
#[derive(Debug)]
pub struct BucketRateLimiter {
    qps: f64,
    burst: f64,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// Available tokens; negative while tokens are borrowed.
    tokens: f64,
    /// When `tokens` was last brought up to date.
    last: Option<Instant>,
}

impl BucketRateLimiter {
    /// A bucket of `burst` tokens refilled at `qps` per second, initially full.
    /// `qps = f64::INFINITY` never waits.
    ///
    /// # Errors
    /// [`Error::InvalidRate`] unless `qps` is positive (NaN, zero and negative rates are
    /// refused); [`Error::ZeroBurst`] for a zero burst with a finite rate, which could never
    /// hand out a token.
    pub fn new(qps: f64, burst: u32) -> Result<Self, Error> {
        if qps.is_nan() || qps <= 0.0 {
            return Err(Error::InvalidRate(qps));
        }
        if burst == 0 && qps.is_finite() {
            return Err(Error::ZeroBurst);
        }
        Ok(Self::unchecked(qps, burst))
    }

    fn unchecked(qps: f64, burst: u32) -> Self {
        Self {
            qps,
            burst: f64::from(burst),
            bucket: Mutex::new(Bucket {
                tokens: f64::from(burst),
                last: None,
            }),
        }
    }

    /// 10 qps with a burst of 100, the bucket of client-go's default controller limiter.
    pub fn controller_default() -> Self {
        Self::unchecked(10.0, 100)
    }

    /// Takes one token at time `now` and returns how long until it is available.
    fn reserve(&self, now: Instant) -> Duration {
        if self.qps.is_infinite() {
            return Duration::ZERO;
        }
        let mut bucket = self.bucket.lock();
        if let Some(last) = bucket.last {
            let elapsed = now.saturating_duration_since(last).as_secs_f64();
            bucket.tokens = (bucket.tokens + elapsed * self.qps).min(self.burst);
        }
        if bucket.last.is_none_or(|last| now > last) {
            bucket.last = Some(now);
        }
        bucket.tokens -= 1.0;
        if bucket.tokens >= 0.0 {
            return Duration::ZERO;
        }
        // Round up to whole nanoseconds so an item never becomes ready before its token.
        let nanos = (-bucket.tokens * 1e9 / self.qps).ceil();
        // `as` saturates for huge values.
        Duration::from_nanos(nanos as u64)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve(Instant::now())
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn when(limiter: &BucketRateLimiter) -> Duration {
        RateLimiter::<&str>::when(limiter, &"any")
    }

    #[tokio::test(start_paused = true)]
    async fn burst_then_steady_rate() {
        let limiter = BucketRateLimiter::new(10.0, 3).unwrap();
        let delays: Vec<Duration> = (0..6).map(|_| when(&limiter)).collect();
        assert_eq!(delays, vec![ms(0), ms(0), ms(0), ms(100), ms(200), ms(300)]);
        // After the borrowed tokens are repaid (300 ms), one token per 100 ms.
        tokio::time::advance(ms(300)).await;
        assert_eq!(when(&limiter), ms(100));
        tokio::time::advance(ms(200)).await;
        assert_eq!(when(&limiter), ms(0));
        // A long pause refills the bucket only up to the burst.
        tokio::time::advance(Duration::from_secs(60)).await;
        let delays: Vec<Duration> = (0..4).map(|_| when(&limiter)).collect();
        assert_eq!(delays, vec![ms(0), ms(0), ms(0), ms(100)]);
    }

    #[tokio::test(start_paused = true)]
    async fn every_call_takes_a_token_whatever_the_item() {
        let limiter = BucketRateLimiter::new(1.0, 1).unwrap();
        assert_eq!(RateLimiter::<u8>::when(&limiter, &1), ms(0));
        assert_eq!(RateLimiter::<u8>::when(&limiter, &2), ms(1000));
        assert_eq!(RateLimiter::<u8>::when(&limiter, &1), ms(2000));
        RateLimiter::<u8>::forget(&limiter, &1);
        assert_eq!(RateLimiter::<u8>::num_requeues(&limiter, &1), 0);
        assert_eq!(RateLimiter::<u8>::when(&limiter, &3), ms(3000));
    }

    #[tokio::test(start_paused = true)]
    async fn controller_default_allows_a_burst_of_one_hundred() {
        let limiter = BucketRateLimiter::controller_default();
        for _ in 0..100 {
            assert_eq!(when(&limiter), Duration::ZERO);
        }
        assert_eq!(when(&limiter), ms(100));
        assert_eq!(when(&limiter), ms(200));
    }

    #[test]
    fn infinite_rate_never_waits() {
        let limiter = BucketRateLimiter::new(f64::INFINITY, 0).unwrap();
        for _ in 0..1000 {
            assert_eq!(limiter.reserve(Instant::now()), Duration::ZERO);
        }
    }

    #[test]
    fn invalid_settings_are_refused() {
        assert_eq!(
            BucketRateLimiter::new(0.0, 1).unwrap_err(),
            Error::InvalidRate(0.0)
        );
        assert_eq!(
            BucketRateLimiter::new(-1.0, 1).unwrap_err(),
            Error::InvalidRate(-1.0)
        );
        assert!(matches!(
            BucketRateLimiter::new(f64::NAN, 1),
            Err(Error::InvalidRate(_))
        ));
        assert_eq!(
            BucketRateLimiter::new(5.0, 0).unwrap_err(),
            Error::ZeroBurst
        );
    }

    #[test]
    fn tiny_rate_saturates_instead_of_overflowing() {
        let limiter = BucketRateLimiter::new(f64::MIN_POSITIVE, 1).unwrap();
        let now = Instant::now();
        assert_eq!(limiter.reserve(now), Duration::ZERO);
        assert_eq!(limiter.reserve(now), Duration::from_nanos(u64::MAX));
    }
}
