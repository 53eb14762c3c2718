//! [`WebhookMetrics`]: controller-runtime's webhook series (`pkg/webhook/internal/metrics`),
//! labelled by the webhook's path.

use std::time::Instant;

use prometheus_client::{
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

type Labels = Vec<(String, String)>;
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// Prometheus' default buckets (controller-runtime names none for the latency).
const LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// `controller_runtime_webhook_requests_total{webhook, code}`,
/// `controller_runtime_webhook_requests_in_flight{webhook}` and
/// `controller_runtime_webhook_latency_seconds{webhook}`; `webhook` is the path, `code` the
/// HTTP status answered. Cheap to clone (the series are shared).
#[derive(Debug, Clone)]
pub struct WebhookMetrics {
    total: Family<Labels, Counter>,
    in_flight: Family<Labels, Gauge>,
    latency: Histograms,
}

impl Default for WebhookMetrics {
    fn default() -> Self {
        Self {
            total: Family::default(),
            in_flight: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
        }
    }
}

impl WebhookMetrics {
    /// New, unregistered series.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the series in `registry` (the manager's, for its `/metrics`).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code.",
            self.total.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            self.in_flight.clone(),
        );
        registry.register(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            self.latency.clone(),
        );
    }

    /// A request to `webhook` started; record its end with [`InFlight::finish`].
    pub(crate) fn start(&self, webhook: &str) -> InFlight {
        let labels = vec![("webhook".to_owned(), webhook.to_owned())];
        self.in_flight.get_or_create(&labels).inc();
        InFlight {
            metrics: self.clone(),
            labels,
            started: Instant::now(),
        }
    }
}

/// One request being served: in the in-flight gauge until dropped; [`finish`](Self::finish)
/// records its answer (a request whose connection went away records none).
pub(crate) struct InFlight {
    metrics: WebhookMetrics,
    labels: Labels,
    started: Instant,
}

impl InFlight {
    /// The request was answered with HTTP `code`.
    pub(crate) fn finish(self, code: u16) {
        self.metrics
            .latency
            .get_or_create(&self.labels)
            .observe(self.started.elapsed().as_secs_f64());
        let mut labels = self.labels.clone();
        labels.push(("code".to_owned(), code.to_string()));
        self.metrics.total.get_or_create(&labels).inc();
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.metrics.in_flight.get_or_create(&self.labels).dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_have_controller_runtime_names_and_labels() {
        let metrics = WebhookMetrics::new();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.start("/validate").finish(200);
        let _pending = metrics.start("/validate");
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        assert!(
            text.contains(
                r#"controller_runtime_webhook_requests_total{webhook="/validate",code="200"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"controller_runtime_webhook_requests_in_flight{webhook="/validate"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"controller_runtime_webhook_latency_seconds_count{webhook="/validate"} 1"#
            ),
            "{text}"
        );
    }
}
