//! A Deployment's status and conditions (kubernetes `pkg/controller/deployment/sync.go`
//! `calculateStatus`, `syncDeploymentStatus`, `checkPausedConditions`,
//! `pkg/controller/deployment/progress.go` `syncRolloutStatus`, `requeueStuckDeployment`,
//! and the condition helpers of `pkg/controller/deployment/util/deployment_util.go`).
//!
//! * The counts add up the ReplicaSets': `replicas` (pods that exist), `updatedReplicas`
//!   (the new ReplicaSet's), `readyReplicas`, `availableReplicas`, and
//!   `unavailableReplicas` = wanted pods (`spec.replicas` summed) minus available ones.
//! * `Available` is `True` (`MinimumReplicasAvailable`) while at least
//!   `replicas - maxUnavailable` pods are available, else `False`
//!   (`MinimumReplicasUnavailable`).
//! * `Progressing` (only with a progress deadline) is `True` with `NewReplicaSetCreated`
//!   or `FoundNewReplicaSet` when the new ReplicaSet appears, `ReplicaSetUpdated` each time
//!   the rollout moves (only its `lastUpdateTime` moves while it stays `True`),
//!   `NewReplicaSetAvailable` once complete; `False` with `ProgressDeadlineExceeded` when
//!   `lastUpdateTime + progressDeadlineSeconds` passes without progress; `Unknown` with
//!   `DeploymentPaused` / `DeploymentResumed` around a pause.
//! * Setting a condition whose status and reason are unchanged changes nothing;
//!   `lastTransitionTime` only moves when the status flips.
//!
//! Every function takes `now`, so tests pin the clock.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::{
    api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet},
    apimachinery::pkg::apis::meta::v1::Time,
};

use super::{replicasets as rs, rolling, spec};
use crate::controllers::compat;

/// The `Available` condition type.
pub(crate) const AVAILABLE: &str = "Available";
/// The `Progressing` condition type.
pub(crate) const PROGRESSING: &str = "Progressing";
/// The `ReplicaFailure` condition type (copied from the ReplicaSets).
pub(crate) const REPLICA_FAILURE: &str = "ReplicaFailure";

/// `Available` True.
pub(crate) const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
/// `Available` False.
pub(crate) const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";
/// `Progressing` True: the controller created the new ReplicaSet.
pub(crate) const NEW_RS_CREATED: &str = "NewReplicaSetCreated";
/// `Progressing` True: the controller found an existing new ReplicaSet.
pub(crate) const FOUND_NEW_RS: &str = "FoundNewReplicaSet";
/// `Progressing` True: the rollout moved.
pub(crate) const RS_UPDATED: &str = "ReplicaSetUpdated";
/// `Progressing` True: the rollout is complete.
pub(crate) const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
/// `Progressing` False: no progress within the deadline.
pub(crate) const TIMED_OUT: &str = "ProgressDeadlineExceeded";
/// `Progressing` False: the new ReplicaSet could not be created.
pub(crate) const FAILED_RS_CREATE: &str = "ReplicaSetCreateError";
/// `Progressing` Unknown: paused.
pub(crate) const PAUSED: &str = "DeploymentPaused";
/// `Progressing` Unknown: resumed.
pub(crate) const RESUMED: &str = "DeploymentResumed";

/// The current time, to the second (what a `metav1.Time` keeps).
///
/// The server's clock (`crate::clock`, tokio's, so a paused test clock moves progress
/// deadlines), to the second as `metav1.Time` keeps it. The sync loop calls it once per
/// reconcile and passes the value down, so everything else here is pure.
pub(crate) fn now() -> Timestamp {
    truncate(crate::clock::now())
}

/// `t` without its fraction of a second.
pub(crate) fn truncate(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

/// `NewDeploymentCondition`: both times `now`.
pub(crate) fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: compat::field(type_.to_owned()),
        status: compat::field(status.to_owned()),
        reason: Some(reason.to_owned()),
        message: Some(message),
        last_update_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
    }
}

/// `GetDeploymentCondition`.
pub(crate) fn get_condition<'a>(
    status: &'a DeploymentStatus,
    type_: &str,
) -> Option<&'a DeploymentCondition> {
    status
        .conditions
        .as_ref()?
        .iter()
        .find(|c| compat::text(&c.type_) == type_)
}

/// The reason of the condition `type_`, if any.
fn reason_of<'a>(status: &'a DeploymentStatus, type_: &str) -> Option<&'a str> {
    get_condition(status, type_).and_then(|c| c.reason.as_deref())
}

/// `SetDeploymentCondition`: nothing if a condition of the type has the same status and
/// reason; else replaces it, keeping its `lastTransitionTime` if the status is the same.
pub(crate) fn set_condition(status: &mut DeploymentStatus, mut condition: DeploymentCondition) {
    let type_ = compat::text(&condition.type_).to_owned();
    if let Some(current) = get_condition(status, &type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    remove_condition(status, &type_);
    status
        .conditions
        .get_or_insert_with(Vec::new)
        .push(condition);
}

/// `RemoveDeploymentCondition`.
pub(crate) fn remove_condition(status: &mut DeploymentStatus, type_: &str) {
    if let Some(conditions) = status.conditions.as_mut() {
        conditions.retain(|c| compat::text(&c.type_) != type_);
        if conditions.is_empty() {
            status.conditions = None;
        }
    }
}

/// An `i64` sum as `i32`, saturating.
fn sum(values: impl Iterator<Item = i32>) -> i32 {
    rolling::clamp_i32(values.map(i64::from).sum())
}

/// `calculateStatus`: the counts of `all` (the new ReplicaSet among them) and `new`, the
/// Deployment's other conditions kept and `Available` set.
pub(crate) fn calculate_status(
    d: &Deployment,
    all: &[&ReplicaSet],
    new: Option<&ReplicaSet>,
    now: Timestamp,
) -> DeploymentStatus {
    let current = spec::status(d);
    let available = sum(all.iter().map(|r| rs::available_replicas(r)));
    let wanted = sum(all.iter().map(|r| rs::spec_replicas(r)));
    let mut status = DeploymentStatus {
        observed_generation: Some(spec::generation(d)),
        replicas: Some(sum(all.iter().map(|r| rs::status_replicas(r)))),
        updated_replicas: Some(new.map_or(0, rs::status_replicas)),
        ready_replicas: Some(sum(all.iter().map(|r| rs::ready_replicas(r)))),
        available_replicas: Some(available),
        unavailable_replicas: Some(wanted.saturating_sub(available).max(0)),
        collision_count: current.collision_count,
        conditions: current.conditions.clone(),
        ..DeploymentStatus::default()
    };
    let min_available = spec::replicas(d).saturating_sub(rolling::max_unavailable(d));
    let available_condition = if available >= min_available {
        condition(
            AVAILABLE,
            "True",
            MINIMUM_REPLICAS_AVAILABLE,
            "Deployment has minimum availability.".to_owned(),
            now,
        )
    } else {
        condition(
            AVAILABLE,
            "False",
            MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.".to_owned(),
            now,
        )
    };
    set_condition(&mut status, available_condition);
    status
}

/// `DeploymentComplete`: every wanted pod is updated, available, and alone (no old pods),
/// and the status describes the current generation.
pub(crate) fn deployment_complete(d: &Deployment, status: &DeploymentStatus) -> bool {
    let replicas = spec::replicas(d);
    status.updated_replicas.unwrap_or(0) == replicas
        && status.replicas.unwrap_or(0) == replicas
        && status.available_replicas.unwrap_or(0) == replicas
        && status.observed_generation.unwrap_or(0) >= spec::generation(d)
}

/// `DeploymentProgressing`: more updated, ready or available pods than before, or fewer
/// old ones.
pub(crate) fn deployment_progressing(d: &Deployment, new: &DeploymentStatus) -> bool {
    let old = spec::status(d);
    let count = |v: Option<i32>| i64::from(v.unwrap_or(0));
    let old_old = count(old.replicas) - count(old.updated_replicas);
    let new_old = count(new.replicas) - count(new.updated_replicas);
    count(new.updated_replicas) > count(old.updated_replicas)
        || new_old < old_old
        || count(new.ready_replicas) > count(old.ready_replicas)
        || count(new.available_replicas) > count(old.available_replicas)
}

/// `DeploymentTimedOut`: the `Progressing` condition of `status` was last updated more
/// than the deadline before `now` (already timed out counts; a complete one never does).
pub(crate) fn deployment_timed_out(
    d: &Deployment,
    status: &DeploymentStatus,
    now: Timestamp,
) -> bool {
    let Some(deadline) = spec::progress_deadline(d) else {
        return false;
    };
    let Some(progressing) = get_condition(status, PROGRESSING) else {
        return false;
    };
    match progressing.reason.as_deref() {
        Some(NEW_RS_AVAILABLE) => false,
        Some(TIMED_OUT) => true,
        _ => progressing.last_update_time.as_ref().is_some_and(|from| {
            from.0
                .checked_add(jiff::SignedDuration::from_secs(i64::from(deadline)))
                .is_ok_and(|end| end < now)
        }),
    }
}

/// A `Progressing` message naming the new ReplicaSet, or the Deployment if there is none.
fn progress_message(d: &Deployment, new: Option<&ReplicaSet>, what: &str) -> String {
    match new {
        Some(new) => format!("ReplicaSet {:?} {what}", rs::name(new)),
        None => format!(
            "Deployment {:?} {what}",
            d.metadata.name.as_deref().unwrap_or_default()
        ),
    }
}

/// `syncRolloutStatus`: the status to write during a rollout — [`calculate_status`], then
/// the `Progressing` condition moved on (complete, progressing, or timed out), and the
/// ReplicaSets' `ReplicaFailure` condition copied (the new one's first).
pub(crate) fn rollout_status(
    d: &Deployment,
    all: &[&ReplicaSet],
    new: Option<&ReplicaSet>,
    now: Timestamp,
) -> DeploymentStatus {
    let mut status = calculate_status(d, all, new, now);
    let has_deadline = spec::progress_deadline(d).is_some();
    if !has_deadline {
        remove_condition(&mut status, PROGRESSING);
    }
    let current = spec::status(d);
    let current_progressing = get_condition(&current, PROGRESSING);
    let complete_before = status.replicas == status.updated_replicas
        && current_progressing.and_then(|c| c.reason.as_deref()) == Some(NEW_RS_AVAILABLE);
    if has_deadline && !complete_before {
        if deployment_complete(d, &status) {
            let message = progress_message(d, new, "has successfully progressed.");
            set_condition(
                &mut status,
                condition(PROGRESSING, "True", NEW_RS_AVAILABLE, message, now),
            );
        } else if deployment_progressing(d, &status) {
            let message = progress_message(d, new, "is progressing.");
            let mut updated = condition(PROGRESSING, "True", RS_UPDATED, message, now);
            if let Some(current) = current_progressing {
                if compat::text(&current.status) == "True" {
                    updated.last_transition_time = current.last_transition_time.clone();
                }
                remove_condition(&mut status, PROGRESSING);
            }
            set_condition(&mut status, updated);
        } else if deployment_timed_out(d, &status, now) {
            let message = progress_message(d, new, "has timed out progressing.");
            set_condition(
                &mut status,
                condition(PROGRESSING, "False", TIMED_OUT, message, now),
            );
        }
    }
    match replica_failure(all, new) {
        Some(failure) => set_condition(&mut status, failure),
        None => remove_condition(&mut status, REPLICA_FAILURE),
    }
    status
}

/// `getReplicaFailures`: the first `ReplicaFailure` condition of the new ReplicaSet, else
/// of any ReplicaSet, as a Deployment condition.
fn replica_failure(all: &[&ReplicaSet], new: Option<&ReplicaSet>) -> Option<DeploymentCondition> {
    let failure = |r: &ReplicaSet| {
        r.status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|c| compat::text(&c.type_) == REPLICA_FAILURE)
            .cloned()
    };
    let found = new
        .and_then(failure)
        .or_else(|| all.iter().find_map(|&r| failure(r)))?;
    Some(DeploymentCondition {
        type_: found.type_,
        status: found.status,
        reason: found.reason,
        message: found.message,
        last_update_time: found.last_transition_time.clone(),
        last_transition_time: found.last_transition_time,
    })
}

/// `requeueStuckDeployment`: when the controller must look again to tell whether the
/// rollout timed out (`lastUpdateTime + deadline - now`, plus a second against skew), or
/// `None` if no check is due (no deadline, no `Progressing` condition, complete, or already
/// timed out).
pub(crate) fn requeue_for_progress(
    d: &Deployment,
    status: &DeploymentStatus,
    now: Timestamp,
) -> Option<Duration> {
    let deadline = spec::progress_deadline(d)?;
    let progressing = get_condition(status, PROGRESSING)?;
    if deployment_complete(d, status) || progressing.reason.as_deref() == Some(TIMED_OUT) {
        return None;
    }
    let from = progressing.last_update_time.as_ref()?.0;
    let left = from.as_second() + i64::from(deadline) - now.as_second();
    // Less than a second left: look again soon (Go re-adds it rate limited).
    let left = u64::try_from(left.max(0)).unwrap_or(0);
    Some(Duration::from_secs(left + 1))
}

/// `checkPausedConditions`: with a progress deadline, marks a paused Deployment
/// `Progressing` Unknown `DeploymentPaused`, and a resumed one `DeploymentResumed` (so the
/// time spent paused does not count against the deadline); a timed-out condition stays.
/// Whether the status changed.
pub(crate) fn check_paused(d: &mut Deployment, now: Timestamp) -> bool {
    if spec::progress_deadline(d).is_none() {
        return false;
    }
    let mut status = spec::status(d);
    let reason = reason_of(&status, PROGRESSING);
    if reason == Some(TIMED_OUT) {
        return false;
    }
    let paused_before = reason == Some(PAUSED);
    let paused = spec::paused(d);
    let condition = if paused && !paused_before {
        condition(
            PROGRESSING,
            "Unknown",
            PAUSED,
            "Deployment is paused".to_owned(),
            now,
        )
    } else if !paused && paused_before {
        condition(
            PROGRESSING,
            "Unknown",
            RESUMED,
            "Deployment is resumed".to_owned(),
            now,
        )
    } else {
        return false;
    };
    set_condition(&mut status, condition);
    d.status = Some(status);
    true
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::apps::v1::{DeploymentSpec, ReplicaSetCondition, ReplicaSetSpec, ReplicaSetStatus},
        apimachinery::pkg::apis::meta::v1::ObjectMeta,
    };

    use super::*;
    use crate::controllers::compat::Opt;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap_or_default()
    }

    fn deployment(replicas: i32, status: DeploymentStatus) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: Some("web".to_owned()),
                generation: Some(2),
                ..ObjectMeta::default()
            },
            spec: compat::field(DeploymentSpec {
                replicas: Some(replicas),
                ..DeploymentSpec::default()
            }),
            status: Some(status),
        }
    }

    fn replica_set(name: &str, spec: i32, replicas: i32, ready: i32, available: i32) -> ReplicaSet {
        ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            spec: compat::field(ReplicaSetSpec {
                replicas: Some(spec),
                ..ReplicaSetSpec::default()
            }),
            status: Some(ReplicaSetStatus {
                replicas,
                ready_replicas: Some(ready),
                available_replicas: Some(available),
                ..ReplicaSetStatus::default()
            }),
        }
    }

    fn reason(status: &DeploymentStatus, type_: &str) -> Option<String> {
        get_condition(status, type_).and_then(|c| c.reason.clone())
    }

    #[test]
    fn counts_add_up_the_replica_sets() {
        let d = deployment(4, DeploymentStatus::default());
        let new = replica_set("web-new", 2, 2, 1, 1);
        let old = replica_set("web-old", 3, 3, 3, 3);
        let status = calculate_status(&d, &[&old, &new], Some(&new), at(0));
        assert_eq!(status.replicas, Some(5));
        assert_eq!(status.updated_replicas, Some(2));
        assert_eq!(status.ready_replicas, Some(4));
        assert_eq!(status.available_replicas, Some(4));
        assert_eq!(status.unavailable_replicas, Some(1));
        assert_eq!(status.observed_generation, Some(2));
        // 4 replicas, maxUnavailable 25% -> 1: 3 needed, 4 available.
        let available = get_condition(&status, AVAILABLE)
            .cloned()
            .unwrap_or_default();
        assert_eq!(compat::text(&available.status), "True");
        assert_eq!(
            available.reason.as_deref(),
            Some(MINIMUM_REPLICAS_AVAILABLE)
        );
        assert_eq!(
            available.message.as_deref(),
            Some("Deployment has minimum availability.")
        );
    }

    #[test]
    fn too_few_available_pods_make_it_unavailable() {
        let d = deployment(4, DeploymentStatus::default());
        let new = replica_set("web-new", 4, 4, 0, 0);
        let status = calculate_status(&d, &[&new], Some(&new), at(0));
        let available = get_condition(&status, AVAILABLE)
            .cloned()
            .unwrap_or_default();
        assert_eq!(compat::text(&available.status), "False");
        assert_eq!(
            available.message.as_deref(),
            Some("Deployment does not have minimum availability.")
        );
    }

    #[test]
    fn transition_time_moves_only_when_status_flips() {
        let mut status = DeploymentStatus::default();
        set_condition(
            &mut status,
            condition(PROGRESSING, "True", RS_UPDATED, "a".into(), at(0)),
        );
        // Same status and reason: nothing changes, message included.
        set_condition(
            &mut status,
            condition(PROGRESSING, "True", RS_UPDATED, "b".into(), at(5)),
        );
        let c = get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(c.message.as_deref(), Some("a"));
        // Same status, new reason: update time moves, transition time stays.
        set_condition(
            &mut status,
            condition(PROGRESSING, "True", NEW_RS_AVAILABLE, "c".into(), at(9)),
        );
        let c = get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(c.last_update_time, Some(Time(at(9))));
        assert_eq!(c.last_transition_time, Some(Time(at(0))));
        // Status flips: both move.
        set_condition(
            &mut status,
            condition(PROGRESSING, "False", TIMED_OUT, "d".into(), at(20)),
        );
        let c = get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(c.last_transition_time, Some(Time(at(20))));
    }

    #[test]
    fn a_progressing_rollout_moves_last_update_time_only() {
        let mut before = DeploymentStatus {
            replicas: Some(3),
            updated_replicas: Some(1),
            ..DeploymentStatus::default()
        };
        set_condition(
            &mut before,
            condition(
                PROGRESSING,
                "True",
                NEW_RS_CREATED,
                "Created new replica set \"web-x\"".into(),
                at(0),
            ),
        );
        let d = deployment(3, before);
        let new = replica_set("web-x", 2, 2, 0, 0);
        let old = replica_set("web-o", 2, 2, 2, 2);
        let status = rollout_status(&d, &[&old, &new], Some(&new), at(30));
        let c = get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(c.reason.as_deref(), Some(RS_UPDATED));
        assert_eq!(
            c.message.as_deref(),
            Some("ReplicaSet \"web-x\" is progressing.")
        );
        assert_eq!(c.last_update_time, Some(Time(at(30))));
        assert_eq!(c.last_transition_time, Some(Time(at(0))));
        assert_eq!(
            requeue_for_progress(&d, &status, at(30)),
            Some(Duration::from_secs(601))
        );
    }

    #[test]
    fn a_complete_rollout_satisfies_rollout_status() {
        let d = deployment(3, DeploymentStatus::default());
        let new = replica_set("web-x", 3, 3, 3, 3);
        let status = rollout_status(&d, &[&new], Some(&new), at(0));
        let c = get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(c.reason.as_deref(), Some(NEW_RS_AVAILABLE));
        assert_eq!(
            c.message.as_deref(),
            Some("ReplicaSet \"web-x\" has successfully progressed.")
        );
        // kubectl rollout status's checks.
        assert!(status.observed_generation >= Some(2));
        assert_eq!(status.updated_replicas, Some(3));
        assert_eq!(status.replicas, status.updated_replicas);
        assert_eq!(status.available_replicas, status.updated_replicas);
        assert_eq!(requeue_for_progress(&d, &status, at(0)), None);
    }

    #[test]
    fn no_progress_past_the_deadline_times_out() {
        let mut before = DeploymentStatus {
            replicas: Some(1),
            updated_replicas: Some(1),
            ..DeploymentStatus::default()
        };
        set_condition(
            &mut before,
            condition(PROGRESSING, "True", RS_UPDATED, "m".into(), at(0)),
        );
        let d = deployment(1, before.clone());
        let new = replica_set("web-x", 1, 1, 0, 0);
        let early = rollout_status(&d, &[&new], Some(&new), at(600));
        assert_eq!(reason(&early, PROGRESSING).as_deref(), Some(RS_UPDATED));
        assert_eq!(
            requeue_for_progress(&d, &early, at(600)),
            Some(Duration::from_secs(1))
        );
        let late = rollout_status(&d, &[&new], Some(&new), at(601));
        let c = get_condition(&late, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(compat::text(&c.status), "False");
        assert_eq!(c.reason.as_deref(), Some(TIMED_OUT));
        assert_eq!(
            c.message.as_deref(),
            Some("ReplicaSet \"web-x\" has timed out progressing.")
        );
        assert_eq!(requeue_for_progress(&d, &late, at(601)), None);
    }

    #[test]
    fn no_deadline_removes_progressing() {
        let mut before = DeploymentStatus::default();
        set_condition(
            &mut before,
            condition(PROGRESSING, "True", RS_UPDATED, "m".into(), at(0)),
        );
        let mut d = deployment(1, before);
        {
            let spec = d.spec.opt_mut();
            spec.progress_deadline_seconds = Some(i32::MAX);
        }
        let new = replica_set("web-x", 1, 1, 1, 1);
        let status = rollout_status(&d, &[&new], Some(&new), at(0));
        assert!(get_condition(&status, PROGRESSING).is_none());
    }

    #[test]
    fn pausing_and_resuming_set_unknown_progressing() {
        let mut d = deployment(1, DeploymentStatus::default());
        assert!(!check_paused(&mut d, at(0)));
        {
            let spec = d.spec.opt_mut();
            spec.paused = Some(true);
        }
        assert!(check_paused(&mut d, at(1)));
        let status = spec::status(&d);
        let c = get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            (compat::text(&c.status), c.reason.as_deref()),
            ("Unknown", Some(PAUSED))
        );
        assert_eq!(c.message.as_deref(), Some("Deployment is paused"));
        assert!(!check_paused(&mut d, at(2)));
        {
            let spec = d.spec.opt_mut();
            spec.paused = Some(false);
        }
        assert!(check_paused(&mut d, at(3)));
        let status = spec::status(&d);
        let c = get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(c.reason.as_deref(), Some(RESUMED));
        assert_eq!(c.message.as_deref(), Some("Deployment is resumed"));
    }

    #[test]
    fn replica_failures_are_copied_from_the_replica_sets() {
        let d = deployment(1, DeploymentStatus::default());
        let mut new = replica_set("web-x", 1, 0, 0, 0);
        if let Some(status) = new.status.as_mut() {
            status.conditions = Some(vec![ReplicaSetCondition {
                type_: compat::field(REPLICA_FAILURE.to_owned()),
                status: compat::field("True".to_owned()),
                reason: Some("FailedCreate".to_owned()),
                message: Some("quota".to_owned()),
                last_transition_time: Some(Time(at(0))),
            }]);
        }
        let status = rollout_status(&d, &[&new], Some(&new), at(1));
        assert_eq!(
            reason(&status, REPLICA_FAILURE).as_deref(),
            Some("FailedCreate")
        );
    }
}
