//! Metrics: the primitive metric handles every component records into, the provider traits
//! that hand them out per component (client-go's `MetricsProvider`s: the workqueue's lives
//! in [`crate::workqueue`], the informer's, reflector's and REST client's here), and
//! [`PrometheusMetrics`], which registers client-go's series in a `prometheus-client`
//! registry.
//!
//! Nothing is global: a component records metrics only when it was built with a provider
//! (client-go installs providers process-wide with `Set*MetricsProvider`; here the informer
//! builder, the factory builder and the client builder each take one).
//!
//! * `informer`: [`InformerMetricsProvider`] and the handles an informer keeps.
//! * `reflector`: [`ReflectorMetricsProvider`] and the handles a
//!   [`MeteredListerWatcher`](crate::cache::MeteredListerWatcher) keeps.
//! * `rest`: [`RestClientMetrics`], what the client records per request.
//! * `controller`: [`ControllerMetricsProvider`] and the handles a
//!   [`Controller`](crate::controller::Controller) keeps (controller-runtime's series).
//! * `leaderelection`: [`LeaderElectionMetricsProvider`] (client-go's
//!   `leader_election_*` series).
//! * `prometheus`: [`PrometheusMetrics`], all of them over one registry.
//!
//! This module imports no other part of the crate: `cache`, `client` and `workqueue` record
//! into it.

mod controller;
mod informer;
mod leaderelection;
mod prometheus;
mod reflector;
mod rest;

pub use controller::{ControllerMetrics, ControllerMetricsProvider, ReconcileResult};
pub use informer::{InformerMetrics, InformerMetricsProvider};
pub use leaderelection::{LeaderElectionMetrics, LeaderElectionMetricsProvider};
pub use prometheus::PrometheusMetrics;
pub(crate) use prometheus::{
    Labels as PrometheusLabels, PromCounter, PromFloatGauge, PromGauge, PromHistogram,
    labels as prometheus_labels, workqueue_duration_histogram,
};
pub use reflector::{ReflectorMetrics, ReflectorMetricsProvider};
pub use rest::RestClientMetrics;

/// A gauge that moves up and down by one (a queue's depth).
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge that is set to an absolute value.
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the gauge to `value`.
    fn set(&self, value: f64);
}

/// A monotonically increasing counter.
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A histogram of observations (seconds, or counts).
pub trait HistogramMetric: Send + Sync {
    /// Records one observation.
    fn observe(&self, value: f64);
}

/// A metric handle that discards every value.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NoopMetric;

impl GaugeMetric for NoopMetric {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl SettableGaugeMetric for NoopMetric {
    fn set(&self, _value: f64) {}
}
impl CounterMetric for NoopMetric {
    fn inc(&self) {}
}
impl HistogramMetric for NoopMetric {
    fn observe(&self, _value: f64) {}
}

/// Both cache providers, as the informer builder and the factory take them.
pub trait CacheMetricsProvider: InformerMetricsProvider + ReflectorMetricsProvider {}

impl<T: InformerMetricsProvider + ReflectorMetricsProvider + ?Sized> CacheMetricsProvider for T {}

/// A resourceVersion as a gauge value: kube-apiserver's are decimal integers (etcd
/// revisions); others record nothing.
pub(crate) fn resource_version_value(rv: &str) -> Option<f64> {
    rv.parse::<u64>().ok().map(|v| v as f64)
}
