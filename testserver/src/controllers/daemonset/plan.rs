//! What one sync of a DaemonSet decides, without I/O: which nodes get a pod and which pods
//! go (`manage` / `podsShouldBeOnNode` in `pkg/controller/daemon/daemon_controller.go`),
//! how far a rolling update moves (`rollingUpdate` in `pkg/controller/daemon/update.go`),
//! and the status (`updateDaemonSetStatus`).
//!
//! Every function takes the nodes with their [`Eligibility`] and the DaemonSet's pods
//! grouped by the node they target ([`NodePods`]), and visits nodes in name order, so the
//! same inputs give the same plan.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        apps::v1::{DaemonSet, DaemonSetStatus},
        core::v1::Pod,
    },
    apimachinery::pkg::{apis::meta::v1::Time, util::intstr::IntOrString},
};

use super::{eligibility::Eligibility, revision};
use crate::controllers::{
    compat::Opt,
    deployment::rolling::{self, InvalidIntOrPercent},
    pods,
};

/// The DaemonSet's pods, by the node they run on or are pinned to (pods both finished and
/// being deleted left out, as `getNodesToDaemonPods` leaves them).
pub(crate) type NodePods = BTreeMap<String, Vec<Arc<Pod>>>;

/// What a sync creates and deletes.
#[derive(Debug, Default, Clone)]
pub(crate) struct Plan {
    /// Nodes that get a new pod.
    pub create: Vec<String>,
    /// Pods to delete.
    pub delete: Vec<Arc<Pod>>,
    /// Of those, the failed ones (each worth a `FailedDaemonPod` warning).
    pub failed: Vec<Arc<Pod>>,
}

impl Plan {
    /// Whether the plan does nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.create.is_empty() && self.delete.is_empty()
    }
}

fn min_ready(ds: &DaemonSet) -> i32 {
    ds.spec.opt().and_then(|s| s.min_ready_seconds).unwrap_or(0)
}

fn hash_of(pod: &Pod) -> Option<&str> {
    pod.metadata
        .labels
        .as_ref()?
        .get(revision::HASH_LABEL)
        .map(String::as_str)
}

/// `IsPodUpdated`: the pod carries the current revision's hash.
fn is_updated(pod: &Pod, hash: &str) -> bool {
    hash_of(pod) == Some(hash)
}

/// `podByCreationTimestampAndPhase`: bound pods first, then the oldest, then by name.
fn sort_oldest_first(pods: &mut [Arc<Pod>]) {
    pods.sort_by_key(|p| {
        let unbound = p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_none_or(str::is_empty);
        (
            unbound,
            p.metadata.creation_timestamp.clone().map(|Time(t)| t),
            p.metadata.name.clone(),
        )
    });
}

/// The rolling update's `maxSurge` and `maxUnavailable` (defaults 0 and 1).
fn rolling_limits(ds: &DaemonSet) -> (IntOrString, IntOrString) {
    let rolling = ds
        .spec
        .opt()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|s| s.rolling_update.as_ref());
    (
        rolling
            .and_then(|r| r.max_surge.clone())
            .unwrap_or(IntOrString::Int(0)),
        rolling
            .and_then(|r| r.max_unavailable.clone())
            .unwrap_or(IntOrString::Int(1)),
    )
}

/// Whether the DaemonSet rolls out with `RollingUpdate` (the default) rather than
/// `OnDelete`.
pub(crate) fn is_rolling(ds: &DaemonSet) -> bool {
    ds.spec
        .opt()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|s| s.type_.as_deref())
        .is_none_or(|t| t == "RollingUpdate")
}

/// `util.AllowsSurge`: a rolling update with a non-zero `maxSurge`.
fn allows_surge(ds: &DaemonSet) -> bool {
    is_rolling(ds)
        && rolling_limits(ds).0 != IntOrString::Int(0)
        && rolling_limits(ds).0 != IntOrString::String("0%".into())
}

/// `manage`: per node, `podsShouldBeOnNode` — a node that should run the pod and has none
/// gets one; failed or succeeded pods are deleted (the next sync replaces them); extra
/// pods beyond the oldest go (with surge: beyond the oldest new and the oldest old one,
/// the old one too once the new one is available, or at once if the old one is not
/// ready); a node that should not keep the pod loses every pod. Unbound pods pinned to a
/// node that no longer exists go too (`getUnscheduledPodsWithoutNode`).
pub(crate) fn manage(
    ds: &DaemonSet,
    hash: &str,
    nodes: &[(String, Eligibility)],
    by_node: &NodePods,
    now: jiff::Timestamp,
) -> Plan {
    let mut plan = Plan::default();
    let surge = allows_surge(ds);
    for (node, eligibility) in nodes {
        let existing = by_node.get(node);
        match (eligibility, existing) {
            (e, None) if e.should_run => plan.create.push(node.clone()),
            (e, _) if e.should_continue => {
                let mut running = Vec::new();
                for pod in existing.into_iter().flatten() {
                    if pod.metadata.deletion_timestamp.is_some() {
                        continue;
                    }
                    match pods::phase(pod) {
                        "Failed" => {
                            plan.failed.push(pod.clone());
                            plan.delete.push(pod.clone());
                        }
                        "Succeeded" => plan.delete.push(pod.clone()),
                        _ => running.push(pod.clone()),
                    }
                }
                sort_oldest_first(&mut running);
                if !surge {
                    plan.delete.extend(running.iter().skip(1).cloned());
                    continue;
                }
                if running.is_empty() {
                    if eligibility.should_run {
                        plan.create.push(node.clone());
                    }
                    continue;
                }
                if running.len() == 1 {
                    continue;
                }
                let (mut newest, mut oldest) = (None, None);
                for pod in running {
                    let slot = if is_updated(&pod, hash) {
                        &mut newest
                    } else {
                        &mut oldest
                    };
                    if slot.is_none() {
                        *slot = Some(pod);
                    } else {
                        plan.delete.push(pod);
                    }
                }
                if let (Some(new), Some(old)) = (newest, oldest)
                    && (!pods::is_ready(&old) || pods::is_available(&new, min_ready(ds), now))
                {
                    plan.delete.push(old);
                }
            }
            (_, Some(existing)) => plan.delete.extend(
                existing
                    .iter()
                    .filter(|p| p.metadata.deletion_timestamp.is_none())
                    .cloned(),
            ),
            _ => {}
        }
    }
    for (node, pods) in by_node {
        if nodes.iter().any(|(n, _)| n == node) {
            continue;
        }
        plan.delete.extend(
            pods.iter()
                .filter(|p| {
                    p.spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .is_none_or(str::is_empty)
                })
                .cloned(),
        );
    }
    plan
}

/// A node's pod of the current revision and its pod of an older one, either missing.
type NewAndOld = (Option<Arc<Pod>>, Option<Arc<Pod>>);

/// `findUpdatedPodsOnNode`: the node's one new and one old pod (either may be missing);
/// `None` when there are more (the manage step cleans those up first).
fn new_and_old(pods: &[Arc<Pod>], hash: &str) -> Option<NewAndOld> {
    let (mut new, mut old) = (None, None);
    for pod in pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let slot = if is_updated(pod, hash) {
            &mut new
        } else {
            &mut old
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(pod.clone());
    }
    Some((new, old))
}

/// `rollingUpdate`. Without surge: delete old pods while fewer than `maxUnavailable` of
/// the nodes are unavailable (an old pod that is not available anyway goes at once), and
/// let the next manage step create their replacements. With surge: create a new pod beside
/// an old one on up to `maxSurge` nodes (at once where the old one is not available), and
/// delete an old pod once the new one beside it is available.
pub(crate) fn rolling_update(
    ds: &DaemonSet,
    hash: &str,
    nodes: &[(String, Eligibility)],
    by_node: &NodePods,
    now: jiff::Timestamp,
) -> Result<Plan, InvalidIntOrPercent> {
    let min_ready = min_ready(ds);
    let should_run = |node: &str| nodes.iter().any(|(n, e)| n == node && e.should_run);
    let desired = nodes.iter().filter(|(_, e)| e.should_run).count();
    let desired_i32 = i32::try_from(desired).unwrap_or(i32::MAX);
    let (surge, unavailable) = rolling_limits(ds);
    let max_surge = rolling::scaled_value(&surge, desired_i32, true)?.max(0);
    let mut max_unavailable = rolling::scaled_value(&unavailable, desired_i32, true)?.max(0);
    if desired > 0 && max_surge == 0 && max_unavailable == 0 {
        max_unavailable = 1;
    }
    let (max_surge, max_unavailable) = (
        usize::try_from(max_surge).unwrap_or(0),
        usize::try_from(max_unavailable).unwrap_or(0),
    );
    // Every node that should run the pod, and every node with pods, in name order.
    let mut all: NodePods = by_node.clone();
    for (node, e) in nodes {
        if e.should_run {
            all.entry(node.clone()).or_default();
        }
    }
    let available = |p: &Pod| pods::is_available(p, min_ready, now);
    let mut plan = Plan::default();
    if max_surge == 0 {
        let mut unavailable = 0;
        let (mut replace, mut candidates) = (Vec::new(), Vec::new());
        for pods in all.values() {
            let Some((new, old)) = new_and_old(pods, hash) else {
                unavailable += 1;
                continue;
            };
            match (new, old) {
                (None, None) | (Some(_), Some(_)) => unavailable += 1,
                (Some(new), None) => {
                    if !available(&new) {
                        unavailable += 1;
                    }
                }
                (None, Some(old)) => {
                    if !available(&old) {
                        replace.push(old);
                        unavailable += 1;
                    } else if unavailable < max_unavailable {
                        candidates.push(old);
                    }
                }
            }
        }
        let room = max_unavailable
            .saturating_sub(unavailable)
            .min(candidates.len());
        plan.delete = replace;
        plan.delete.extend(candidates.into_iter().take(room));
        return Ok(plan);
    }
    let (mut surging, mut available_count) = (0usize, 0usize);
    let (mut allowed, mut candidates, mut leaving) = (Vec::new(), Vec::new(), Vec::new());
    for (node, pods) in &all {
        let Some((new, old)) = new_and_old(pods, hash) else {
            surging += 1;
            continue;
        };
        if let Some(p) = old.as_ref().or(new.as_ref())
            && available(p)
        {
            available_count += 1;
        }
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) => {
                if !should_run(node) {
                    if available(&old) {
                        leaving.push(old);
                    } else {
                        plan.delete.push(old);
                    }
                } else if !available(&old) {
                    allowed.push(node.clone());
                } else if surging < max_surge {
                    candidates.push(node.clone());
                }
            }
            (Some(new), Some(old)) => {
                if available(&new) {
                    plan.delete.push(old);
                } else {
                    surging += 1;
                }
            }
        }
    }
    // Pods on nodes the DaemonSet leaves go only once as many pods elsewhere are available.
    let deletable = available_count.saturating_sub(desired).min(leaving.len());
    plan.delete.extend(leaving.into_iter().take(deletable));
    let room = max_surge.saturating_sub(surging).min(candidates.len());
    plan.create = allowed;
    plan.create.extend(candidates.into_iter().take(room));
    Ok(plan)
}

/// `updateDaemonSetStatus`: per node that should run the pod, whether it has one (the
/// oldest counts), ready, available, up to date; pods on nodes that should not run it are
/// misscheduled. Also when a ready pod becomes available, for a requeue.
pub(crate) fn status(
    ds: &DaemonSet,
    hash: &str,
    nodes: &[(String, Eligibility)],
    by_node: &NodePods,
    now: jiff::Timestamp,
) -> (DaemonSetStatus, Option<Duration>) {
    let min_ready = min_ready(ds);
    let (mut desired, mut current, mut misscheduled) = (0, 0, 0);
    let (mut ready, mut available, mut updated) = (0, 0, 0);
    let mut later: Option<Duration> = None;
    for (node, eligibility) in nodes {
        let pods = by_node.get(node).filter(|p| !p.is_empty());
        if !eligibility.should_run {
            if pods.is_some() {
                misscheduled += 1;
            }
            continue;
        }
        desired += 1;
        let Some(pods) = pods else {
            continue;
        };
        current += 1;
        let mut pods = pods.clone();
        sort_oldest_first(&mut pods);
        let Some(pod) = pods.first() else {
            continue;
        };
        if pods::is_ready(pod) {
            ready += 1;
            if pods::is_available(pod, min_ready, now) {
                available += 1;
            } else if let Some(at) = pods::available_in(pod, min_ready, now) {
                later = Some(later.map_or(at, |l| l.min(at)));
            }
        }
        if is_updated(pod, hash) {
            updated += 1;
        }
    }
    let previous = ds.status.clone().unwrap_or_default();
    let status = DaemonSetStatus {
        collision_count: previous.collision_count,
        conditions: previous.conditions,
        current_number_scheduled: current,
        desired_number_scheduled: desired,
        number_available: Some(available),
        number_misscheduled: misscheduled,
        number_ready: ready,
        number_unavailable: Some(desired - available),
        observed_generation: ds.metadata.generation,
        updated_number_scheduled: Some(updated),
    };
    (status, later)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const RUN: Eligibility = Eligibility {
        should_run: true,
        should_continue: true,
    };
    const STAY: Eligibility = Eligibility {
        should_run: false,
        should_continue: true,
    };
    const NEVER: Eligibility = Eligibility {
        should_run: false,
        should_continue: false,
    };

    fn ds(strategy: serde_json::Value) -> DaemonSet {
        serde_json::from_value(json!({
            "metadata": {"name": "agent", "namespace": "default", "generation": 2},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "updateStrategy": strategy,
                "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": []}}},
        }))
        .unwrap_or_default()
    }

    fn pod(name: &str, node: &str, hash: &str, phase: &str, ready: bool) -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "labels": {"controller-revision-hash": hash},
                    "creationTimestamp": format!("2026-01-01T00:00:{:02}Z", name.len())},
                "spec": {"nodeName": node, "containers": []},
                "status": {"phase": phase, "conditions": [{"type": "Ready",
                    "status": if ready {"True"} else {"False"},
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
            }))
            .unwrap_or_default(),
        )
    }

    fn names(pods: &[Arc<Pod>]) -> Vec<String> {
        pods.iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect()
    }

    fn nodes(list: &[(&str, Eligibility)]) -> Vec<(String, Eligibility)> {
        list.iter().map(|(n, e)| ((*n).to_string(), *e)).collect()
    }

    /// `podsShouldBeOnNode`: a missing pod is created, a failed one deleted, extra pods
    /// beyond the oldest deleted, a node that should not keep the pod loses it.
    #[test]
    fn manage_keeps_one_healthy_pod_per_eligible_node() {
        let d = ds(json!({"type": "RollingUpdate"}));
        let now = crate::clock::now();
        let by_node: NodePods = [
            (
                "b".to_string(),
                vec![pod("failed", "b", "h", "Failed", false)],
            ),
            (
                "c".to_string(),
                vec![
                    pod("old", "c", "h", "Running", true),
                    pod("newer", "c", "h", "Running", true),
                ],
            ),
            (
                "d".to_string(),
                vec![pod("evicted", "d", "h", "Running", true)],
            ),
            (
                "e".to_string(),
                vec![pod("stays", "e", "h", "Running", true)],
            ),
        ]
        .into();
        let plan = manage(
            &d,
            "h",
            &nodes(&[
                ("a", RUN),
                ("b", RUN),
                ("c", RUN),
                ("d", NEVER),
                ("e", STAY),
            ]),
            &by_node,
            now,
        );
        assert_eq!(plan.create, ["a"]);
        assert_eq!(names(&plan.delete), ["failed", "newer", "evicted"]);
        assert_eq!(names(&plan.failed), ["failed"]);
    }

    /// `update.go` `rollingUpdate` without surge: at most `maxUnavailable` old pods go at a
    /// time, unavailable old pods go at once.
    #[test]
    fn rolling_update_replaces_max_unavailable_nodes_at_a_time() {
        let d = ds(json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}));
        let now = crate::clock::now();
        let three = nodes(&[("a", RUN), ("b", RUN), ("c", RUN)]);
        let old: NodePods = [
            (
                "a".to_string(),
                vec![pod("pa", "a", "old", "Running", true)],
            ),
            (
                "b".to_string(),
                vec![pod("pb", "b", "old", "Running", true)],
            ),
            (
                "c".to_string(),
                vec![pod("pc", "c", "old", "Running", false)],
            ),
        ]
        .into();
        let plan = rolling_update(&d, "new", &three, &old, now).unwrap_or_default();
        assert_eq!(
            names(&plan.delete),
            ["pc"],
            "the unready one fills the budget"
        );
        let mut progressing = old.clone();
        progressing.insert("c".into(), vec![pod("nc", "c", "new", "Running", true)]);
        let plan = rolling_update(&d, "new", &three, &progressing, now).unwrap_or_default();
        assert_eq!(names(&plan.delete), ["pa"]);
        progressing.insert("c".into(), vec![pod("nc", "c", "new", "Pending", false)]);
        let plan = rolling_update(&d, "new", &three, &progressing, now).unwrap_or_default();
        assert!(
            plan.delete.is_empty(),
            "a new pod not yet available holds the rollout"
        );
    }

    /// `rollingUpdate` with `maxSurge`: a new pod beside the old one, the old one goes once
    /// the new one is available.
    #[test]
    fn rolling_update_with_surge_starts_new_pods_first() {
        let d = ds(json!({"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}));
        let now = crate::clock::now();
        let two = nodes(&[("a", RUN), ("b", RUN)]);
        let old: NodePods = [
            (
                "a".to_string(),
                vec![pod("pa", "a", "old", "Running", true)],
            ),
            (
                "b".to_string(),
                vec![pod("pb", "b", "old", "Running", true)],
            ),
        ]
        .into();
        let plan = rolling_update(&d, "new", &two, &old, now).unwrap_or_default();
        assert_eq!((plan.create, plan.delete.len()), (vec!["a".to_string()], 0));
        let mut surged = old.clone();
        surged.insert(
            "a".into(),
            vec![
                pod("pa", "a", "old", "Running", true),
                pod("na", "a", "new", "Running", true),
            ],
        );
        let plan = rolling_update(&d, "new", &two, &surged, now).unwrap_or_default();
        assert_eq!(names(&plan.delete), ["pa"]);
        assert_eq!(
            plan.create,
            ["b"],
            "a's new pod is available: the surge moves on"
        );
        surged.insert(
            "a".into(),
            vec![
                pod("pa", "a", "old", "Running", true),
                pod("na", "a", "new", "Pending", false),
            ],
        );
        let plan = rolling_update(&d, "new", &two, &surged, now).unwrap_or_default();
        assert!(plan.is_empty(), "one surge pod at a time");
    }

    /// `updateDaemonSetStatus`'s counters.
    #[test]
    fn status_counts_scheduled_ready_updated_and_misscheduled() {
        let d = ds(json!({"type": "RollingUpdate"}));
        let by_node: NodePods = [
            (
                "a".to_string(),
                vec![pod("pa", "a", "new", "Running", true)],
            ),
            (
                "b".to_string(),
                vec![pod("pb", "b", "old", "Pending", false)],
            ),
            (
                "x".to_string(),
                vec![pod("px", "x", "new", "Running", true)],
            ),
        ]
        .into();
        let (s, later) = status(
            &d,
            "new",
            &nodes(&[("a", RUN), ("b", RUN), ("c", RUN), ("x", NEVER)]),
            &by_node,
            crate::clock::now(),
        );
        assert_eq!(
            (
                s.desired_number_scheduled,
                s.current_number_scheduled,
                s.number_ready
            ),
            (3, 2, 1)
        );
        assert_eq!(
            (
                s.number_available,
                s.number_unavailable,
                s.updated_number_scheduled
            ),
            (Some(1), Some(2), Some(1))
        );
        assert_eq!((s.number_misscheduled, s.observed_generation), (1, Some(2)));
        assert!(later.is_none());
    }
}
