//! [`PrometheusMetrics`]: the informer, reflector and REST client series in a
//! `prometheus-client` [`Registry`], with client-go's (component-base's) names, labels and
//! buckets. The workqueue's series have their own provider,
//! [`PrometheusMetricsProvider`](crate::workqueue::PrometheusMetricsProvider), over the same
//! handle types.

use std::{sync::Arc, time::Duration};

use prometheus_client::{
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};

use super::{
    ControllerMetricsProvider, CounterMetric, GaugeMetric, HistogramMetric,
    InformerMetricsProvider, LeaderElectionMetricsProvider, ReflectorMetricsProvider,
    RestClientMetrics, SettableGaugeMetric,
};

pub(crate) type Labels = Vec<(String, String)>;
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;
type FloatGauge = Gauge<f64, std::sync::atomic::AtomicU64>;

/// Prometheus' default buckets, which component-base uses when a histogram names none.
const DEFAULT_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// `informer_event_processing_duration_seconds` (component-base `metrics/prometheus/informer`).
const PROCESSING_BUCKETS: [f64; 37] = [
    0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5,
    1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 25.0, 30.0,
    40.0, 50.0, 60.0,
];
/// `rest_client_request_duration_seconds` and `rest_client_rate_limiter_duration_seconds`
/// (component-base `metrics/prometheus/restclient`).
const REST_BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

/// `controller_runtime_reconcile_time_seconds` (controller-runtime's buckets).
const RECONCILE_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_BUCKETS)
}

fn default_histogram() -> Histogram {
    Histogram::new(DEFAULT_BUCKETS)
}
fn processing_histogram() -> Histogram {
    Histogram::new(PROCESSING_BUCKETS)
}
fn rest_histogram() -> Histogram {
    Histogram::new(REST_BUCKETS)
}
/// The workqueue's duration buckets: 10 ns × 10ⁿ, twelve of them.
pub(crate) fn workqueue_duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

pub(crate) fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A prometheus integer gauge as a [`GaugeMetric`].
#[derive(Debug)]
pub(crate) struct PromGauge(pub(crate) Gauge);
impl GaugeMetric for PromGauge {
    fn inc(&self) {
        self.0.inc();
    }
    fn dec(&self) {
        self.0.dec();
    }
}

/// A prometheus float gauge as a [`SettableGaugeMetric`].
#[derive(Debug)]
pub(crate) struct PromFloatGauge(pub(crate) FloatGauge);
impl SettableGaugeMetric for PromFloatGauge {
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}

/// A prometheus counter as a [`CounterMetric`].
#[derive(Debug)]
pub(crate) struct PromCounter(pub(crate) Counter);
impl CounterMetric for PromCounter {
    fn inc(&self) {
        self.0.inc();
    }
}

/// A prometheus histogram as a [`HistogramMetric`].
#[derive(Debug)]
pub(crate) struct PromHistogram(pub(crate) Histogram);
impl HistogramMetric for PromHistogram {
    fn observe(&self, value: f64) {
        self.0.observe(value);
    }
}

/// The informer, reflector and REST client series, registered in one registry; cheap to
/// clone (clones fill the same series).
///
/// ```
/// use prometheus_client::registry::Registry;
/// use kubegen::metrics::{PrometheusMetrics, RestClientMetrics};
///
/// let mut registry = Registry::default();
/// let metrics = PrometheusMetrics::new(&mut registry);
/// metrics.request("GET", "127.0.0.1:6443", 200, std::time::Duration::from_millis(3));
///
/// let mut text = String::new();
/// prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
/// assert!(text.contains(r#"rest_client_requests_total{code="200",method="GET",host="127.0.0.1:6443"} 1"#));
/// ```
#[derive(Debug, Clone)]
pub struct PrometheusMetrics {
    store_items: Family<Labels, FloatGauge>,
    queued_items: Family<Labels, FloatGauge>,
    processing: Histograms,
    store_rv: Family<Labels, FloatGauge>,
    lists: Family<Labels, Counter>,
    list_duration: Histograms,
    items_per_list: Histograms,
    watch_lists: Family<Labels, Counter>,
    watches: Family<Labels, Counter>,
    short_watches: Family<Labels, Counter>,
    watch_duration: Histograms,
    items_per_watch: Histograms,
    last_rv: Family<Labels, FloatGauge>,
    requests: Family<Labels, Counter>,
    request_duration: Histograms,
    rate_limiter: Histograms,
    retries: Family<Labels, Counter>,
    reconciles: Family<Labels, Counter>,
    reconcile_errors: Family<Labels, Counter>,
    terminal_errors: Family<Labels, Counter>,
    reconcile_panics: Family<Labels, Counter>,
    reconcile_time: Histograms,
    active_workers: Family<Labels, Gauge>,
    max_concurrent: Family<Labels, FloatGauge>,
    stale_skips: Family<Labels, Counter>,
    consistency_wait: Histograms,
    leader: Family<Labels, FloatGauge>,
    slowpath: Family<Labels, Counter>,
}

impl PrometheusMetrics {
    /// Registers every family in `registry` and returns the provider that fills them.
    pub fn new(registry: &mut Registry) -> Self {
        let m = Self {
            store_items: Family::default(),
            queued_items: Family::default(),
            processing: Family::new_with_constructor(processing_histogram),
            store_rv: Family::default(),
            lists: Family::default(),
            list_duration: Family::new_with_constructor(default_histogram),
            items_per_list: Family::new_with_constructor(default_histogram),
            watch_lists: Family::default(),
            watches: Family::default(),
            short_watches: Family::default(),
            watch_duration: Family::new_with_constructor(default_histogram),
            items_per_watch: Family::new_with_constructor(default_histogram),
            last_rv: Family::default(),
            requests: Family::default(),
            request_duration: Family::new_with_constructor(rest_histogram),
            rate_limiter: Family::new_with_constructor(rest_histogram),
            retries: Family::default(),
            reconciles: Family::default(),
            reconcile_errors: Family::default(),
            terminal_errors: Family::default(),
            reconcile_panics: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_histogram),
            active_workers: Family::default(),
            max_concurrent: Family::default(),
            stale_skips: Family::default(),
            consistency_wait: Family::new_with_constructor(reconcile_histogram),
            leader: Family::default(),
            slowpath: Family::default(),
        };
        // prometheus-client appends `_total` to counters (not to gauges).
        let r = registry;
        r.register(
            "informer_store_item_total",
            "Total number of items stored in the informer",
            m.store_items.clone(),
        );
        r.register(
            "informer_queued_item_total",
            "Total number of items queued in the informer",
            m.queued_items.clone(),
        );
        r.register(
            "informer_event_processing_duration_seconds",
            "Duration of event processing in the informer",
            m.processing.clone(),
        );
        r.register(
            "informer_store_resource_version",
            "The resourceVersion the informer's cache has applied",
            m.store_rv.clone(),
        );
        r.register(
            "reflector_lists",
            "Total number of API lists done by the reflectors",
            m.lists.clone(),
        );
        r.register(
            "reflector_list_duration_seconds",
            "How long an API list takes to return and decode for the reflectors",
            m.list_duration.clone(),
        );
        r.register(
            "reflector_items_per_list",
            "How many items an API list returns to the reflectors",
            m.items_per_list.clone(),
        );
        r.register(
            "reflector_watchLists",
            "Total number of API initial watchLists done by the reflectors",
            m.watch_lists.clone(),
        );
        r.register(
            "reflector_watches",
            "Total number of API watches done by the reflectors",
            m.watches.clone(),
        );
        r.register(
            "reflector_short_watches",
            "Total number of short API watches done by the reflectors",
            m.short_watches.clone(),
        );
        r.register(
            "reflector_watch_duration_seconds",
            "How long an API watch takes to return and decode for the reflectors",
            m.watch_duration.clone(),
        );
        r.register(
            "reflector_items_per_watch",
            "How many items an API watch returns to the reflectors",
            m.items_per_watch.clone(),
        );
        r.register(
            "reflector_last_resource_version",
            "Last resource version seen for the reflectors",
            m.last_rv.clone(),
        );
        r.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            m.requests.clone(),
        );
        r.register(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.",
            m.request_duration.clone(),
        );
        r.register(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            m.rate_limiter.clone(),
        );
        r.register(
            "rest_client_request_retries",
            "Number of request retries, partitioned by status code, verb, and host.",
            m.retries.clone(),
        );
        r.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            m.reconciles.clone(),
        );
        r.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            m.reconcile_errors.clone(),
        );
        r.register(
            "controller_runtime_terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            m.terminal_errors.clone(),
        );
        r.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            m.reconcile_panics.clone(),
        );
        r.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            m.reconcile_time.clone(),
        );
        r.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            m.active_workers.clone(),
        );
        r.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            m.max_concurrent.clone(),
        );
        r.register(
            "stale_sync_skips",
            "Reconciles skipped because the cache had not caught up with the controller's own write",
            m.stale_skips.clone(),
        );
        r.register(
            "consistency_wait_seconds",
            "Time reconciles waited for the cache to catch up with the controller's own writes",
            m.consistency_wait.clone(),
        );
        r.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            m.leader.clone(),
        );
        r.register(
            "leader_election_slowpath",
            "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
            m.slowpath.clone(),
        );
        m
    }
}

fn name(n: &str) -> Labels {
    labels(&[("name", n)])
}

impl InformerMetricsProvider for PrometheusMetrics {
    fn new_stored_item_metric(&self, n: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(PromFloatGauge(
            self.store_items.get_or_create_owned(&name(n)),
        ))
    }
    fn new_queued_item_metric(&self, n: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(PromFloatGauge(
            self.queued_items.get_or_create_owned(&name(n)),
        ))
    }
    fn new_event_processing_duration_metric(&self, n: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(self.processing.get_or_create_owned(&name(n))))
    }
    fn new_store_resource_version_metric(&self, n: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(PromFloatGauge(self.store_rv.get_or_create_owned(&name(n))))
    }
}

impl ReflectorMetricsProvider for PrometheusMetrics {
    fn new_lists_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(self.lists.get_or_create_owned(&name(n))))
    }
    fn new_list_duration_metric(&self, n: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(
            self.list_duration.get_or_create_owned(&name(n)),
        ))
    }
    fn new_items_in_list_metric(&self, n: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(
            self.items_per_list.get_or_create_owned(&name(n)),
        ))
    }
    fn new_watch_lists_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(self.watch_lists.get_or_create_owned(&name(n))))
    }
    fn new_watches_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(self.watches.get_or_create_owned(&name(n))))
    }
    fn new_short_watches_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(
            self.short_watches.get_or_create_owned(&name(n)),
        ))
    }
    fn new_watch_duration_metric(&self, n: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(
            self.watch_duration.get_or_create_owned(&name(n)),
        ))
    }
    fn new_items_in_watch_metric(&self, n: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(
            self.items_per_watch.get_or_create_owned(&name(n)),
        ))
    }
    fn new_last_resource_version_metric(&self, n: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(PromFloatGauge(self.last_rv.get_or_create_owned(&name(n))))
    }
}

impl RestClientMetrics for PrometheusMetrics {
    fn request(&self, verb: &str, host: &str, code: u16, latency: Duration) {
        let code = code.to_string();
        self.requests
            .get_or_create(&labels(&[
                ("code", &code),
                ("method", verb),
                ("host", host),
            ]))
            .inc();
        self.request_duration
            .get_or_create(&labels(&[("verb", verb), ("host", host)]))
            .observe(latency.as_secs_f64());
    }

    fn rate_limiter_wait(&self, verb: &str, host: &str, wait: Duration) {
        self.rate_limiter
            .get_or_create(&labels(&[("verb", verb), ("host", host)]))
            .observe(wait.as_secs_f64());
    }

    fn retry(&self, verb: &str, host: &str, code: u16) {
        let code = code.to_string();
        self.retries
            .get_or_create(&labels(&[("code", &code), ("verb", verb), ("host", host)]))
            .inc();
    }
}

fn controller(n: &str) -> Labels {
    labels(&[("controller", n)])
}

impl ControllerMetricsProvider for PrometheusMetrics {
    fn new_reconcile_total_metric(&self, n: &str, result: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(self.reconciles.get_or_create_owned(&labels(
            &[("controller", n), ("result", result)],
        ))))
    }
    fn new_reconcile_errors_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(
            self.reconcile_errors.get_or_create_owned(&controller(n)),
        ))
    }
    fn new_terminal_reconcile_errors_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(
            self.terminal_errors.get_or_create_owned(&controller(n)),
        ))
    }
    fn new_reconcile_panics_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(
            self.reconcile_panics.get_or_create_owned(&controller(n)),
        ))
    }
    fn new_reconcile_time_metric(&self, n: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(
            self.reconcile_time.get_or_create_owned(&controller(n)),
        ))
    }
    fn new_active_workers_metric(&self, n: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(PromGauge(
            self.active_workers.get_or_create_owned(&controller(n)),
        ))
    }
    fn new_max_concurrent_reconciles_metric(&self, n: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(PromFloatGauge(
            self.max_concurrent.get_or_create_owned(&controller(n)),
        ))
    }
    fn new_stale_sync_skips_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(
            self.stale_skips.get_or_create_owned(&controller(n)),
        ))
    }
    fn new_consistency_wait_metric(&self, n: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(PromHistogram(
            self.consistency_wait.get_or_create_owned(&controller(n)),
        ))
    }
}

impl LeaderElectionMetricsProvider for PrometheusMetrics {
    fn new_leader_metric(&self, n: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(PromFloatGauge(self.leader.get_or_create_owned(&name(n))))
    }
    fn new_slowpath_metric(&self, n: &str) -> Arc<dyn CounterMetric> {
        Arc::new(PromCounter(self.slowpath.get_or_create_owned(&name(n))))
    }
}
