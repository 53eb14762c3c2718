//! Errors of the workqueue module.

/// Invalid rate limiter settings.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A token bucket needs a positive rate (or `f64::INFINITY` for no limit).
    #[error("token bucket rate must be positive (or infinite), got {0} per second")]
    InvalidRate(f64),
    /// A token bucket with a finite rate needs room for at least one token.
    #[error("token bucket burst must be at least 1")]
    ZeroBurst,
}
