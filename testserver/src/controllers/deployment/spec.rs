//! What a Deployment's spec asks for, with the `apps/v1` defaults applied (kubernetes
//! `pkg/apis/apps/v1/defaults.go` `SetDefaults_Deployment`): the controller reads every
//! field through these, so an object the server did not default (or a test built by hand)
//! behaves as a defaulted one, and no bad number panics.
//!
//! | field | default |
//! |---|---|
//! | `replicas` | 1 (negative reads as 0) |
//! | `strategy.type` | `RollingUpdate` |
//! | `strategy.rollingUpdate.maxSurge` / `maxUnavailable` | `25%` each |
//! | `progressDeadlineSeconds` | 600 (`i32::MAX`: no deadline) |
//! | `revisionHistoryLimit` | 10 |
//! | `minReadySeconds` | 0 |

use crate::controllers::compat::Opt;
use k8s_openapi::{
    api::apps::v1::{Deployment, DeploymentStatus},
    apimachinery::pkg::util::intstr::IntOrString,
};

/// The default `progressDeadlineSeconds`.
pub(crate) const DEFAULT_PROGRESS_DEADLINE_SECONDS: i32 = 600;
/// The default `revisionHistoryLimit`.
pub(crate) const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;

/// How a Deployment replaces its pods (`spec.strategy.type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// `RollingUpdate`, with its `maxSurge` and `maxUnavailable` (defaults filled in).
    RollingUpdate {
        /// `maxSurge`.
        max_surge: IntOrString,
        /// `maxUnavailable`.
        max_unavailable: IntOrString,
    },
    /// `Recreate`.
    Recreate,
    /// Any other type (the server rejects these; the controller reports an error).
    Unknown(String),
}

/// `25%`.
fn quarter() -> IntOrString {
    IntOrString::String("25%".to_owned())
}

/// `spec.replicas`, 1 when unset, never negative.
pub(crate) fn replicas(d: &Deployment) -> i32 {
    d.spec.opt().and_then(|s| s.replicas).unwrap_or(1).max(0)
}

/// `spec.strategy`, defaults filled in.
pub(crate) fn strategy(d: &Deployment) -> Strategy {
    let strategy = d.spec.opt().and_then(|s| s.strategy.as_ref());
    match strategy.and_then(|s| s.type_.as_deref()) {
        None | Some("RollingUpdate") => {
            let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
            Strategy::RollingUpdate {
                max_surge: rolling
                    .and_then(|r| r.max_surge.clone())
                    .unwrap_or_else(quarter),
                max_unavailable: rolling
                    .and_then(|r| r.max_unavailable.clone())
                    .unwrap_or_else(quarter),
            }
        }
        Some("Recreate") => Strategy::Recreate,
        Some(other) => Strategy::Unknown(other.to_owned()),
    }
}

/// `spec.paused`.
pub(crate) fn paused(d: &Deployment) -> bool {
    d.spec.opt().and_then(|s| s.paused).unwrap_or(false)
}

/// `spec.minReadySeconds` (0 when unset).
pub(crate) fn min_ready_seconds(d: &Deployment) -> i32 {
    d.spec.opt().and_then(|s| s.min_ready_seconds).unwrap_or(0)
}

/// The progress deadline in seconds, unless there is none (`HasProgressDeadline`:
/// `progressDeadlineSeconds` of `i32::MAX` turns the check off).
pub(crate) fn progress_deadline(d: &Deployment) -> Option<i32> {
    let seconds = d
        .spec
        .opt()
        .and_then(|s| s.progress_deadline_seconds)
        .unwrap_or(DEFAULT_PROGRESS_DEADLINE_SECONDS);
    (seconds != i32::MAX).then_some(seconds.max(0))
}

/// `spec.revisionHistoryLimit` (10 when unset, never negative).
pub(crate) fn revision_history_limit(d: &Deployment) -> i32 {
    d.spec
        .opt()
        .and_then(|s| s.revision_history_limit)
        .unwrap_or(DEFAULT_REVISION_HISTORY_LIMIT)
        .max(0)
}

/// `metadata.generation` (0 when unset).
pub(crate) fn generation(d: &Deployment) -> i64 {
    d.metadata.generation.unwrap_or(0)
}

/// The Deployment's status, or an empty one.
pub(crate) fn status(d: &Deployment) -> DeploymentStatus {
    d.status.clone().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStrategy};

    use super::*;
    use crate::controllers::compat;

    fn with_spec(spec: DeploymentSpec) -> Deployment {
        Deployment {
            spec: compat::field(spec),
            ..Deployment::default()
        }
    }

    #[test]
    fn an_empty_deployment_reads_as_the_defaults() {
        let d = Deployment::default();
        assert_eq!(replicas(&d), 1);
        assert_eq!(
            strategy(&d),
            Strategy::RollingUpdate {
                max_surge: quarter(),
                max_unavailable: quarter()
            }
        );
        assert!(!paused(&d));
        assert_eq!(progress_deadline(&d), Some(600));
        assert_eq!(revision_history_limit(&d), 10);
        assert_eq!(min_ready_seconds(&d), 0);
    }

    #[test]
    fn bad_numbers_are_clamped_and_max_int_deadline_means_none() {
        let d = with_spec(DeploymentSpec {
            replicas: Some(-3),
            revision_history_limit: Some(-1),
            progress_deadline_seconds: Some(i32::MAX),
            ..DeploymentSpec::default()
        });
        assert_eq!(replicas(&d), 0);
        assert_eq!(revision_history_limit(&d), 0);
        assert_eq!(progress_deadline(&d), None);
    }

    #[test]
    fn strategy_types_are_recognised() {
        let typed = |t: &str| {
            with_spec(DeploymentSpec {
                strategy: Some(DeploymentStrategy {
                    type_: Some(t.to_owned()),
                    rolling_update: None,
                }),
                ..DeploymentSpec::default()
            })
        };
        assert_eq!(strategy(&typed("Recreate")), Strategy::Recreate);
        assert_eq!(
            strategy(&typed("Blue")),
            Strategy::Unknown("Blue".to_owned())
        );
    }
}
