//! Client-side throttling: a token bucket under tokio's clock (client-go's
//! `flowcontrol.NewTokenBucketRateLimiter`, used by client-go's `rest.Config` with QPS 5
//! and burst 10). Off by default in kubegen (see [`Config`](super::Config)); these are the
//! figures to opt in with.

use parking_lot::Mutex;
use tokio::time::{Duration, Instant};

/// client-go's default queries per second (kubegen's default is no client-side limit).
pub const DEFAULT_QPS: f32 = 5.0;
/// client-go's default burst (kubegen's default is no client-side limit).
pub const DEFAULT_BURST: u32 = 10;

/// A token bucket: `burst` tokens at most, refilled at `qps` tokens per second.
///
/// [`acquire`](Self::acquire) reserves a token at once and then sleeps until it is due, so
/// concurrent callers are served in the order they asked and the long-run rate never exceeds
/// `qps`.
#[derive(Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    /// Tokens available at `last`; negative when callers hold reservations.
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket, or `None` when `qps` is not positive (throttling off, as a negative
    /// QPS means in client-go).
    pub fn new(qps: f32, burst: u32) -> Option<Self> {
        if qps <= 0.0 || !qps.is_finite() {
            return None;
        }
        let burst = f64::from(burst.max(1));
        Some(Self {
            qps: f64::from(qps),
            burst,
            state: Mutex::new(BucketState {
                tokens: burst,
                last: Instant::now(),
            }),
        })
    }

    /// The refill rate.
    pub fn qps(&self) -> f64 {
        self.qps
    }

    /// The bucket size.
    pub fn burst(&self) -> u32 {
        // burst came from a u32
        self.burst as u32
    }

    /// Takes a token now if one is available.
    pub fn try_acquire(&self) -> bool {
        let mut st = self.state.lock();
        self.refill(&mut st, Instant::now());
        if st.tokens >= 1.0 {
            st.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Waits for a token.
    pub async fn acquire(&self) {
        let wait = {
            let mut st = self.state.lock();
            let now = Instant::now();
            self.refill(&mut st, now);
            st.tokens -= 1.0;
            if st.tokens >= 0.0 {
                Duration::ZERO
            } else {
                Duration::from_secs_f64(-st.tokens / self.qps)
            }
        };
        if !wait.is_zero() {
            tracing::trace!(?wait, "client-side throttling");
            tokio::time::sleep(wait).await;
        }
    }

    fn refill(&self, st: &mut BucketState, now: Instant) {
        let elapsed = now.saturating_duration_since(st.last).as_secs_f64();
        st.tokens = (st.tokens + elapsed * self.qps).min(self.burst);
        st.last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn non_positive_qps_disables_throttling() {
        assert!(TokenBucket::new(-1.0, 10).is_none());
        assert!(TokenBucket::new(0.0, 10).is_none());
        assert!(TokenBucket::new(5.0, 10).is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn burst_is_immediate_then_rate_is_qps() {
        let b = TokenBucket::new(DEFAULT_QPS, DEFAULT_BURST).unwrap();
        let start = Instant::now();
        for _ in 0..10 {
            b.acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "burst of 10 must not wait");
        for _ in 0..20 {
            b.acquire().await;
        }
        // 20 more tokens at 5/s take 4s
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(3999) && elapsed <= Duration::from_millis(4001),
            "{elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_callers_share_the_rate() {
        let b = Arc::new(TokenBucket::new(10.0, 1).unwrap());
        let start = Instant::now();
        let tasks: Vec<_> = (0..21)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move { b.acquire().await })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(1999) && elapsed <= Duration::from_millis(2001),
            "{elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn idle_time_refills_up_to_burst_only() {
        let b = TokenBucket::new(1.0, 3).unwrap();
        for _ in 0..3 {
            assert!(b.try_acquire());
        }
        assert!(!b.try_acquire());
        tokio::time::sleep(Duration::from_secs(100)).await;
        for _ in 0..3 {
            assert!(b.try_acquire());
        }
        assert!(!b.try_acquire());
    }
}
