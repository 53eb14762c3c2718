//! Retrying a read-modify-write (client-go's `util/retry`): `retry_on_conflict` re-runs a
//! closure while it fails with a 409 Conflict, `on_error` while a predicate says so, sleeping
//! an exponential [`Backoff`] between attempts.

use std::{future::Future, time::Duration};

use rand::Rng as _;

use super::error::Error;

/// An exponential backoff (apimachinery's `wait.Backoff`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// The first wait.
    pub duration: Duration,
    /// Multiplier applied after each wait.
    pub factor: f64,
    /// Each wait is lengthened by up to `jitter * wait`.
    pub jitter: f64,
    /// How many attempts are made in all.
    pub steps: u32,
    /// No wait grows past this (when set).
    pub cap: Option<Duration>,
}

/// client-go's `retry.DefaultRetry`: 5 attempts 10ms apart (for conflicts, which clear fast).
pub const DEFAULT_RETRY: Backoff = Backoff {
    duration: Duration::from_millis(10),
    factor: 1.0,
    jitter: 0.1,
    steps: 5,
    cap: None,
};

/// client-go's `retry.DefaultBackoff`: 4 attempts, 10ms growing fivefold.
pub const DEFAULT_BACKOFF: Backoff = Backoff {
    duration: Duration::from_millis(10),
    factor: 5.0,
    jitter: 0.1,
    steps: 4,
    cap: None,
};

impl Backoff {
    /// The waits between attempts, jitter included (`steps - 1` of them).
    pub fn delays(&self) -> impl Iterator<Item = Duration> + use<> {
        let mut b = *self;
        (1..self.steps.max(1)).map(move |_| b.step())
    }

    fn step(&mut self) -> Duration {
        let mut d = self.duration;
        if self.factor > 0.0 {
            let next = self.duration.mul_f64(self.factor);
            self.duration = match self.cap {
                Some(cap) => next.min(cap),
                None => next,
            };
        }
        if self.jitter > 0.0 {
            d += d.mul_f64(rand::rng().random::<f64>() * self.jitter);
        }
        d
    }
}

/// Runs `f` until it succeeds, fails with an error `retriable` rejects, or `backoff.steps`
/// attempts have been made; then the last result is returned.
pub async fn on_error<T, E, F, Fut>(
    backoff: Backoff,
    retriable: impl Fn(&E) -> bool,
    mut f: F,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut delays = backoff.delays();
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) if retriable(&e) => match delays.next() {
                Some(d) => {
                    tracing::debug!(?d, "retrying after a retriable error");
                    tokio::time::sleep(d).await;
                }
                None => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
}

/// Runs `f` again while it fails with a 409 Conflict: get the object, change it, update it.
pub async fn retry_on_conflict<T, F, Fut>(backoff: Backoff, f: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    on_error(backoff, Error::is_conflict, f).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn conflict() -> Error {
        Error::from_response(
            http::StatusCode::CONFLICT,
            br#"{"kind":"Status","reason":"Conflict","code":409}"#,
        )
    }

    #[tokio::test(start_paused = true)]
    async fn conflict_is_retried_until_success() {
        let calls = AtomicU32::new(0);
        let r = retry_on_conflict(DEFAULT_RETRY, || async {
            if calls.fetch_add(1, Ordering::SeqCst) < 2 {
                Err(conflict())
            } else {
                Ok(7)
            }
        })
        .await;
        assert_eq!(r.unwrap(), 7);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_steps_with_the_last_error() {
        let calls = AtomicU32::new(0);
        let start = tokio::time::Instant::now();
        let r: Result<(), _> = retry_on_conflict(DEFAULT_RETRY, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(conflict())
        })
        .await;
        assert!(r.unwrap_err().is_conflict());
        assert_eq!(calls.load(Ordering::SeqCst), 5);
        // 4 waits of 10ms plus at most 10% jitter each
        let e = start.elapsed();
        assert!(
            e >= Duration::from_millis(40) && e <= Duration::from_millis(44),
            "{e:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn other_errors_are_returned_at_once() {
        let calls = AtomicU32::new(0);
        let r: Result<(), _> = retry_on_conflict(DEFAULT_RETRY, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(Error::from_response(http::StatusCode::NOT_FOUND, b""))
        })
        .await;
        assert!(r.unwrap_err().is_not_found());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn default_backoff_grows_fivefold() {
        let b = Backoff {
            jitter: 0.0,
            ..DEFAULT_BACKOFF
        };
        let d: Vec<_> = b.delays().collect();
        assert_eq!(
            d,
            [10, 50, 250].map(Duration::from_millis).to_vec(),
            "4 steps → 3 waits"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn on_error_uses_the_predicate() {
        let calls = AtomicU32::new(0);
        let r: Result<u32, &str> = on_error(
            DEFAULT_BACKOFF,
            |e: &&str| *e == "again",
            || async {
                match calls.fetch_add(1, Ordering::SeqCst) {
                    0 | 1 => Err("again"),
                    _ => Err("fatal"),
                }
            },
        )
        .await;
        assert_eq!(r, Err("fatal"));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }
}
