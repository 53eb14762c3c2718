//! [`QueueConfig`]: the builder shared by the queue constructors (client-go's
//! `TypedRateLimitingQueueConfig`).

use std::fmt;
use std::sync::Arc;

use super::metrics::MetricsProvider;
use super::rate_limiter::RateLimiter;

/// Name, metrics provider and rate limiter of a queue.
///
/// Metrics are recorded only when the queue has both a non-empty name and a provider; the
/// name labels every series. The rate limiter is used by
/// [`RateLimitingQueue::with_config`](super::RateLimitingQueue::with_config), which falls
/// back to [`default_controller_rate_limiter`](super::default_controller_rate_limiter).
///
/// ```
/// use kubegen::workqueue::{
///     ItemExponentialFailureRateLimiter, NoopMetricsProvider, QueueConfig, RateLimitingQueue,
/// };
/// use std::time::Duration;
///
/// let queue: RateLimitingQueue<String> = RateLimitingQueue::with_config(
///     QueueConfig::new()
///         .name("foos")
///         .metrics_provider(NoopMetricsProvider)
///         .rate_limiter(ItemExponentialFailureRateLimiter::new(
///             Duration::from_millis(5),
///             Duration::from_secs(60),
///         )),
/// );
/// # drop(queue);
/// ```
pub struct QueueConfig<T> {
    pub(crate) name: String,
    pub(crate) metrics_provider: Option<Arc<dyn MetricsProvider>>,
    pub(crate) rate_limiter: Option<Arc<dyn RateLimiter<T>>>,
}

impl<T> Default for QueueConfig<T> {
    fn default() -> Self {
        Self {
            name: String::new(),
            metrics_provider: None,
            rate_limiter: None,
        }
    }
}

impl<T> fmt::Debug for QueueConfig<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .field("rate_limiter", &self.rate_limiter.is_some())
            .finish()
    }
}

impl<T> QueueConfig<T> {
    /// An unnamed configuration without metrics and with the default rate limiter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the queue name (the `name` label of its metrics).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the metrics provider.
    #[must_use]
    pub fn metrics_provider(mut self, provider: impl MetricsProvider + 'static) -> Self {
        self.metrics_provider = Some(Arc::new(provider));
        self
    }

    /// Sets a metrics provider that is shared with other owners.
    #[must_use]
    pub fn shared_metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }

    /// Sets the rate limiter of a [`RateLimitingQueue`](super::RateLimitingQueue).
    #[must_use]
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<T> + 'static) -> Self {
        self.rate_limiter = Some(Arc::new(limiter));
        self
    }

    /// Sets a rate limiter that is shared with other owners.
    #[must_use]
    pub fn shared_rate_limiter(mut self, limiter: Arc<dyn RateLimiter<T>>) -> Self {
        self.rate_limiter = Some(limiter);
        self
    }
}
