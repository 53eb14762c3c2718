//! Exponential backoff with jitter that resets after a healthy period (client-go's
//! `ExponentialBackoffManager`, as the reflector configures it).

use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

/// Backoff parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct BackoffConfig {
    /// The first delay.
    pub initial: Duration,
    /// The largest delay before jitter.
    pub max: Duration,
    /// Growth factor between consecutive delays.
    pub factor: f64,
    /// Up to this fraction of the delay is added at random.
    pub jitter: f64,
    /// A backoff not used for this long starts over from `initial`.
    pub reset_after: Duration,
}

impl Default for BackoffConfig {
    /// client-go's reflector: 800 ms doubling to 30 s, full jitter, reset after 2 minutes.
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

/// The state of one backoff sequence.
#[derive(Debug)]
pub(crate) struct Backoff {
    config: BackoffConfig,
    current: Duration,
    last: Option<Instant>,
}

impl Backoff {
    pub(crate) fn new(config: BackoffConfig) -> Self {
        let current = config.initial;
        Self {
            config,
            current,
            last: None,
        }
    }

    /// The next delay to wait.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) >= self.config.reset_after)
        {
            self.current = self.config.initial;
        }
        self.last = Some(now);
        let base = self.current;
        self.current = base.mul_f64(self.config.factor).min(self.config.max);
        if self.config.jitter > 0.0 {
            base + base.mul_f64(rand::rng().random_range(0.0..self.config.jitter))
        } else {
            base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_jitter() -> BackoffConfig {
        BackoffConfig {
            jitter: 0.0,
            ..BackoffConfig::default()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn delays_double_up_to_the_cap() {
        let mut b = Backoff::new(no_jitter());
        let got: Vec<u64> = (0..8).map(|_| b.next_delay().as_millis() as u64).collect();
        assert_eq!(got, vec![800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_healthy_period_starts_over() {
        let mut b = Backoff::new(no_jitter());
        b.next_delay();
        b.next_delay();
        tokio::time::advance(Duration::from_secs(121)).await;
        assert_eq!(b.next_delay(), Duration::from_millis(800));
    }

    #[tokio::test(start_paused = true)]
    async fn jitter_stays_within_the_fraction() {
        let mut b = Backoff::new(BackoffConfig::default());
        for _ in 0..50 {
            let d = b.next_delay();
            assert!(
                d >= Duration::from_millis(800) && d < Duration::from_secs(60),
                "{d:?}"
            );
        }
    }
}
