//! One sync of a StatefulSet without I/O (kubernetes
//! `pkg/controller/statefulset/stateful_set_control.go` `updateStatefulSet`,
//! `processReplica`, `processCondemned`, `updateStatefulSetAfterInvariantEstablished`,
//! `computeReplicaStatus`, and `stateful_set_utils.go` `newVersionedStatefulSetPod`,
//! `completeRollingUpdate`): what to create, fix and delete, in order, and the status.
//!
//! `OrderedReady` (monotonic) stops at the first pod it must wait for: a missing pod is
//! created and nothing else happens in that sync; a pod that is not Running and Ready (and
//! available for `minReadySeconds`) holds up every higher ordinal; scaling down deletes the
//! highest ordinal once every lower pod is healthy, one pod per sync. `Parallel` does
//! everything it can at once. Updates (`RollingUpdate`) then delete the pods not at the
//! update revision from the highest ordinal down to `partition`, at most `maxUnavailable`
//! (1 by default) unavailable at a time; the deleted pods are recreated at the update
//! revision by the next syncs. `OnDelete` updates nothing: pods deleted by hand come back
//! at the update revision.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::{
    api::{
        apps::v1::{StatefulSet, StatefulSetStatus},
        core::v1::{PersistentVolumeClaim, Pod},
    },
    apimachinery::pkg::{apis::meta::v1::OwnerReference, util::intstr::IntOrString},
};

use super::identity;
use crate::controllers::{compat::Opt, pods};

/// A revision as a sync uses it: its name and the set with its template.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Revision<'a> {
    /// The ControllerRevision's name (what pods carry in `controller-revision-hash`).
    pub name: &'a str,
    /// The set with the revision's template applied.
    pub set: &'a StatefulSet,
}

/// What one sync looks at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Input<'a> {
    /// The StatefulSet.
    pub set: &'a StatefulSet,
    /// The current revision (`status.currentRevision`, or the update revision at first).
    pub current: Revision<'a>,
    /// The update revision (the set's template now).
    pub update: Revision<'a>,
    /// The collision count the revisions were named with.
    pub collision_count: i32,
    /// The set's pods.
    pub pods: &'a [Arc<Pod>],
    /// The claims of the set's namespace, by name.
    pub claims: &'a BTreeMap<String, Arc<PersistentVolumeClaim>>,
    /// The time of the sync.
    pub now: jiff::Timestamp,
}

/// One write of a sync.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Create the missing claims, then the pod (`CreateStatefulPod`).
    CreatePod {
        /// The pod.
        pod: Pod,
        /// Its claims that do not exist yet.
        claims: Vec<PersistentVolumeClaim>,
    },
    /// Create the missing claims of a pending pod (`createMissingPersistentVolumeClaims`).
    CreateClaims {
        /// The pod's name.
        pod: String,
        /// The claims.
        claims: Vec<PersistentVolumeClaim>,
    },
    /// Delete a pod: failed or succeeded (to be recreated), condemned (scale down) or out
    /// of date (update).
    DeletePod {
        /// The pod.
        pod: Arc<Pod>,
    },
    /// Restore a pod's identity labels (`UpdateStatefulPod`).
    UpdatePod {
        /// The pod as it should be.
        pod: Pod,
    },
    /// Set a claim's owner references as the retention policy wants
    /// (`UpdatePodClaimForRetentionPolicy`).
    SetClaimOwners {
        /// The claim.
        claim: Arc<PersistentVolumeClaim>,
        /// Its owner references.
        owners: Vec<OwnerReference>,
    },
}

/// What a sync decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Plan {
    /// The writes, in order (stop at the first that fails).
    pub steps: Vec<Step>,
    /// The status to record.
    pub status: StatefulSetStatus,
    /// A claim a pod needs is being deleted: look again later (`pvc is being deleted`).
    pub claim_deleting: bool,
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

/// `isCreated`: the API server gave the pod a phase.
fn is_created(pod: &Pod) -> bool {
    phase(pod).is_some_and(|p| !p.is_empty())
}

fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// `isRunningAndReady`.
pub(crate) fn is_running_and_ready(pod: &Pod) -> bool {
    phase(pod) == Some("Running") && pods::is_ready(pod)
}

/// `isRunningAndAvailable`.
fn is_running_and_available(pod: &Pod, min_ready: i32, now: jiff::Timestamp) -> bool {
    phase(pod) == Some("Running") && pods::is_available(pod, min_ready, now)
}

/// `isUnavailable` (a pod not created yet is unavailable).
fn is_unavailable(pod: Option<&Pod>, min_ready: i32, now: jiff::Timestamp) -> bool {
    pod.is_none_or(|p| !is_running_and_available(p, min_ready, now) || is_terminating(p))
}

/// Whether `set` creates and deletes pods one at a time (`!allowsBurst`).
fn monotonic(set: &StatefulSet) -> bool {
    set.spec
        .opt()
        .and_then(|s| s.pod_management_policy.as_deref())
        != Some("Parallel")
}

fn strategy_type(set: &StatefulSet) -> &str {
    set.spec
        .opt()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.type_.as_deref())
        .unwrap_or("RollingUpdate")
}

fn partition(set: &StatefulSet) -> Option<i32> {
    set.spec
        .opt()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .map(|r| r.partition.unwrap_or(0))
}

/// `getStatefulSetMaxUnavailable`: `maxUnavailable` of `replicas` (a percentage rounds
/// up), at least 1.
pub(crate) fn max_unavailable(set: &StatefulSet, replicas: i32) -> i32 {
    let value = set
        .spec
        .opt()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.max_unavailable.clone());
    let n = match value {
        None => 1,
        Some(IntOrString::Int(n)) => n,
        Some(IntOrString::String(s)) => s
            .strip_suffix('%')
            .and_then(|p| p.parse::<i64>().ok())
            .map_or(1, |p| {
                let scaled = (p * i64::from(replicas) + 99) / 100;
                i32::try_from(scaled).unwrap_or(i32::MAX)
            }),
    };
    n.max(1)
}

/// `newVersionedStatefulSetPod`: the pod for `ordinal`, at the current revision below the
/// partition of a rolling update, at the update revision otherwise.
fn new_versioned_pod(input: &Input<'_>, ordinal: i32) -> Pod {
    let current = input.current.set;
    let start = identity::start_ordinal(current);
    let at_current = strategy_type(current) == "RollingUpdate"
        && match partition(current) {
            Some(p) => ordinal < start.saturating_add(p),
            None => {
                let current_replicas = current
                    .status
                    .as_ref()
                    .and_then(|s| s.current_replicas)
                    .unwrap_or(0);
                ordinal < start.saturating_add(current_replicas)
            }
        };
    if at_current {
        identity::new_pod(current, ordinal, input.current.name)
    } else {
        identity::new_pod(input.update.set, ordinal, input.update.name)
    }
}

/// `updateStatus` over the pods that exist.
fn count<'a>(
    status: &mut StatefulSetStatus,
    pods: impl Iterator<Item = &'a Pod>,
    input: &Input<'_>,
    min_ready: i32,
) {
    let (mut replicas, mut ready, mut available, mut current, mut updated) = (0, 0, 0, 0, 0);
    for pod in pods {
        if is_created(pod) {
            replicas += 1;
        }
        if is_running_and_ready(pod) {
            ready += 1;
            if is_running_and_available(pod, min_ready, input.now) {
                available += 1;
            }
        }
        if is_created(pod) && !is_terminating(pod) {
            let revision = identity::revision(pod);
            if revision == input.current.name {
                current += 1;
            }
            if revision == input.update.name {
                updated += 1;
            }
        }
    }
    status.replicas = replicas;
    status.ready_replicas = Some(ready);
    status.available_replicas = Some(available);
    status.current_replicas = Some(current);
    status.updated_replicas = Some(updated);
}

/// The claims of the pod with `ordinal` that do not exist, and whether one that exists is
/// being deleted.
fn missing_claims(input: &Input<'_>, ordinal: i32) -> (Vec<PersistentVolumeClaim>, bool) {
    let mut missing = Vec::new();
    let mut deleting = false;
    for claim in identity::claims(input.set, ordinal) {
        match input
            .claims
            .get(claim.metadata.name.as_deref().unwrap_or_default())
        {
            None => missing.push(claim),
            Some(existing) if existing.metadata.deletion_timestamp.is_some() => deleting = true,
            Some(_) => {}
        }
    }
    (missing, deleting)
}

/// The claim owner fixes the retention policy asks for on `pod`'s claims.
fn retention_steps(input: &Input<'_>, pod: &Arc<Pod>, scaled_down: bool) -> Vec<Step> {
    let Some(ordinal) = identity::ordinal(pod) else {
        return Vec::new();
    };
    identity::claims(input.set, ordinal)
        .iter()
        .filter_map(|c| {
            input
                .claims
                .get(c.metadata.name.as_deref().unwrap_or_default())
        })
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .filter_map(|claim| {
            let existing = claim.metadata.owner_references.clone().unwrap_or_default();
            let owners = identity::claim_owners(input.set, &existing, Some(pod), scaled_down);
            (!identity::same_owners(&existing, &owners)).then(|| Step::SetClaimOwners {
                claim: claim.clone(),
                owners,
            })
        })
        .collect()
}

/// Where a sync stopped.
enum Flow {
    Go,
    Stop,
}

/// One sync of `input.set`; see the module docs.
pub(crate) fn plan(input: &Input<'_>) -> Plan {
    let set = input.set;
    let min_ready = set
        .spec
        .opt()
        .and_then(|s| s.min_ready_seconds)
        .unwrap_or(0);
    let replicas = identity::replicas(set);
    let start = identity::start_ordinal(set);
    let mut plan = Plan {
        status: StatefulSetStatus {
            observed_generation: set.metadata.generation,
            current_revision: Some(input.current.name.to_string()),
            update_revision: Some(input.update.name.to_string()),
            collision_count: Some(input.collision_count),
            conditions: set.status.as_ref().and_then(|s| s.conditions.clone()),
            ..StatefulSetStatus::default()
        },
        ..Plan::default()
    };
    // Replicas by ordinal, and the condemned (valid ordinals out of range), highest first.
    let mut slots: Vec<Option<Arc<Pod>>> = vec![None; usize::try_from(replicas).unwrap_or(0)];
    let mut condemned: Vec<Arc<Pod>> = Vec::new();
    for pod in input.pods {
        let Some(o) = identity::ordinal(pod) else {
            continue;
        };
        if !identity::in_range(set, pod) {
            condemned.push(pod.clone());
        } else if let Some(slot) = usize::try_from(o - start)
            .ok()
            .and_then(|i| slots.get_mut(i))
        {
            *slot = Some(pod.clone());
        }
    }
    condemned.sort_by_key(|p| std::cmp::Reverse(identity::ordinal(p)));
    let existing = || {
        slots
            .iter()
            .flatten()
            .chain(condemned.iter())
            .map(AsRef::as_ref)
    };
    count(&mut plan.status, existing(), input, min_ready);
    // The first unavailable pod: a replica (by index) or a condemned pod (lowest first).
    let first_unavailable: Option<Result<usize, String>> = slots
        .iter()
        .position(|p| is_unavailable(p.as_deref(), min_ready, input.now))
        .map(Ok)
        .or_else(|| {
            condemned
                .iter()
                .rev()
                .find(|p| is_unavailable(Some(p), min_ready, input.now))
                .map(|p| Err(p.metadata.name.clone().unwrap_or_default()))
        });
    if set.metadata.deletion_timestamp.is_some() {
        return plan;
    }
    let monotonic = monotonic(set);
    let flow = replicas_steps(input, &slots, start, monotonic, min_ready, &mut plan);
    if let Flow::Go = flow {
        for pod in &condemned {
            plan.steps.extend(retention_steps(input, pod, true));
        }
        let mut flow = Flow::Go;
        for pod in &condemned {
            let first = matches!(&first_unavailable, Some(Err(name)) if pod.metadata.name.as_ref() == Some(name));
            if is_terminating(pod) {
                if monotonic {
                    flow = Flow::Stop;
                    break;
                }
                continue;
            }
            if monotonic
                && !first
                && (!is_running_and_ready(pod)
                    || !is_running_and_available(pod, min_ready, input.now))
            {
                flow = Flow::Stop;
                break;
            }
            plan.steps.push(Step::DeletePod { pod: pod.clone() });
            if monotonic {
                flow = Flow::Stop;
                break;
            }
        }
        if let Flow::Go = flow
            && strategy_type(set) == "RollingUpdate"
        {
            rolling_update(input, &slots, replicas, min_ready, &mut plan);
        }
    }
    complete_rolling_update(set, &mut plan.status);
    plan
}

/// `processReplica` for each replica, in ordinal order.
fn replicas_steps(
    input: &Input<'_>,
    slots: &[Option<Arc<Pod>>],
    start: i32,
    monotonic: bool,
    min_ready: i32,
    plan: &mut Plan,
) -> Flow {
    for (i, slot) in slots.iter().enumerate() {
        let ordinal = start.saturating_add(i32::try_from(i).unwrap_or(i32::MAX));
        let Some(pod) = slot else {
            let (claims, deleting) = missing_claims(input, ordinal);
            if deleting {
                plan.claim_deleting = true;
                if monotonic {
                    return Flow::Stop;
                }
                continue;
            }
            plan.steps.push(Step::CreatePod {
                pod: new_versioned_pod(input, ordinal),
                claims,
            });
            if monotonic {
                return Flow::Stop;
            }
            continue;
        };
        if matches!(phase(pod), Some("Failed" | "Succeeded")) {
            if !is_terminating(pod) {
                plan.steps.push(Step::DeletePod { pod: pod.clone() });
            }
            if monotonic {
                return Flow::Stop;
            }
            continue;
        }
        if phase(pod) == Some("Pending") {
            let (claims, _) = missing_claims(input, ordinal);
            if !claims.is_empty() {
                plan.steps.push(Step::CreateClaims {
                    pod: pod.metadata.name.clone().unwrap_or_default(),
                    claims,
                });
            }
        }
        if monotonic
            && (is_terminating(pod)
                || !is_running_and_ready(pod)
                || !is_running_and_available(pod, min_ready, input.now))
        {
            return Flow::Stop;
        }
        if !identity::identity_matches(input.set, pod) {
            plan.steps.push(Step::UpdatePod {
                pod: identity::with_identity(pod),
            });
        }
        if !identity::storage_matches(input.set, pod) {
            let (claims, _) = missing_claims(input, ordinal);
            if !claims.is_empty() {
                plan.steps.push(Step::CreateClaims {
                    pod: pod.metadata.name.clone().unwrap_or_default(),
                    claims,
                });
            }
        }
        plan.steps.extend(retention_steps(input, pod, false));
    }
    Flow::Go
}

/// `updateStatefulSetAfterInvariantEstablished`: delete out-of-date replicas from the
/// highest ordinal down to the partition, keeping at most `maxUnavailable` unavailable.
fn rolling_update(
    input: &Input<'_>,
    slots: &[Option<Arc<Pod>>],
    replicas: i32,
    min_ready: i32,
    plan: &mut Plan,
) {
    let set = input.set;
    let partition = usize::try_from(partition(set).unwrap_or(0)).unwrap_or(0);
    let max = max_unavailable(set, replicas);
    let unavailable = i32::try_from(
        slots
            .iter()
            .filter(|p| is_unavailable(p.as_deref(), min_ready, input.now))
            .count(),
    )
    .unwrap_or(i32::MAX);
    if unavailable > max {
        return;
    }
    let mut budget = max - unavailable;
    for slot in slots.iter().skip(partition).rev() {
        if budget <= 0 {
            break;
        }
        let Some(pod) = slot else {
            continue;
        };
        if identity::revision(pod) != input.update.name && !is_terminating(pod) {
            plan.steps.push(Step::DeletePod { pod: pod.clone() });
            budget -= 1;
            if let Some(current) = plan.status.current_replicas.as_mut() {
                *current -= 1;
            }
        }
    }
}

/// `completeRollingUpdate`: once every pod is updated and ready, the update revision is
/// the current one.
fn complete_rolling_update(set: &StatefulSet, status: &mut StatefulSetStatus) {
    let replicas = status.replicas;
    if strategy_type(set) == "RollingUpdate"
        && status.updated_replicas == Some(replicas)
        && status.ready_replicas == Some(replicas)
    {
        status.current_replicas = status.updated_replicas;
        status.current_revision = status.update_revision.clone();
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    use super::*;

    fn set(extra: serde_json::Value) -> StatefulSet {
        let mut v = json!({
            "metadata": {"name": "web", "namespace": "default", "uid": "s1", "generation": 2},
            "spec": {
                "replicas": 3,
                "serviceName": "nginx",
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                             "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            },
        });
        json_patch::merge(&mut v, &extra);
        serde_json::from_value(v).unwrap_or_default()
    }

    /// A pod of `s` with `ordinal` at `revision`, in `phase` (ready when Running).
    fn pod(s: &StatefulSet, ordinal: i32, revision: &str, phase: &str) -> Arc<Pod> {
        let mut p = identity::new_pod(s, ordinal, revision);
        p.metadata.uid = Some(format!("p{ordinal}"));
        p.status = serde_json::from_value(json!({"phase": phase, "conditions": [
            {"type": "Ready", "status": if phase == "Running" {"True"} else {"False"},
             "lastTransitionTime": "2026-01-01T00:00:00Z"}]}))
        .ok();
        Arc::new(p)
    }

    fn now() -> jiff::Timestamp {
        "2026-01-01T01:00:00Z"
            .parse()
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
    }

    fn run(s: &StatefulSet, pods: &[Arc<Pod>], current: &str, update: &str) -> Plan {
        let claims = BTreeMap::new();
        plan(&Input {
            set: s,
            current: Revision {
                name: current,
                set: s,
            },
            update: Revision {
                name: update,
                set: s,
            },
            collision_count: 0,
            pods,
            claims: &claims,
            now: now(),
        })
    }

    /// What the steps do, as `verb name`.
    fn steps(plan: &Plan) -> Vec<String> {
        plan.steps
            .iter()
            .map(|s| match s {
                Step::CreatePod { pod, .. } => {
                    format!("create {}", pod.metadata.name.clone().unwrap_or_default())
                }
                Step::CreateClaims { claims, .. } => format!("claims {}", claims.len()),
                Step::DeletePod { pod } => {
                    format!("delete {}", pod.metadata.name.clone().unwrap_or_default())
                }
                Step::UpdatePod { pod } => {
                    format!("update {}", pod.metadata.name.clone().unwrap_or_default())
                }
                Step::SetClaimOwners { claim, .. } => {
                    format!("own {}", claim.metadata.name.clone().unwrap_or_default())
                }
            })
            .collect()
    }

    /// `stateful_set_control.go` `processReplica` (monotonic): one pod at a time, each
    /// Running and Ready before the next.
    #[test]
    fn ordered_ready_creates_one_pod_at_a_time() {
        let s = set(json!({}));
        assert_eq!(steps(&run(&s, &[], "r1", "r1")), ["create web-0"]);
        let pending = [pod(&s, 0, "r1", "Pending")];
        assert!(
            steps(&run(&s, &pending, "r1", "r1")).is_empty(),
            "web-0 not ready: wait"
        );
        let running = [pod(&s, 0, "r1", "Running")];
        assert_eq!(steps(&run(&s, &running, "r1", "r1")), ["create web-1"]);
        let hole = [pod(&s, 0, "r1", "Running"), pod(&s, 2, "r1", "Running")];
        assert_eq!(
            steps(&run(&s, &hole, "r1", "r1")),
            ["create web-1"],
            "a missing ordinal comes back first"
        );
        let failed = [pod(&s, 0, "r1", "Failed"), pod(&s, 1, "r1", "Running")];
        assert_eq!(
            steps(&run(&s, &failed, "r1", "r1")),
            ["delete web-0"],
            "recreated under its name"
        );
        let all = [
            pod(&s, 0, "r1", "Running"),
            pod(&s, 1, "r1", "Running"),
            pod(&s, 2, "r1", "Running"),
        ];
        let p = run(&s, &all, "r1", "r1");
        assert!(p.steps.is_empty());
        assert_eq!(
            (
                p.status.replicas,
                p.status.ready_replicas,
                p.status.current_replicas
            ),
            (3, Some(3), Some(3))
        );
        assert_eq!(p.status.observed_generation, Some(2));
    }

    /// `processCondemned`: scale down from the highest ordinal, one at a time, waiting for
    /// termination.
    #[test]
    fn ordered_ready_scales_down_in_reverse() {
        let s = set(json!({"spec": {"replicas": 1}}));
        let all = [
            pod(&s, 0, "r1", "Running"),
            pod(&s, 1, "r1", "Running"),
            pod(&s, 2, "r1", "Running"),
        ];
        assert_eq!(steps(&run(&s, &all, "r1", "r1")), ["delete web-2"]);
        let mut terminating = (*pod(&s, 2, "r1", "Running")).clone();
        terminating.metadata.deletion_timestamp = Some(Time(now()));
        let waiting = [
            pod(&s, 0, "r1", "Running"),
            pod(&s, 1, "r1", "Running"),
            Arc::new(terminating),
        ];
        assert!(
            steps(&run(&s, &waiting, "r1", "r1")).is_empty(),
            "web-2 terminates first"
        );
        let unready = [pod(&s, 0, "r1", "Pending"), pod(&s, 1, "r1", "Running")];
        assert!(
            steps(&run(&s, &unready, "r1", "r1")).is_empty(),
            "web-0 must be healthy first"
        );
    }

    /// `allowsBurst`: Parallel creates and deletes everything at once.
    #[test]
    fn parallel_does_everything_at_once() {
        let s = set(json!({"spec": {"podManagementPolicy": "Parallel"}}));
        assert_eq!(
            steps(&run(&s, &[], "r1", "r1")),
            ["create web-0", "create web-1", "create web-2"]
        );
        let down = set(json!({"spec": {"podManagementPolicy": "Parallel", "replicas": 0}}));
        let all = [
            pod(&s, 0, "r1", "Pending"),
            pod(&s, 1, "r1", "Running"),
            pod(&s, 2, "r1", "Running"),
        ];
        assert_eq!(
            steps(&run(&down, &all, "r1", "r1")),
            ["delete web-2", "delete web-1", "delete web-0"]
        );
    }

    /// `updateStatefulSetAfterInvariantEstablished`: highest ordinal first, down to the
    /// partition; `completeRollingUpdate`.
    #[test]
    fn a_rolling_update_goes_by_ordinal_down_to_the_partition() {
        // Ordinals at or above the partition (2) are updated.
        let s = set(json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}}));
        let old = [
            pod(&s, 0, "r1", "Running"),
            pod(&s, 1, "r1", "Running"),
            pod(&s, 2, "r1", "Running"),
        ];
        let p = run(&s, &old, "r1", "r2");
        assert_eq!(steps(&p), ["delete web-2"]);
        assert_eq!(p.status.current_replicas, Some(2));
        let recreating = [pod(&s, 0, "r1", "Running"), pod(&s, 1, "r1", "Running")];
        let p = run(&s, &recreating, "r1", "r2");
        match p.steps.as_slice() {
            [Step::CreatePod { pod, .. }] => assert_eq!(identity::revision(pod), "r2"),
            other => panic!("{other:?}"),
        }
        let one_new = [
            pod(&s, 0, "r1", "Running"),
            pod(&s, 1, "r1", "Running"),
            pod(&s, 2, "r2", "Running"),
        ];
        let p = run(&s, &one_new, "r1", "r2");
        assert!(p.steps.is_empty(), "the partition keeps web-0 and web-1");
        assert_eq!(
            (
                p.status.updated_replicas,
                p.status.current_revision.as_deref()
            ),
            (Some(1), Some("r1"))
        );
        // Below the partition, a recreated pod stays at the current revision.
        let p = run(&s, &one_new[1..], "r1", "r2");
        match p.steps.as_slice() {
            [Step::CreatePod { pod, .. }] => assert_eq!(identity::revision(pod), "r1"),
            other => panic!("{other:?}"),
        }
        let s0 = set(json!({}));
        assert_eq!(steps(&run(&s0, &one_new, "r1", "r2")), ["delete web-1"]);
        let done = [
            pod(&s, 0, "r2", "Running"),
            pod(&s, 1, "r2", "Running"),
            pod(&s, 2, "r2", "Running"),
        ];
        let p = run(&s0, &done, "r1", "r2");
        assert_eq!(
            p.status.current_revision.as_deref(),
            Some("r2"),
            "the update is complete"
        );
        assert_eq!(p.status.current_replicas, Some(3));
        let on_delete =
            set(json!({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": null}}}));
        assert!(run(&on_delete, &old, "r1", "r2").steps.is_empty());
        assert_eq!(
            steps(&run(&on_delete, &old[..2], "r1", "r2")),
            ["create web-2"]
        );
    }

    /// `isRunningAndAvailable`: with `minReadySeconds`, OrderedReady waits for a ready pod
    /// to be available before the next, and `availableReplicas` counts only those.
    #[test]
    fn min_ready_seconds_hold_up_the_next_pod_and_availability() {
        // Ready since 00:00, the sync at 01:00.
        let s = set(json!({"spec": {"minReadySeconds": 7200}}));
        let running = [pod(&s, 0, "r1", "Running")];
        let p = run(&s, &running, "r1", "r1");
        assert!(p.steps.is_empty(), "web-0 is ready, not yet available");
        assert_eq!(
            (p.status.ready_replicas, p.status.available_replicas),
            (Some(1), Some(0))
        );
        let s = set(json!({"spec": {"minReadySeconds": 60}}));
        let p = run(&s, &running, "r1", "r1");
        assert_eq!(steps(&p), ["create web-1"]);
        assert_eq!(p.status.available_replicas, Some(1));
    }

    #[test]
    fn max_unavailable_scales_and_deletes_several() {
        let s = set(json!({"spec": {"replicas": 4, "updateStrategy":
            {"rollingUpdate": {"partition": 0, "maxUnavailable": "50%"}}}}));
        assert_eq!(max_unavailable(&s, 4), 2);
        assert_eq!(max_unavailable(&s, 3), 2, "rounds up");
        assert_eq!(max_unavailable(&set(json!({})), 3), 1);
        let old: Vec<_> = (0..4).map(|i| pod(&s, i, "r1", "Running")).collect();
        assert_eq!(
            steps(&run(&s, &old, "r1", "r2")),
            ["delete web-3", "delete web-2"]
        );
    }

    #[test]
    fn claims_are_created_with_their_pod_and_owned_as_the_policy_says() {
        let s = set(json!({"spec": {
            "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {"accessModes": ["ReadWriteOnce"]}}],
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Delete"}}}));
        let p = run(&s, &[], "r1", "r1");
        match p.steps.as_slice() {
            [Step::CreatePod { claims, .. }] => {
                assert_eq!(claims.len(), 1);
                assert_eq!(claims[0].metadata.name.as_deref(), Some("www-web-0"));
                let owners = claims[0]
                    .metadata
                    .owner_references
                    .clone()
                    .unwrap_or_default();
                assert_eq!(
                    owners.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>(),
                    ["StatefulSet"]
                );
            }
            other => panic!("{other:?}"),
        }
        // A scaled-down pod's claim goes to the pod.
        let down = set(json!({"spec": {"replicas": 0,
            "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {}}],
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Delete"}}}));
        let claim = identity::claims(&s, 0).remove(0);
        let claims = BTreeMap::from([("www-web-0".to_string(), Arc::new(claim))]);
        let pods = [pod(&s, 0, "r1", "Running")];
        let p = plan(&Input {
            set: &down,
            current: Revision {
                name: "r1",
                set: &down,
            },
            update: Revision {
                name: "r1",
                set: &down,
            },
            collision_count: 0,
            pods: &pods,
            claims: &claims,
            now: now(),
        });
        assert_eq!(steps(&p), ["own www-web-0", "delete web-0"]);
    }
}
