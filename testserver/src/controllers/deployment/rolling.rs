//! The arithmetic of a rolling update (kubernetes `pkg/controller/deployment/rolling.go`
//! and `pkg/controller/deployment/util/deployment_util.go`): how far `maxSurge` and
//! `maxUnavailable` let the rollout go, how much the new ReplicaSet may grow
//! (`NewRSNewReplicas`), and how much the old ones may shrink (`reconcileOldReplicaSets`:
//! first `cleanupUnhealthyReplicas`, then `scaleDownOldReplicaSetsForRollingUpdate`).
//!
//! Everything here works on replica counts alone ([`Counts`]); the sync loop
//! ([`super::sync`]) maps the results back onto ReplicaSets.

use k8s_openapi::{api::apps::v1::Deployment, apimachinery::pkg::util::intstr::IntOrString};

use super::spec::{self, Strategy};

/// A `maxSurge` / `maxUnavailable` value that is neither an integer nor a percentage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value for IntOrString: {0:?} is not an integer or a percentage")]
pub(crate) struct InvalidIntOrPercent(pub String);

/// The replica counts of one ReplicaSet the rollout arithmetic looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    /// `spec.replicas`.
    pub spec: i32,
    /// `status.availableReplicas`.
    pub available: i32,
}

/// `maxSurge` and `maxUnavailable` resolved against the desired replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fenceposts {
    /// How many pods above the desired count may exist.
    pub surge: i32,
    /// How many of the desired pods may be unavailable.
    pub unavailable: i32,
}

/// `intstr.GetScaledValueFromIntOrPercent`: an integer as is, a percentage of `total`
/// rounded up or down.
pub(crate) fn scaled_value(
    value: &IntOrString,
    total: i32,
    round_up: bool,
) -> Result<i32, InvalidIntOrPercent> {
    match value {
        IntOrString::Int(n) => Ok(*n),
        IntOrString::String(s) => {
            let percent = s
                .strip_suffix('%')
                .and_then(|p| p.parse::<i32>().ok())
                .ok_or_else(|| InvalidIntOrPercent(s.clone()))?;
            let exact = f64::from(percent) * f64::from(total) / 100.0;
            // `as` saturates: no overflow whatever the inputs.
            Ok(if round_up {
                exact.ceil() as i32
            } else {
                exact.floor() as i32
            })
        }
    }
}

/// `ResolveFenceposts`: surge rounds up, unavailable rounds down, and if both come out 0
/// one pod may be unavailable (or the rollout could never move).
pub(crate) fn resolve_fenceposts(
    max_surge: &IntOrString,
    max_unavailable: &IntOrString,
    desired: i32,
) -> Result<Fenceposts, InvalidIntOrPercent> {
    let surge = scaled_value(max_surge, desired, true)?;
    let mut unavailable = scaled_value(max_unavailable, desired, false)?;
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    Ok(Fenceposts { surge, unavailable })
}

/// `MaxSurge`: 0 for `Recreate` (and for an invalid value, as Go ignores the error there).
pub(crate) fn max_surge(d: &Deployment) -> i32 {
    match spec::strategy(d) {
        Strategy::RollingUpdate {
            max_surge,
            max_unavailable,
        } => resolve_fenceposts(&max_surge, &max_unavailable, spec::replicas(d))
            .map(|f| f.surge)
            .unwrap_or(0),
        _ => 0,
    }
}

/// `MaxUnavailable`: 0 for `Recreate` or 0 replicas, never more than the replicas.
pub(crate) fn max_unavailable(d: &Deployment) -> i32 {
    let replicas = spec::replicas(d);
    match spec::strategy(d) {
        Strategy::RollingUpdate {
            max_surge,
            max_unavailable,
        } if replicas > 0 => resolve_fenceposts(&max_surge, &max_unavailable, replicas)
            .map(|f| f.unavailable.min(replicas))
            .unwrap_or(0),
        _ => 0,
    }
}

/// `NewRSNewReplicas` for a rolling update: the new ReplicaSet grows by what the surge
/// leaves (`desired + surge - every ReplicaSet's spec.replicas`), never past `desired`.
/// `all_spec` is the sum of every ReplicaSet's `spec.replicas`, the new one's included.
pub(crate) fn new_rs_new_replicas(desired: i32, surge: i32, all_spec: i32, new_spec: i32) -> i32 {
    let max_total = desired.saturating_add(surge);
    if all_spec >= max_total {
        return new_spec;
    }
    let scale_up = (max_total - all_spec).min(desired.saturating_sub(new_spec));
    new_spec.saturating_add(scale_up)
}

/// `reconcileOldReplicaSets`: the new `spec.replicas` of each active old ReplicaSet
/// (`old`, oldest first) after scaling down as far as availability allows; entries that do
/// not change keep their count. `all_spec` is the sum of every ReplicaSet's
/// `spec.replicas` (inactive ones count 0), `new` the new ReplicaSet's counts.
///
/// 1. `maxScaledDown = all_spec - (desired - maxUnavailable) - new.unavailable`: old pods
///    beyond that would leave too few available ones, counting the new set's unavailable
///    pods as lost (so a crash-looping new set does not eat the old ones).
/// 2. `cleanupUnhealthyReplicas`: shrink each old set by its unavailable pods, up to that
///    bound — removing a pod that is not available costs no availability.
/// 3. `scaleDownOldReplicaSetsForRollingUpdate`: with `available` the available pods of
///    the active old sets and the new one, remove `available - (desired - maxUnavailable)`
///    more, oldest set first.
pub(crate) fn reconcile_old(
    desired: i32,
    max_unavailable: i32,
    all_spec: i32,
    new: Counts,
    old: &[Counts],
) -> Vec<i32> {
    let mut scaled: Vec<i32> = old.iter().map(|c| c.spec).collect();
    let old_total: i64 = old.iter().map(|c| i64::from(c.spec)).sum();
    if old_total == 0 {
        return scaled;
    }
    let min_available = i64::from(desired) - i64::from(max_unavailable);
    let new_unavailable = i64::from(new.spec) - i64::from(new.available);
    let max_scaled_down = i64::from(all_spec) - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return scaled;
    }

    // cleanupUnhealthyReplicas
    let mut cleaned = 0i64;
    for (i, rs) in old.iter().enumerate() {
        if cleaned >= max_scaled_down {
            break;
        }
        if rs.spec == 0 || rs.spec == rs.available {
            continue;
        }
        let unhealthy = i64::from(rs.spec) - i64::from(rs.available);
        let down = (max_scaled_down - cleaned).min(unhealthy);
        if down <= 0 {
            // More available than wanted (a stale status): nothing unhealthy to remove.
            continue;
        }
        scaled[i] = clamp_i32(i64::from(rs.spec) - down);
        cleaned += down;
    }

    // scaleDownOldReplicaSetsForRollingUpdate
    let available: i64 =
        old.iter().map(|c| i64::from(c.available)).sum::<i64>() + i64::from(new.available);
    if available <= min_available {
        return scaled;
    }
    let to_scale_down = available - min_available;
    let mut done = 0i64;
    for size in &mut scaled {
        if done >= to_scale_down {
            break;
        }
        if *size == 0 {
            continue;
        }
        let down = i64::from(*size).min(to_scale_down - done);
        *size = clamp_i32(i64::from(*size) - down);
        done += down;
    }
    scaled
}

/// `n` as an `i32`, saturating.
pub(crate) fn clamp_i32(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::compat;

    fn pct(s: &str) -> IntOrString {
        IntOrString::String(s.to_owned())
    }

    #[test]
    fn percentages_round_up_for_surge_and_down_for_unavailable() {
        assert_eq!(
            resolve_fenceposts(&pct("25%"), &pct("25%"), 10),
            Ok(Fenceposts {
                surge: 3,
                unavailable: 2
            })
        );
        assert_eq!(
            resolve_fenceposts(&pct("25%"), &pct("25%"), 1),
            Ok(Fenceposts {
                surge: 1,
                unavailable: 0
            })
        );
        assert_eq!(
            resolve_fenceposts(&IntOrString::Int(3), &IntOrString::Int(2), 10),
            Ok(Fenceposts {
                surge: 3,
                unavailable: 2
            })
        );
    }

    #[test]
    fn both_zero_allows_one_unavailable() {
        assert_eq!(
            resolve_fenceposts(&IntOrString::Int(0), &pct("0%"), 5),
            Ok(Fenceposts {
                surge: 0,
                unavailable: 1
            })
        );
    }

    #[test]
    fn values_that_are_not_percentages_are_errors() {
        assert!(scaled_value(&pct("25"), 10, true).is_err());
        assert!(scaled_value(&pct("x%"), 10, true).is_err());
        assert_eq!(scaled_value(&pct("150%"), 4, false), Ok(6));
    }

    #[test]
    fn max_unavailable_never_exceeds_replicas_and_is_zero_for_zero_replicas() {
        use k8s_openapi::api::apps::v1::{
            DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
        };
        let d = |replicas: i32, unavailable: i32| Deployment {
            spec: compat::field(DeploymentSpec {
                replicas: Some(replicas),
                strategy: Some(DeploymentStrategy {
                    type_: Some("RollingUpdate".to_owned()),
                    rolling_update: Some(RollingUpdateDeployment {
                        max_surge: Some(IntOrString::Int(1)),
                        max_unavailable: Some(IntOrString::Int(unavailable)),
                    }),
                }),
                ..DeploymentSpec::default()
            }),
            ..Deployment::default()
        };
        assert_eq!(max_unavailable(&d(3, 5)), 3);
        assert_eq!(max_unavailable(&d(0, 5)), 0);
        assert_eq!(max_surge(&d(3, 5)), 1);
    }

    #[test]
    fn the_new_replica_set_grows_by_the_surge_left() {
        // 10 desired, surge 3: old set has 10, new 0 -> new may have 3.
        assert_eq!(new_rs_new_replicas(10, 3, 10, 0), 3);
        // Already at 13 pods: no growth.
        assert_eq!(new_rs_new_replicas(10, 3, 13, 3), 3);
        // Never past desired.
        assert_eq!(new_rs_new_replicas(10, 3, 9, 9), 10);
        // Saturating with absurd inputs.
        assert_eq!(new_rs_new_replicas(i32::MAX, i32::MAX, 0, 0), i32::MAX);
    }

    #[test]
    fn old_sets_shrink_while_availability_allows() {
        // 10 desired, maxUnavailable 2; old has 10 available, new 3 with 0 available.
        // maxScaledDown = 13 - 8 - 3 = 2; nothing unhealthy; available 10 - 8 = 2.
        let scaled = reconcile_old(
            10,
            2,
            13,
            Counts {
                spec: 3,
                available: 0,
            },
            &[Counts {
                spec: 10,
                available: 10,
            }],
        );
        assert_eq!(scaled, vec![8]);
    }

    #[test]
    fn unhealthy_old_replicas_go_first_and_a_crashlooping_new_set_blocks() {
        // The rollout example of rolling.go: 13 pods, 8 min available, new set's 5 pods
        // all unavailable -> maxScaledDown 0, nothing moves.
        let blocked = reconcile_old(
            10,
            2,
            13,
            Counts {
                spec: 5,
                available: 0,
            },
            &[Counts {
                spec: 8,
                available: 7,
            }],
        );
        assert_eq!(blocked, vec![8]);
        // Two old sets, the older with 2 unhealthy pods: cleaned up first (bounded by
        // maxScaledDown = 12 - 8 - 0 = 4), then availability 8 + 2 = 10 allows 2 more.
        let scaled = reconcile_old(
            10,
            2,
            12,
            Counts {
                spec: 2,
                available: 2,
            },
            &[
                Counts {
                    spec: 5,
                    available: 3,
                },
                Counts {
                    spec: 5,
                    available: 5,
                },
            ],
        );
        assert_eq!(scaled, vec![1, 5]);
    }

    #[test]
    fn nothing_to_scale_down_without_old_pods() {
        assert_eq!(
            reconcile_old(3, 1, 3, Counts::default(), &[Counts::default()]),
            vec![0]
        );
        assert!(reconcile_old(3, 1, 3, Counts::default(), &[]).is_empty());
    }
}
