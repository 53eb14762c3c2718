//! Reflector metrics (client-go `tools/cache/reflector_metrics.go`, registered by
//! component-base as the `reflector_*` series).

use std::sync::Arc;

use super::{CounterMetric, HistogramMetric, SettableGaugeMetric, resource_version_value};

/// Creates the metrics of one named reflector (client-go's reflector `MetricsProvider`).
pub trait ReflectorMetricsProvider: Send + Sync {
    /// `reflector_lists_total`.
    fn new_lists_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `reflector_list_duration_seconds`: one list request, returned and decoded.
    fn new_list_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `reflector_items_per_list`.
    fn new_items_in_list_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `reflector_watchLists_total`: watches opened with `sendInitialEvents=true`.
    fn new_watch_lists_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `reflector_watches_total`.
    fn new_watches_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `reflector_short_watches_total`: watches that ended within a second having
    /// delivered nothing.
    fn new_short_watches_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `reflector_watch_duration_seconds`: from opening a watch to its end.
    fn new_watch_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `reflector_items_per_watch`.
    fn new_items_in_watch_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `reflector_last_resource_version`.
    fn new_last_resource_version_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
}

/// The metric handles of one reflector.
#[derive(Clone)]
pub struct ReflectorMetrics {
    pub(crate) lists: Arc<dyn CounterMetric>,
    pub(crate) list_duration: Arc<dyn HistogramMetric>,
    pub(crate) items_in_list: Arc<dyn HistogramMetric>,
    pub(crate) watch_lists: Arc<dyn CounterMetric>,
    pub(crate) watches: Arc<dyn CounterMetric>,
    pub(crate) short_watches: Arc<dyn CounterMetric>,
    pub(crate) watch_duration: Arc<dyn HistogramMetric>,
    pub(crate) items_in_watch: Arc<dyn HistogramMetric>,
    last_resource_version: Arc<dyn SettableGaugeMetric>,
}

impl std::fmt::Debug for ReflectorMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReflectorMetrics").finish_non_exhaustive()
    }
}

impl ReflectorMetrics {
    /// The handles for the reflector `name` (the series' `name` label).
    pub fn new(name: &str, provider: &(impl ReflectorMetricsProvider + ?Sized)) -> Self {
        Self {
            lists: provider.new_lists_metric(name),
            list_duration: provider.new_list_duration_metric(name),
            items_in_list: provider.new_items_in_list_metric(name),
            watch_lists: provider.new_watch_lists_metric(name),
            watches: provider.new_watches_metric(name),
            short_watches: provider.new_short_watches_metric(name),
            watch_duration: provider.new_watch_duration_metric(name),
            items_in_watch: provider.new_items_in_watch_metric(name),
            last_resource_version: provider.new_last_resource_version_metric(name),
        }
    }

    /// Records the last resourceVersion seen.
    pub fn last_resource_version(&self, rv: &str) {
        if let Some(v) = resource_version_value(rv) {
            self.last_resource_version.set(v);
        }
    }
}
