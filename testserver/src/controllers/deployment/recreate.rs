//! The `Recreate` strategy (kubernetes `pkg/controller/deployment/recreate.go`
//! `rolloutRecreate`): every old pod goes before any new one starts.
//!
//! 1. Scale every active old ReplicaSet to 0; if any was scaled, stop here (status only).
//! 2. Wait while old pods remain. kube-controller-manager looks at the pods themselves
//!    (`oldPodsRunning`); this controller does not watch pods, and uses the old
//!    ReplicaSets' `status.replicas` instead: the ReplicaSet controller counts the pods it
//!    has that are not terminating, so 0 everywhere means no old pod runs. The ReplicaSet
//!    status changing wakes the Deployment again (it owns them), so no polling is needed.
//! 3. Create the new ReplicaSet if it does not exist, and scale it to the Deployment's
//!    replicas.

use k8s_openapi::api::apps::v1::ReplicaSet;

use super::replicasets as rs;

/// What a `Recreate` rollout does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Scale the active old ReplicaSets to 0.
    ScaleDownOld,
    /// Old pods still run: only the status moves.
    WaitForOldPods,
    /// No old pod is left: bring up the new ReplicaSet.
    ScaleUpNew,
}

/// The next step of a `Recreate` rollout over the Deployment's `old` ReplicaSets.
pub(crate) fn next_step(old: &[&ReplicaSet]) -> Step {
    if old.iter().any(|r| rs::spec_replicas(r) > 0) {
        Step::ScaleDownOld
    } else if old.iter().any(|r| rs::status_replicas(r) > 0) {
        Step::WaitForOldPods
    } else {
        Step::ScaleUpNew
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{ReplicaSetSpec, ReplicaSetStatus};

    use super::*;
    use crate::controllers::compat;

    fn set(spec: i32, status: i32) -> ReplicaSet {
        ReplicaSet {
            spec: compat::field(ReplicaSetSpec {
                replicas: Some(spec),
                ..ReplicaSetSpec::default()
            }),
            status: Some(ReplicaSetStatus {
                replicas: status,
                ..ReplicaSetStatus::default()
            }),
            ..ReplicaSet::default()
        }
    }

    #[test]
    fn old_sets_go_down_then_their_pods_drain_then_the_new_set_comes_up() {
        let (running, draining, gone) = (set(2, 2), set(0, 1), set(0, 0));
        assert_eq!(next_step(&[&running, &gone]), Step::ScaleDownOld);
        assert_eq!(next_step(&[&draining, &gone]), Step::WaitForOldPods);
        assert_eq!(next_step(&[&gone]), Step::ScaleUpNew);
        assert_eq!(next_step(&[]), Step::ScaleUpNew);
    }
}
