//! Scaling a Deployment whose `spec.replicas` changed, mid-rollout or not (kubernetes
//! `pkg/controller/deployment/sync.go` `isScalingEvent` and `scale`, with
//! `FindActiveOrLatest`, `IsSaturated` and `GetProportion` of
//! `pkg/controller/deployment/util/deployment_util.go`).
//!
//! 1. A scaling event is an active ReplicaSet whose `desired-replicas` annotation differs
//!    from the Deployment's replicas.
//! 2. With at most one active ReplicaSet (or none: then the newest), that one is scaled to
//!    the Deployment's replicas.
//! 3. With a saturated new ReplicaSet (all replicas wanted and available), the old ones are
//!    scaled to 0.
//! 4. Otherwise, in a rolling update, the difference between what the Deployment allows
//!    (`replicas + maxSurge`, 0 for 0 replicas) and what the active ReplicaSets have is
//!    spread over them in proportion to their size, as their `max-replicas` annotation
//!    recorded it: largest first (newer first when scaling up, older first when scaling
//!    down), the rounding leftover to the first. Every active ReplicaSet is then written,
//!    so its annotations record the new size.

use std::cmp::Ordering;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use super::{replicasets as rs, rolling, spec};

/// A planned scale of one ReplicaSet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScaleTo {
    /// The ReplicaSet, an index into the slice given to [`plan`].
    pub index: usize,
    /// Its new `spec.replicas`.
    pub replicas: i32,
    /// Whether to write it even if the size does not change (`scaleReplicaSet`, which
    /// refreshes the replica annotations), rather than only when it does
    /// (`scaleReplicaSetAndRecordEvent`).
    pub always: bool,
}

/// Whether a ReplicaSet has pods wanted.
fn active(r: &ReplicaSet) -> bool {
    rs::spec_replicas(r) > 0
}

/// `isScalingEvent`: whether an active ReplicaSet of `rss` was last scaled for another
/// replica count than the Deployment's.
pub(crate) fn is_scaling_event(d: &Deployment, rss: &[&ReplicaSet]) -> bool {
    let replicas = spec::replicas(d);
    rss.iter()
        .filter(|r| active(r))
        .filter_map(|r| rs::int_annotation(r, rs::DESIRED_REPLICAS))
        .any(|desired| desired != replicas)
}

/// `IsSaturated`: the ReplicaSet wants, was scaled for, and has available exactly the
/// Deployment's replicas.
pub(crate) fn is_saturated(d: &Deployment, r: &ReplicaSet) -> bool {
    let replicas = spec::replicas(d);
    rs::int_annotation(r, rs::DESIRED_REPLICAS) == Some(replicas)
        && rs::spec_replicas(r) == replicas
        && rs::available_replicas(r) == replicas
}

/// `FindActiveOrLatest`: the only active ReplicaSet, or the new one (else the newest old
/// one) when none is active; `None` when several are.
fn active_or_latest(rss: &[&ReplicaSet], new: Option<usize>, old: &[usize]) -> Option<usize> {
    let mut old: Vec<usize> = old.to_vec();
    old.sort_by(|&a, &b| rs::by_creation(rss[b], rss[a]));
    let active: Vec<usize> = old
        .iter()
        .copied()
        .chain(new)
        .filter(|&i| active(rss[i]))
        .collect();
    match active.as_slice() {
        [] => new.or_else(|| old.first().copied()),
        [only] => Some(*only),
        _ => None,
    }
}

/// `getReplicaSetFraction`: how many replicas the ReplicaSet gains (or loses) if the
/// Deployment's allowed total is spread in proportion to its recorded size.
fn fraction(r: &ReplicaSet, d: &Deployment) -> i32 {
    let replicas = spec::replicas(d);
    let size = rs::spec_replicas(r);
    if replicas == 0 {
        return -size;
    }
    let allowed = replicas.saturating_add(rolling::max_surge(d));
    let recorded = rs::int_annotation(r, rs::MAX_REPLICAS)
        .unwrap_or_else(|| spec::status(d).replicas.unwrap_or(0));
    if recorded == 0 {
        // Go divides by zero here; nothing sensible to spread.
        return 0;
    }
    let scaled = (f64::from(size) * f64::from(allowed) / f64::from(recorded)).round();
    rolling::clamp_i32((scaled as i64).saturating_sub(i64::from(size)))
}

/// `GetProportion`: the ReplicaSet's share of `to_add`, given `added` so far.
fn proportion(r: &ReplicaSet, d: &Deployment, to_add: i32, added: i32) -> i32 {
    if rs::spec_replicas(r) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let share = fraction(r, d);
    let left = to_add.saturating_sub(added);
    if to_add > 0 {
        share.min(left)
    } else {
        share.max(left)
    }
}

/// `scale`: the scales to make (see the module docs). `rss` holds every ReplicaSet of the
/// Deployment; `new` and `old` index into it.
pub(crate) fn plan(
    d: &Deployment,
    rss: &[&ReplicaSet],
    new: Option<usize>,
    old: &[usize],
) -> Vec<ScaleTo> {
    let replicas = spec::replicas(d);
    if new.is_none() && old.is_empty() {
        return Vec::new();
    }
    if let Some(index) = active_or_latest(rss, new, old) {
        return vec![ScaleTo {
            index,
            replicas,
            always: false,
        }];
    }
    if new.is_some_and(|n| is_saturated(d, rss[n])) {
        return old
            .iter()
            .filter(|&&i| active(rss[i]))
            .map(|&index| ScaleTo {
                index,
                replicas: 0,
                always: false,
            })
            .collect();
    }
    if !matches!(spec::strategy(d), spec::Strategy::RollingUpdate { .. }) {
        return Vec::new();
    }
    let mut sets: Vec<usize> = old
        .iter()
        .copied()
        .chain(new)
        .filter(|&i| active(rss[i]))
        .collect();
    let total = rolling::clamp_i32(
        sets.iter()
            .map(|&i| i64::from(rs::spec_replicas(rss[i])))
            .sum(),
    );
    let allowed = if replicas > 0 {
        replicas.saturating_add(rolling::max_surge(d))
    } else {
        0
    };
    let to_add = allowed.saturating_sub(total);
    let larger_first =
        |a: usize, b: usize| rs::spec_replicas(rss[b]).cmp(&rs::spec_replicas(rss[a]));
    match to_add.cmp(&0) {
        Ordering::Greater => {
            sets.sort_by(|&a, &b| larger_first(a, b).then_with(|| rs::by_creation(rss[b], rss[a])))
        }
        Ordering::Less => {
            sets.sort_by(|&a, &b| larger_first(a, b).then_with(|| rs::by_creation(rss[a], rss[b])))
        }
        Ordering::Equal => {}
    }
    let mut added = 0i32;
    let mut sizes: Vec<i32> = sets
        .iter()
        .map(|&i| {
            let size = rs::spec_replicas(rss[i]);
            if to_add == 0 {
                return size;
            }
            let share = proportion(rss[i], d, to_add, added);
            added = added.saturating_add(share);
            size.saturating_add(share)
        })
        .collect();
    if let Some(first) = sizes.first_mut()
        && to_add != 0
    {
        *first = first.saturating_add(to_add.saturating_sub(added)).max(0);
    }
    sets.iter()
        .zip(sizes)
        .map(|(&index, replicas)| ScaleTo {
            index,
            replicas: replicas.max(0),
            always: true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::{
        api::apps::v1::{DeploymentSpec, DeploymentStatus, ReplicaSetSpec, ReplicaSetStatus},
        apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
    };

    use super::*;
    use crate::controllers::compat;

    fn deployment(replicas: i32, status_replicas: i32) -> Deployment {
        Deployment {
            metadata: ObjectMeta::default(),
            spec: compat::field(DeploymentSpec {
                replicas: Some(replicas),
                ..DeploymentSpec::default()
            }),
            status: Some(DeploymentStatus {
                replicas: Some(status_replicas),
                ..DeploymentStatus::default()
            }),
        }
    }

    fn set(
        name: &str,
        created: i64,
        spec: i32,
        available: i32,
        annotations: &[(&str, i32)],
    ) -> ReplicaSet {
        ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                creation_timestamp: Some(Time(
                    jiff::Timestamp::from_second(created).unwrap_or_default(),
                )),
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), v.to_string()))
                        .collect::<BTreeMap<_, _>>(),
                ),
                ..ObjectMeta::default()
            },
            spec: compat::field(ReplicaSetSpec {
                replicas: Some(spec),
                ..ReplicaSetSpec::default()
            }),
            status: Some(ReplicaSetStatus {
                replicas: spec,
                available_replicas: Some(available),
                ..ReplicaSetStatus::default()
            }),
        }
    }

    #[test]
    fn a_changed_desired_annotation_is_a_scaling_event() {
        let d = deployment(5, 3);
        let a = set("a", 1, 3, 3, &[(rs::DESIRED_REPLICAS, 3)]);
        let idle = set("b", 2, 0, 0, &[(rs::DESIRED_REPLICAS, 1)]);
        assert!(is_scaling_event(&d, &[&a]));
        assert!(!is_scaling_event(&deployment(3, 3), &[&a, &idle]));
    }

    #[test]
    fn a_single_active_replica_set_takes_the_full_count() {
        let d = deployment(5, 3);
        let new = set("new", 2, 3, 3, &[]);
        let old = set("old", 1, 0, 0, &[]);
        let plan = plan(&d, &[&old, &new], Some(1), &[0]);
        assert_eq!(
            plan,
            vec![ScaleTo {
                index: 1,
                replicas: 5,
                always: false
            }]
        );
    }

    #[test]
    fn a_saturated_new_set_scales_old_ones_to_zero() {
        let d = deployment(3, 5);
        let new = set("new", 2, 3, 3, &[(rs::DESIRED_REPLICAS, 3)]);
        let old = set("old", 1, 2, 2, &[]);
        let plan = plan(&d, &[&old, &new], Some(1), &[0]);
        assert_eq!(
            plan,
            vec![ScaleTo {
                index: 0,
                replicas: 0,
                always: false
            }]
        );
    }

    #[test]
    fn replicas_are_spread_in_proportion_mid_rollout() {
        // 10 replicas, surge 3 (25% of 10 rounded up), mid rollout: old 8, new 5 (13 =
        // max-replicas). Scaled to 20 (allowed 25): +12 spread 8/13 and 5/13.
        let d = deployment(20, 13);
        let old = set(
            "old",
            1,
            8,
            8,
            &[(rs::MAX_REPLICAS, 13), (rs::DESIRED_REPLICAS, 10)],
        );
        let new = set(
            "new",
            2,
            5,
            0,
            &[(rs::MAX_REPLICAS, 13), (rs::DESIRED_REPLICAS, 10)],
        );
        let plan = plan(&d, &[&old, &new], Some(1), &[0]);
        let total: i32 = plan.iter().map(|s| s.replicas).sum();
        assert_eq!(total, 25);
        // 8 * 25 / 13 = 15.4 -> 15; 5 * 25 / 13 = 9.6 -> 10.
        assert_eq!(
            plan[0],
            ScaleTo {
                index: 0,
                replicas: 15,
                always: true
            }
        );
        assert_eq!(
            plan[1],
            ScaleTo {
                index: 1,
                replicas: 10,
                always: true
            }
        );
    }

    #[test]
    fn scaling_to_zero_empties_every_active_set() {
        let d = deployment(0, 13);
        let old = set("old", 1, 8, 8, &[(rs::MAX_REPLICAS, 13)]);
        let new = set("new", 2, 5, 0, &[(rs::MAX_REPLICAS, 13)]);
        let plan = plan(&d, &[&old, &new], Some(1), &[0]);
        assert!(plan.iter().all(|s| s.replicas == 0));
        assert_eq!(plan.len(), 2);
    }

    #[test]
    fn no_recorded_size_does_not_divide_by_zero() {
        let d = deployment(4, 0);
        let old = set("old", 1, 2, 2, &[]);
        let new = set("new", 2, 1, 0, &[]);
        let plan = plan(&d, &[&old, &new], Some(1), &[0]);
        // Allowed 5, have 3: the 2 left over go to the largest.
        let total: i32 = plan.iter().map(|s| s.replicas).sum();
        assert_eq!(total, 5);
    }
}
