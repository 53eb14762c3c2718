//! kube-controller-manager's ReplicaSet controller (`pkg/controller/replicaset/replica_set.go`
//! and `replica_set_utils.go`): keeps `spec.replicas` active pods from the template, and
//! reports how many there are, are ready and are available.
//!
//! The sync loop (`syncReplicaSet`), one ReplicaSet at a time:
//!
//! 1. Wait until the pod cache holds every pod this controller created or deleted
//!    (KEP-5647's `ConsistencyStore`, which replaces the controller's expectations): a
//!    stale cache would count too few pods and create a second set. Not caught up within
//!    the wait: requeue.
//! 2. Being deleted: nothing (the garbage collector removes the pods).
//! 3. Claim pods (`ClaimPods`): the active pods it controls, plus orphans in its namespace
//!    that its selector matches (adopted: it becomes their controller owner); pods it
//!    controls that the selector no longer matches are released.
//! 4. Manage replicas (`manageReplicas`): too few active pods, create the difference from
//!    the template (at most 500 per sync, `burstReplicas`); too many, delete the ones that
//!    matter least (`getPodsToDelete`: unscheduled before scheduled, pending before
//!    running, unready before ready, ready for less time, more restarts, newer first). A
//!    failed create is reported as the `ReplicaFailure` condition.
//! 5. Status (`calculateStatus`): `replicas`, `fullyLabeledReplicas`, `readyReplicas`,
//!    `availableReplicas` (ready for `minReadySeconds`), `observedGeneration`; written
//!    when it changed. If a ready pod becomes available later, requeue for then.

use std::{cmp::Reverse, sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        apps::v1::{ReplicaSet, ReplicaSetCondition, ReplicaSetStatus},
        core::v1::Pod,
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time},
};
use kubegen::{
    cache::Lister,
    client::{
        Error, ResourceClient,
        params::{DeleteParams, PostParams},
    },
    controller::{Action, CachedClient, Controller, ControllerError},
};
use tokio_util::sync::CancellationToken;

use super::{
    compat::{self, Opt},
    config::Cluster,
    events::{EventType, Recorder},
    pods,
};

/// The most pods one sync creates or deletes (`BurstReplicas`).
const BURST_REPLICAS: usize = 500;

/// How long a sync waits for the pod cache to show the controller's own writes.
const CONSISTENCY_WAIT: Duration = Duration::from_secs(5);

struct Context {
    cluster: Arc<Cluster>,
    recorder: Recorder,
    pods: CachedClient<Pod>,
    pod_lister: Lister<Pod>,
}

/// Runs the ReplicaSet controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let pods = CachedClient::<Pod>::new(cluster.client.clone(), &cluster.factory).map_err(|e| {
        ControllerError::Informer {
            controller: "replicaset".into(),
            source: e,
        }
    })?;
    let pod_lister = cluster.factory.lister_for::<Pod>();
    let controller = Controller::<ReplicaSet>::builder(&cluster.factory)
        .named("replicaset")
        .owns::<Pod>()
        .build();
    let cx = Arc::new(Context {
        recorder: cluster.recorder("replicaset-controller"),
        cluster,
        pods,
        pod_lister,
    });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

async fn reconcile(rs: Arc<ReplicaSet>, cx: Arc<Context>) -> Result<Action, Error> {
    // 1.
    if let Some(consistency) = cx.pods.consistency()
        && !consistency.ensure_all_ready(CONSISTENCY_WAIT).await
    {
        return Ok(Action::requeue_after(Duration::from_millis(100)));
    }
    // 2.
    if rs.metadata.deletion_timestamp.is_some() {
        return Ok(Action::done());
    }
    let namespace = rs.metadata.namespace.clone().unwrap_or_default();
    let spec = rs.spec.opt().cloned().unwrap_or_default();
    // 3.
    // The candidates: the pods it controls (the pod cache's controller index) and those
    // its selector matches (a selector that does not parse matches nothing).
    let selector = kube_core::Selector::try_from(spec.selector.clone()).ok();
    let mut candidates: std::collections::BTreeMap<(String, String), Arc<Pod>> =
        pods::controlled_by(
            &cx.pod_lister,
            rs.metadata.uid.as_deref().unwrap_or_default(),
        )
        .into_iter()
        .map(|p| (pod_key(&p), p))
        .collect();
    if let Some(selector) = &selector {
        for pod in cx.pod_lister.namespaced(&namespace).list(selector) {
            candidates.insert(pod_key(&pod), pod);
        }
    }
    let owned = pods::claim(
        &cx.pods,
        candidates.into_values().collect(),
        &spec.selector,
        &owner_reference(&rs),
        pods::is_active,
    )
    .await?;
    let active: Vec<Arc<Pod>> = owned
        .iter()
        .filter(|p| pods::is_active(p))
        .cloned()
        .collect();
    // 4.
    let failure = manage(&cx, &rs, &active).await?;
    // 5.
    let now = crate::clock::now();
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let status = calculate_status(&rs, &active, failure, now);
    if rs.status.as_ref() != Some(&status) {
        let mut updated = (*rs).clone();
        updated.status = Some(status);
        let client: ResourceClient<ReplicaSet> =
            ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
        match client.update_status(&PostParams::default(), &updated).await {
            Ok(_) => {}
            // Gone, or changed meanwhile: the newer object's event brings it back.
            Err(e) if e.is_not_found() || e.is_conflict() => return Ok(Action::done()),
            Err(e) => return Err(e),
        }
    }
    let later = active
        .iter()
        .filter_map(|p| pods::available_in(p, min_ready, now))
        .min();
    Ok(later.map_or_else(Action::done, Action::requeue_after))
}

/// The controller owner reference pods of `rs` carry.
fn owner_reference(rs: &ReplicaSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: rs.metadata.name.clone().unwrap_or_default(),
        uid: rs.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A pod's namespace and name, its order among the candidates.
fn pod_key(pod: &Pod) -> (String, String) {
    (
        pod.metadata.namespace.clone().unwrap_or_default(),
        pod.metadata.name.clone().unwrap_or_default(),
    )
}

/// Step 4: creates or deletes pods; returns the message of a failed create.
async fn manage(
    cx: &Context,
    rs: &ReplicaSet,
    active: &[Arc<Pod>],
) -> Result<Option<String>, Error> {
    let want = usize::try_from(rs.spec.opt().and_then(|s| s.replicas).unwrap_or(1)).unwrap_or(0);
    if active.len() < want {
        let missing = (want - active.len()).min(BURST_REPLICAS);
        for _ in 0..missing {
            match cx
                .pods
                .create(&PostParams::default(), &pod_from_template(rs))
                .await
            {
                Ok(pod) => {
                    let name = pod.metadata.name.unwrap_or_default();
                    cx.recorder
                        .record(
                            rs,
                            EventType::Normal,
                            "SuccessfulCreate",
                            format!("Created pod: {name}"),
                        )
                        .await;
                }
                Err(e) if e.is_not_found() => return Ok(None),
                Err(Error::Api(status)) => {
                    cx.recorder
                        .record(
                            rs,
                            EventType::Warning,
                            "FailedCreate",
                            format!("Error creating: {}", status.message),
                        )
                        .await;
                    return Ok(Some(status.message.clone()));
                }
                Err(e) => return Err(e),
            }
        }
    } else if active.len() > want {
        let mut ranked: Vec<&Arc<Pod>> = active.iter().collect();
        ranked.sort_by_key(|p| delete_rank(p));
        for pod in ranked
            .into_iter()
            .take((active.len() - want).min(BURST_REPLICAS))
        {
            match cx
                .pods
                .delete(
                    pod.metadata.namespace.as_deref(),
                    pod.metadata.name.as_deref().unwrap_or_default(),
                    &DeleteParams::default(),
                )
                .await
            {
                Ok(_) => {
                    let name = pod.metadata.name.as_deref().unwrap_or_default();
                    cx.recorder
                        .record(
                            rs,
                            EventType::Normal,
                            "SuccessfulDelete",
                            format!("Deleted pod: {name}"),
                        )
                        .await;
                }
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(None)
}

/// `getPodsToDelete`'s order: the pods first in this order go first.
fn delete_rank(pod: &Pod) -> impl Ord + use<> {
    let assigned = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty());
    let phase = match pods::phase(pod) {
        "Pending" => 0,
        "Unknown" => 1,
        _ => 2,
    };
    let ready_since = pods::condition(pod, "Ready")
        .filter(|c| c.status == "True")
        .and_then(|c| c.last_transition_time.clone())
        .map(|Time(t)| t);
    let restarts: i32 = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|c| c.restart_count)
        .sum();
    let created = pod.metadata.creation_timestamp.clone().map(|Time(t)| t);
    (
        assigned,
        phase,
        pods::is_ready(pod),
        Reverse(ready_since),
        Reverse(restarts),
        Reverse(created),
        pod.metadata.name.clone(),
    )
}

/// A new pod of `rs` (`GetPodFromTemplate`).
fn pod_from_template(rs: &ReplicaSet) -> Pod {
    let template = rs
        .spec
        .opt()
        .and_then(|s| s.template.clone())
        .unwrap_or_default();
    let template_meta = template.metadata.unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(format!(
                "{}-",
                rs.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: rs.metadata.namespace.clone(),
            labels: template_meta.labels,
            annotations: template_meta.annotations,
            finalizers: template_meta.finalizers,
            owner_references: Some(vec![owner_reference(rs)]),
            ..ObjectMeta::default()
        },
        spec: template.spec,
        status: None,
    }
}

/// Step 5 (`calculateStatus`).
fn calculate_status(
    rs: &ReplicaSet,
    active: &[Arc<Pod>],
    failure: Option<String>,
    now: jiff::Timestamp,
) -> ReplicaSetStatus {
    let spec = rs.spec.opt().cloned().unwrap_or_default();
    let template_labels = spec
        .template
        .as_ref()
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let count = |f: &dyn Fn(&Pod) -> bool| {
        i32::try_from(active.iter().filter(|p| f(p)).count()).unwrap_or(i32::MAX)
    };
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let mut conditions: Vec<ReplicaSetCondition> = rs
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    match failure {
        Some(message) => {
            if !conditions
                .iter()
                .any(|c| compat::text(&c.type_) == "ReplicaFailure")
            {
                conditions.push(ReplicaSetCondition {
                    type_: compat::field("ReplicaFailure".to_string()),
                    status: compat::field("True".to_string()),
                    reason: Some("FailedCreate".into()),
                    message: Some(message),
                    last_transition_time: Some(Time(now)),
                });
            }
        }
        None => conditions.retain(|c| compat::text(&c.type_) != "ReplicaFailure"),
    }
    ReplicaSetStatus {
        replicas: count(&|_| true),
        fully_labeled_replicas: Some(count(&|p| {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            template_labels
                .iter()
                .all(|(k, v)| labels.get(k) == Some(v))
        })),
        ready_replicas: Some(count(&pods::is_ready)),
        available_replicas: Some(count(&|p| pods::is_available(p, min_ready, now))),
        observed_generation: rs.metadata.generation,
        conditions: (!conditions.is_empty()).then_some(conditions),
        ..ReplicaSetStatus::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, node: Option<&str>, phase: &str, ready: bool) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": node, "containers": []},
            "status": {"phase": phase, "conditions": [
                {"type": "Ready", "status": if ready {"True"} else {"False"},
                 "lastTransitionTime": "2026-01-01T00:00:10Z"}]},
        }))
        .unwrap_or_default()
    }

    #[test]
    fn pods_that_matter_least_are_deleted_first() {
        let mut all = [
            pod("running-ready", Some("n"), "Running", true),
            pod("unscheduled", None, "Pending", false),
            pod("running-unready", Some("n"), "Running", false),
            pod("pending", Some("n"), "Pending", false),
        ];
        all.sort_by_key(delete_rank);
        let names: Vec<_> = all.iter().filter_map(|p| p.metadata.name.clone()).collect();
        assert_eq!(
            names,
            ["unscheduled", "pending", "running-unready", "running-ready"]
        );
    }

    #[test]
    fn status_counts_ready_available_and_fully_labeled_pods() {
        let rs: ReplicaSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "generation": 3},
            "spec": {"replicas": 3, "minReadySeconds": 60, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web", "tier": "front"}}}},
        }))
        .unwrap_or_default();
        let mut labelled = pod("a", Some("n"), "Running", true);
        labelled.metadata.labels = Some(
            [
                ("app".into(), "web".into()),
                ("tier".into(), "front".into()),
            ]
            .into(),
        );
        let active: Vec<Arc<Pod>> = vec![
            Arc::new(labelled),
            Arc::new(pod("b", Some("n"), "Running", false)),
        ];
        let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap_or_default();
        let early = calculate_status(&rs, &active, None, at("2026-01-01T00:00:30Z"));
        assert_eq!(
            (
                early.replicas,
                early.ready_replicas,
                early.available_replicas,
                early.fully_labeled_replicas,
                early.observed_generation
            ),
            (2, Some(1), Some(0), Some(1), Some(3))
        );
        let late = calculate_status(
            &rs,
            &active,
            Some("quota".into()),
            at("2026-01-01T00:01:30Z"),
        );
        assert_eq!(late.available_replicas, Some(1));
        let failure = late.conditions.unwrap_or_default();
        assert_eq!(failure[0].reason.as_deref(), Some("FailedCreate"));
    }
}
