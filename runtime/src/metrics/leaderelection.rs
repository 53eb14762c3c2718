//! Leader-election metrics (client-go `tools/leaderelection/metrics.go`).

use std::sync::Arc;

use super::{CounterMetric, SettableGaugeMetric};

/// Creates the metrics of one named election.
pub trait LeaderElectionMetricsProvider: Send + Sync {
    /// `leader_election_master_status{name}`: 1 while this candidate leads, 0 otherwise.
    fn new_leader_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
    /// `leader_election_slowpath_total{name}`: renewals that had to read the lock first
    /// because the optimistic update failed.
    fn new_slowpath_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
}

/// The metric handles of one election.
#[derive(Clone)]
pub struct LeaderElectionMetrics {
    leader: Arc<dyn SettableGaugeMetric>,
    slowpath: Arc<dyn CounterMetric>,
}

impl std::fmt::Debug for LeaderElectionMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElectionMetrics")
            .finish_non_exhaustive()
    }
}

impl LeaderElectionMetrics {
    /// The handles for the election `name`.
    pub fn new(name: &str, provider: &(impl LeaderElectionMetricsProvider + ?Sized)) -> Self {
        Self {
            leader: provider.new_leader_metric(name),
            slowpath: provider.new_slowpath_metric(name),
        }
    }

    /// This candidate became, or stopped being, the leader.
    pub fn leading(&self, on: bool) {
        self.leader.set(if on { 1.0 } else { 0.0 });
    }

    /// A renewal went the slow path.
    pub fn slowpath(&self) {
        self.slowpath.inc();
    }
}
