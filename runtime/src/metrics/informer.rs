//! Informer metrics (client-go `tools/cache/informer_metrics.go`, registered by
//! component-base as the `informer_*` series).

use std::sync::Arc;

use super::{HistogramMetric, SettableGaugeMetric, resource_version_value};

/// Creates the metrics of one named informer (client-go's `InformerMetricsProvider`).
pub trait InformerMetricsProvider: Send + Sync {
    /// `informer_store_item_total`: objects in the informer's cache.
    fn new_stored_item_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
    /// `informer_queued_item_total`: items waiting in the informer's queue.
    fn new_queued_item_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
    /// `informer_event_processing_duration_seconds`: applying one popped item to the cache
    /// and handing it to the handlers.
    fn new_event_processing_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `informer_store_resource_version`: the resourceVersion the cache has applied
    /// (`last_store_sync_resource_version`; client-go exports only the reflector's).
    fn new_store_resource_version_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
}

/// The metric handles of one informer.
#[derive(Clone)]
pub struct InformerMetrics {
    stored_items: Arc<dyn SettableGaugeMetric>,
    queued_items: Arc<dyn SettableGaugeMetric>,
    processing: Arc<dyn HistogramMetric>,
    store_rv: Arc<dyn SettableGaugeMetric>,
}

impl std::fmt::Debug for InformerMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InformerMetrics").finish_non_exhaustive()
    }
}

impl InformerMetrics {
    /// The handles for the informer `name` (the series' `name` label).
    pub fn new(name: &str, provider: &(impl InformerMetricsProvider + ?Sized)) -> Self {
        Self {
            stored_items: provider.new_stored_item_metric(name),
            queued_items: provider.new_queued_item_metric(name),
            processing: provider.new_event_processing_duration_metric(name),
            store_rv: provider.new_store_resource_version_metric(name),
        }
    }

    /// Records one processed item: how long it took, and the cache's size after.
    pub fn processed(&self, seconds: f64, stored: usize) {
        self.processing.observe(seconds);
        self.stored_items.set(stored as f64);
    }

    /// Records how many items wait in the queue.
    pub fn queued(&self, queued: usize) {
        self.queued_items.set(queued as f64);
    }

    /// Records the resourceVersion the cache has applied.
    pub fn store_resource_version(&self, rv: &str) {
        if let Some(v) = resource_version_value(rv) {
            self.store_rv.set(v);
        }
    }
}
