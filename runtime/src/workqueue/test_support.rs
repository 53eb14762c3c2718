//! Test helpers: a [`MetricsProvider`] that records every value per queue name.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
};

/// Every value recorded for one queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) depth: i64,
    pub(crate) adds: u64,
    pub(crate) latency: Vec<f64>,
    pub(crate) work_duration: Vec<f64>,
    pub(crate) unfinished_work_seconds: f64,
    pub(crate) longest_running_processor_seconds: f64,
    pub(crate) retries: u64,
}

type Store = Arc<Mutex<HashMap<String, Snapshot>>>;

/// Records metrics in memory; clones share the records.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordingProvider {
    store: Store,
}

impl RecordingProvider {
    pub(crate) fn snapshot(&self, name: &str) -> Snapshot {
        self.store.lock().get(name).cloned().unwrap_or_default()
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.store.lock().keys().cloned().collect()
    }

    fn handle(&self, name: &str, field: Field) -> Arc<Handle> {
        self.store.lock().entry(name.to_owned()).or_default();
        Arc::new(Handle {
            store: Arc::clone(&self.store),
            name: name.to_owned(),
            field,
        })
    }
}

#[derive(Debug, Clone, Copy)]
enum Field {
    Depth,
    Adds,
    Latency,
    WorkDuration,
    Unfinished,
    Longest,
    Retries,
}

struct Handle {
    store: Store,
    name: String,
    field: Field,
}

impl Handle {
    fn with(&self, f: impl FnOnce(&mut Snapshot)) {
        f(self.store.lock().entry(self.name.clone()).or_default());
    }
}

impl GaugeMetric for Handle {
    fn inc(&self) {
        self.with(|s| s.depth += 1);
    }
    fn dec(&self) {
        self.with(|s| s.depth -= 1);
    }
}

impl CounterMetric for Handle {
    fn inc(&self) {
        let field = self.field;
        self.with(|s| match field {
            Field::Adds => s.adds += 1,
            _ => s.retries += 1,
        });
    }
}

impl HistogramMetric for Handle {
    fn observe(&self, value: f64) {
        let field = self.field;
        self.with(|s| match field {
            Field::Latency => s.latency.push(value),
            _ => s.work_duration.push(value),
        });
    }
}

impl SettableGaugeMetric for Handle {
    fn set(&self, value: f64) {
        let field = self.field;
        self.with(|s| match field {
            Field::Unfinished => s.unfinished_work_seconds = value,
            _ => s.longest_running_processor_seconds = value,
        });
    }
}

impl MetricsProvider for RecordingProvider {
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        self.handle(name, Field::Depth)
    }
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        self.handle(name, Field::Adds)
    }
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        self.handle(name, Field::Latency)
    }
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        self.handle(name, Field::WorkDuration)
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric> {
        self.handle(name, Field::Unfinished)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        self.handle(name, Field::Longest)
    }
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        self.handle(name, Field::Retries)
    }
}
