//! A [`MetricsProvider`] backed by the `prometheus-client` crate.
//!
//! [`PrometheusMetricsProvider::new`] registers client-go's seven workqueue metric families in a
//! [`Registry`]; each queue adds its own series, labelled `name="<queue name>"`. Durations use
//! client-go's buckets (10 ns × 10ⁿ, twelve buckets).

use std::sync::Arc;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
};
use crate::metrics::{
    PromCounter, PromFloatGauge, PromGauge, PromHistogram, PrometheusLabels as Labels,
    workqueue_duration_histogram,
};

type HistogramFamily = Family<Labels, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    workqueue_duration_histogram()
}

fn labels(name: &str) -> Labels {
    crate::metrics::prometheus_labels(&[("name", name)])
}

/// Registers and serves the `workqueue_*` metric families.
///
/// ```
/// use prometheus_client::registry::Registry;
/// use kubegen::workqueue::{PrometheusMetricsProvider, Queue, QueueConfig};
///
/// let mut registry = Registry::default();
/// let provider = PrometheusMetricsProvider::new(&mut registry);
/// let queue: Queue<String> =
///     Queue::with_config(QueueConfig::new().name("foos").metrics_provider(provider));
/// queue.add("default/a".to_owned());
///
/// let mut text = String::new();
/// prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
/// assert!(text.contains(r#"workqueue_adds_total{name="foos"} 1"#));
/// ```
#[derive(Debug, Clone)]
pub struct PrometheusMetricsProvider {
    depth: Family<Labels, Gauge>,
    adds: Family<Labels, Counter>,
    latency: HistogramFamily,
    work_duration: HistogramFamily,
    unfinished_work_seconds: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    longest_running_processor: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    retries: Family<Labels, Counter>,
}

impl PrometheusMetricsProvider {
    /// Registers the families in `registry` and returns a provider that fills them.
    pub fn new(registry: &mut Registry) -> Self {
        let provider = Self {
            depth: Family::default(),
            adds: Family::default(),
            latency: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            unfinished_work_seconds: Family::default(),
            longest_running_processor: Family::default(),
            retries: Family::default(),
        };
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue",
            provider.depth.clone(),
        );
        // prometheus-client appends `_total` to counters.
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            provider.adds.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            provider.latency.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            provider.work_duration.clone(),
        );
        registry.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been \
             observed by work_duration",
            provider.unfinished_work_seconds.clone(),
        );
        registry.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            provider.longest_running_processor.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            provider.retries.clone(),
        );
        provider
    }
}

impl MetricsProvider for PrometheusMetricsProvider {
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(PromGauge(self.depth.get_or_create_owned(&labels(name))))
    }
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(self.adds.get_or_create_owned(&labels(name))))
    }
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(
            self.latency.get_or_create_owned(&labels(name)),
        ))
    }
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(
            self.work_duration.get_or_create_owned(&labels(name)),
        ))
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(PromFloatGauge(
            self.unfinished_work_seconds
                .get_or_create_owned(&labels(name)),
        ))
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(PromFloatGauge(
            self.longest_running_processor
                .get_or_create_owned(&labels(name)),
        ))
    }
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(self.retries.get_or_create_owned(&labels(name))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(registry: &Registry) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
        text
    }

    #[test]
    fn series_carry_client_go_names_and_queue_label() {
        let mut registry = Registry::default();
        let provider = PrometheusMetricsProvider::new(&mut registry);
        provider.new_depth_metric("foos").inc();
        provider.new_depth_metric("foos").inc();
        provider.new_adds_metric("foos").inc();
        provider.new_retries_metric("bars").inc();
        provider.new_latency_metric("foos").observe(0.5);
        provider.new_work_duration_metric("foos").observe(0.25);
        provider.new_unfinished_work_seconds_metric("foos").set(1.5);
        provider
            .new_longest_running_processor_seconds_metric("foos")
            .set(0.75);
        let text = encode(&registry);
        for expected in [
            r#"workqueue_depth{name="foos"} 2"#,
            r#"workqueue_adds_total{name="foos"} 1"#,
            r#"workqueue_retries_total{name="bars"} 1"#,
            r#"workqueue_queue_duration_seconds_sum{name="foos"} 0.5"#,
            r#"workqueue_work_duration_seconds_count{name="foos"} 1"#,
            r#"workqueue_unfinished_work_seconds{name="foos"} 1.5"#,
            r#"workqueue_longest_running_processor_seconds{name="foos"} 0.75"#,
        ] {
            assert!(text.contains(expected), "missing {expected} in\n{text}");
        }
    }
}
