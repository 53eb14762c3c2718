//! Queue metrics: the [`MetricsProvider`] trait and the per-queue recorder built from it.
//!
//! The metric set is client-go's: depth, adds, queue latency, work duration, unfinished work
//! seconds, longest running processor and retries. A provider hands out one metric handle per
//! queue name; [`NoopMetricsProvider`] discards everything and
//! [`PrometheusMetricsProvider`](super::PrometheusMetricsProvider) registers real series.
//!
//! A queue only records metrics when it has both a non-empty name and a provider (as in
//! client-go, where an unnamed queue gets no metrics). Without metrics the queue never reads
//! the clock on the hot path.

use std::sync::Arc;

use tokio::time::Instant;

use crate::metrics::NoopMetric as Noop;
pub use crate::metrics::{CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric};

/// Creates the metrics of one named queue (client-go's `workqueue.MetricsProvider`).
///
/// Each method is called once per queue, with the queue's name; implementations label the
/// series with it.
pub trait MetricsProvider: Send + Sync {
    /// `workqueue_depth`: items waiting to be processed (including items parked while
    /// being processed).
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric>;
    /// `workqueue_adds_total`: items accepted by `add`.
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `workqueue_queue_duration_seconds`: time an item waited between `add` and `get`.
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `workqueue_work_duration_seconds`: time between `get` and `done`.
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `workqueue_unfinished_work_seconds`: summed age of the work currently in progress.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
    /// `workqueue_longest_running_processor_seconds`: age of the oldest work in progress.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric>;
    /// `workqueue_retries_total`: calls to `add_after` / `add_rate_limited`.
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
}

/// A [`MetricsProvider`] whose metrics discard every value.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopMetricsProvider;

impl MetricsProvider for NoopMetricsProvider {
    fn new_depth_metric(&self, _name: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(Noop)
    }
    fn new_adds_metric(&self, _name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Noop)
    }
    fn new_latency_metric(&self, _name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(Noop)
    }
    fn new_work_duration_metric(&self, _name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(Noop)
    }
    fn new_unfinished_work_seconds_metric(&self, _name: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(Noop)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(Noop)
    }
    fn new_retries_metric(&self, _name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Noop)
    }
}

/// The metric handles of one queue. The queue calls these under its lock, at the same points
/// as client-go's `defaultQueueMetrics`.
pub(crate) struct QueueMetrics {
    depth: Arc<dyn GaugeMetric>,
    adds: Arc<dyn CounterMetric>,
    latency: Arc<dyn HistogramMetric>,
    work_duration: Arc<dyn HistogramMetric>,
    unfinished_work_seconds: Arc<dyn SettableGaugeMetric>,
    longest_running_processor: Arc<dyn SettableGaugeMetric>,
    retries: Arc<dyn CounterMetric>,
}

impl QueueMetrics {
    /// Builds the handles for queue `name`.
    pub(crate) fn new(provider: &dyn MetricsProvider, name: &str) -> Self {
        Self {
            depth: provider.new_depth_metric(name),
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider.new_longest_running_processor_seconds_metric(name),
            retries: provider.new_retries_metric(name),
        }
    }

    /// An item was accepted (newly dirty).
    pub(crate) fn add(&self) {
        self.adds.inc();
        self.depth.inc();
    }

    /// An item was handed to a worker; `added_at` is when it became dirty.
    pub(crate) fn get(&self, added_at: Option<Instant>, now: Instant) {
        self.depth.dec();
        if let Some(added_at) = added_at {
            self.latency
                .observe(now.saturating_duration_since(added_at).as_secs_f64());
        }
    }

    /// A worker finished an item it got at `started_at`.
    pub(crate) fn done(&self, started_at: Option<Instant>, now: Instant) {
        if let Some(started_at) = started_at {
            self.work_duration
                .observe(now.saturating_duration_since(started_at).as_secs_f64());
        }
    }

    /// An item was scheduled with a delay.
    pub(crate) fn retry(&self) {
        self.retries.inc();
    }

    /// Publishes the in-progress figures: the summed and the largest age, in seconds.
    pub(crate) fn update_unfinished_work(&self, total: f64, longest: f64) {
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(longest);
    }
}

impl std::fmt::Debug for QueueMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueMetrics").finish_non_exhaustive()
    }
}
