//! Controller metrics (controller-runtime `pkg/internal/controller/metrics`): the
//! `controller_runtime_*` series, labelled by controller name.

use std::sync::Arc;

use super::{CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric};

/// How a reconcile ended: the `result` label of `controller_runtime_reconcile_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReconcileResult {
    /// Succeeded without asking to be requeued.
    Success,
    /// Failed (including terminal errors, panics and timeouts).
    Error,
    /// Succeeded and asked to run again after a delay.
    RequeueAfter,
}

impl ReconcileResult {
    /// The label value controller-runtime uses.
    pub fn label(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::RequeueAfter => "requeue_after",
        }
    }
}

/// Creates the metrics of one named controller.
pub trait ControllerMetricsProvider: Send + Sync {
    /// `controller_runtime_reconcile_total{controller, result}`.
    fn new_reconcile_total_metric(&self, controller: &str, result: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_reconcile_errors_total{controller}`.
    fn new_reconcile_errors_metric(&self, controller: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_terminal_reconcile_errors_total{controller}`.
    fn new_terminal_reconcile_errors_metric(&self, controller: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_reconcile_panics_total{controller}`.
    fn new_reconcile_panics_metric(&self, controller: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_reconcile_time_seconds{controller}`.
    fn new_reconcile_time_metric(&self, controller: &str) -> Arc<dyn HistogramMetric>;
    /// `controller_runtime_active_workers{controller}`: reconciles running now.
    fn new_active_workers_metric(&self, controller: &str) -> Arc<dyn GaugeMetric>;
    /// `controller_runtime_max_concurrent_reconciles{controller}`.
    fn new_max_concurrent_reconciles_metric(
        &self,
        controller: &str,
    ) -> Arc<dyn SettableGaugeMetric>;
    /// `stale_sync_skips_total{controller}`: reconciles skipped (and requeued) because the
    /// cache had not caught up with the controller's own write in time (KEP-5647).
    fn new_stale_sync_skips_metric(&self, controller: &str) -> Arc<dyn CounterMetric>;
    /// `consistency_wait_seconds{controller}`: how long reconciles waited for the cache to
    /// catch up with the controller's own writes.
    fn new_consistency_wait_metric(&self, controller: &str) -> Arc<dyn HistogramMetric>;
}

/// The metric handles of one controller.
#[derive(Clone)]
pub struct ControllerMetrics {
    success: Arc<dyn CounterMetric>,
    error: Arc<dyn CounterMetric>,
    requeue_after: Arc<dyn CounterMetric>,
    errors: Arc<dyn CounterMetric>,
    terminal_errors: Arc<dyn CounterMetric>,
    panics: Arc<dyn CounterMetric>,
    time: Arc<dyn HistogramMetric>,
    active_workers: Arc<dyn GaugeMetric>,
    max_concurrent: Arc<dyn SettableGaugeMetric>,
    stale_skips: Arc<dyn CounterMetric>,
    consistency_wait: Arc<dyn HistogramMetric>,
}

impl std::fmt::Debug for ControllerMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerMetrics").finish_non_exhaustive()
    }
}

impl ControllerMetrics {
    /// The handles for the controller `name`.
    pub fn new(name: &str, provider: &(impl ControllerMetricsProvider + ?Sized)) -> Self {
        let total =
            |result: ReconcileResult| provider.new_reconcile_total_metric(name, result.label());
        Self {
            success: total(ReconcileResult::Success),
            error: total(ReconcileResult::Error),
            requeue_after: total(ReconcileResult::RequeueAfter),
            errors: provider.new_reconcile_errors_metric(name),
            terminal_errors: provider.new_terminal_reconcile_errors_metric(name),
            panics: provider.new_reconcile_panics_metric(name),
            time: provider.new_reconcile_time_metric(name),
            active_workers: provider.new_active_workers_metric(name),
            max_concurrent: provider.new_max_concurrent_reconciles_metric(name),
            stale_skips: provider.new_stale_sync_skips_metric(name),
            consistency_wait: provider.new_consistency_wait_metric(name),
        }
    }

    /// Records the configured concurrency.
    pub fn max_concurrent_reconciles(&self, n: usize) {
        self.max_concurrent.set(n as f64);
    }

    /// A reconcile waited `seconds` for the cache; `skipped` when it gave up.
    pub fn consistency_wait(&self, seconds: f64, skipped: bool) {
        self.consistency_wait.observe(seconds);
        if skipped {
            self.stale_skips.inc();
        }
    }

    /// A reconcile started.
    pub fn started(&self) {
        self.active_workers.inc();
    }

    /// A reconcile ended after `seconds`, with `result`; `terminal` and `panicked` say
    /// how an error came about.
    pub fn finished(&self, seconds: f64, result: ReconcileResult, terminal: bool, panicked: bool) {
        self.active_workers.dec();
        self.time.observe(seconds);
        match result {
            ReconcileResult::Success => self.success.inc(),
            ReconcileResult::RequeueAfter => self.requeue_after.inc(),
            ReconcileResult::Error => {
                self.error.inc();
                self.errors.inc();
                if terminal {
                    self.terminal_errors.inc();
                }
                if panicked {
                    self.panics.inc();
                }
            }
        }
    }
}
