//! kube-controller-manager's node lifecycle controller
//! (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`): tells a live node from
//! a dead one by its kubelet's heartbeat (its Lease in `kube-node-lease`, `node_lease.rs`)
//! and taints the dead ones, so the scheduler avoids them and the taint eviction
//! controller (`taint_eviction.rs`) moves their pods away.
//!
//! The sync loop, one Node at a time (a Lease's renewal brings its Node back; otherwise
//! the Node is looked at again when its grace period would run out, on the server's
//! clock):
//!
//! 1. The last heartbeat is the later of the Lease's `renewTime` and the `Ready`
//!    condition's `lastHeartbeatTime`. A node without either is left alone (no kubelet
//!    ever ran there).
//! 2. Heard from within the grace period (`--node-monitor-grace-period`, 50 s since
//!    Kubernetes 1.32), or `Ready` already `Unknown`: step 4.
//! 3. Silent for longer: every kubelet-owned condition (`Ready`, `MemoryPressure`,
//!    `DiskPressure`, `PIDPressure`) becomes `Unknown`, reason `NodeStatusUnknown`,
//!    message "Kubelet stopped posting node status." (`tryUpdateNodeHealth`).
//! 4. The taints follow the `Ready` condition (`doNoScheduleTaintingPass` and
//!    `processTaintBaseEviction`): `Unknown` → `node.kubernetes.io/unreachable`, `False` →
//!    `node.kubernetes.io/not-ready`, each as `NoSchedule` and `NoExecute` (with
//!    `timeAdded`); `True` → neither.
//! 5. A node that is not Ready marks its pods not ready (`MarkPodsNotReady`): their
//!    `Ready` condition becomes `False`, so Services and Deployments stop counting them.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        coordination::v1::Lease,
        core::v1::{Node, NodeCondition, Pod, Taint},
    },
    apimachinery::pkg::apis::meta::v1::Time,
};
use kubegen::{
    cache::Lister,
    client::{Error, ResourceClient, params::PostParams},
    controller::{Action, Controller, ControllerError, Request},
};
use tokio_util::sync::CancellationToken;

use super::{config::Cluster, node_lease, pods};

/// How long a node may stay silent before it is unknown (`--node-monitor-grace-period`,
/// 50 s since Kubernetes 1.32).
pub(crate) const GRACE_PERIOD: Duration = Duration::from_secs(50);

/// The taint of a node whose kubelet stopped posting status.
pub(crate) const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// The taint of a node whose kubelet reports it not ready.
pub(crate) const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// The conditions a kubelet owns, which go `Unknown` when it falls silent.
const KUBELET_CONDITIONS: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

struct Context {
    cluster: Arc<Cluster>,
    leases: Lister<Lease>,
    pods: Lister<Pod>,
}

/// Runs the node lifecycle controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let leases = cluster.factory.lister_for::<Lease>();
    let pods = cluster.factory.lister_for::<Pod>();
    let controller = Controller::<Node>::builder(&cluster.factory)
        .named("node-lifecycle")
        .watches::<Lease>(|lease| {
            if lease.metadata.namespace.as_deref() != Some(node_lease::NAMESPACE) {
                return Vec::new();
            }
            lease
                .metadata
                .name
                .as_deref()
                .map(|name| vec![Request::new(None, name)])
                .unwrap_or_default()
        })
        .build();
    let cx = Arc::new(Context {
        cluster,
        leases,
        pods,
    });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

/// What one look at a node decided.
#[derive(Debug, PartialEq)]
enum Health {
    /// No heartbeat was ever seen: not a kubelet's node.
    Unmonitored,
    /// Heard from recently: look again after this long.
    Alive(Duration),
    /// Silent for longer than the grace period.
    Silent,
}

/// Steps 1 and 2: the node's health at `now`, from its last heartbeat.
fn health(node: &Node, lease: Option<&Lease>, now: jiff::Timestamp) -> Health {
    let renewed = lease
        .and_then(|l| l.spec.as_ref())
        .and_then(|s| s.renew_time.as_ref())
        .map(|t| t.0);
    let posted = ready(node)
        .and_then(|c| c.last_heartbeat_time.as_ref())
        .map(|t| t.0);
    let Some(last) = renewed.into_iter().chain(posted).max() else {
        return Health::Unmonitored;
    };
    let due = last.checked_add(GRACE_PERIOD).unwrap_or(last);
    if due <= now {
        Health::Silent
    } else {
        // A second after the grace period runs out: a heartbeat exactly at the deadline
        // still counts.
        let left = Duration::try_from(due.duration_since(now)).unwrap_or(Duration::ZERO);
        Health::Alive(left + Duration::from_secs(1))
    }
}

fn ready(node: &Node) -> Option<&NodeCondition> {
    node.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == "Ready")
}

fn ready_status(node: &Node) -> &str {
    ready(node).map_or("Unknown", |c| c.status.as_str())
}

/// Step 3: the kubelet-owned conditions, `Unknown` since `now`.
fn unknown_conditions(node: &Node, now: jiff::Timestamp) -> Vec<NodeCondition> {
    let mut conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    for type_ in KUBELET_CONDITIONS {
        let position = conditions.iter().position(|c| c.type_ == type_);
        let condition = match position {
            Some(i) => &mut conditions[i],
            None => {
                conditions.push(NodeCondition {
                    type_: type_.into(),
                    ..NodeCondition::default()
                });
                let last = conditions.len() - 1;
                &mut conditions[last]
            }
        };
        if condition.status != "Unknown" {
            condition.status = "Unknown".into();
            condition.last_transition_time = Some(Time(now));
        }
        condition.reason = Some("NodeStatusUnknown".into());
        condition.message = Some("Kubelet stopped posting node status.".into());
    }
    conditions
}

/// Step 4: the node's taints with the lifecycle taints its `Ready` status calls for
/// (`None`: unchanged). Other taints are kept in place; a lifecycle taint already there
/// keeps its `timeAdded`.
fn lifecycle_taints(node: &Node, ready: &str, now: jiff::Timestamp) -> Option<Vec<Taint>> {
    let current = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    let wanted_key = match ready {
        "True" => None,
        "False" => Some(NOT_READY),
        _ => Some(UNREACHABLE),
    };
    let is_lifecycle = |t: &Taint| t.key == UNREACHABLE || t.key == NOT_READY;
    let mut taints: Vec<Taint> = current
        .iter()
        .filter(|t| !is_lifecycle(t) || Some(t.key.as_str()) == wanted_key)
        .cloned()
        .collect();
    if let Some(key) = wanted_key {
        for effect in ["NoSchedule", "NoExecute"] {
            if !taints.iter().any(|t| t.key == key && t.effect == effect) {
                taints.push(Taint {
                    key: key.into(),
                    effect: effect.into(),
                    time_added: (effect == "NoExecute").then_some(Time(now)),
                    value: None,
                });
            }
        }
    }
    (taints != current).then_some(taints)
}

async fn reconcile(node: Arc<Node>, cx: Arc<Context>) -> Result<Action, Error> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let now = crate::clock::now();
    let lease = cx.leases.namespaced(node_lease::NAMESPACE).get(&name).ok();
    let nodes: ResourceClient<Node> = ResourceClient::cluster(cx.cluster.client.clone());
    let mut next = None;
    let ready = ready_status(&node);
    match health(&node, lease.as_deref(), now) {
        Health::Unmonitored => return Ok(Action::done()),
        Health::Alive(left) => next = Some(left),
        Health::Silent if ready == "Unknown" => {}
        Health::Silent => {
            tracing::info!(node = %name, "node stopped posting status: Unknown");
            let mut updated = (*node).clone();
            updated
                .status
                .get_or_insert_with(Default::default)
                .conditions = Some(unknown_conditions(&node, now));
            match nodes.update_status(&PostParams::default(), &updated).await {
                // The taints are written on the next pass, which the node's change brings.
                Ok(_) => return Ok(Action::done()),
                Err(e) if e.is_conflict() || e.is_not_found() => return Ok(Action::done()),
                Err(e) => return Err(e),
            }
        }
    }
    if let Some(taints) = lifecycle_taints(&node, ready, now) {
        let mut updated = (*node).clone();
        updated.spec.get_or_insert_with(Default::default).taints = Some(taints);
        match nodes.update(&PostParams::default(), &updated).await {
            Ok(_) => {}
            Err(e) if e.is_conflict() || e.is_not_found() => return Ok(Action::done()),
            Err(e) => return Err(e),
        }
    }
    if ready != "True" {
        mark_pods_not_ready(&cx, &name).await?;
    }
    Ok(next.map_or_else(Action::done, Action::requeue_after))
}

/// Step 5: `Ready=False` on every pod bound to `node` that still says otherwise.
async fn mark_pods_not_ready(cx: &Context, node: &str) -> Result<(), Error> {
    for pod in pods::on_node(&cx.pods, node) {
        let Some(condition) = pods::condition(&pod, "Ready") else {
            continue;
        };
        if condition.status == "False" || pods::is_terminal(&pod) {
            continue;
        }
        let mut updated = (*pod).clone();
        let status = updated.status.get_or_insert_with(Default::default);
        let conditions = status.conditions.get_or_insert_with(Vec::new);
        let reason = condition.reason.clone();
        let message = condition.message.clone();
        pods::set_condition(
            conditions,
            "Ready",
            "False",
            reason.as_deref(),
            message.as_deref(),
        );
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let client: ResourceClient<Pod> =
            ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
        match client.update_status(&PostParams::default(), &updated).await {
            Ok(_) => {}
            Err(e) if e.is_conflict() || e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at(secs: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_800_000_000 + secs).unwrap_or_default()
    }

    fn node(ready: &str, heartbeat: i64, taints: serde_json::Value) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": "node-1"},
            "spec": {"taints": taints},
            "status": {"conditions": [
                {"type": "Ready", "status": ready, "reason": "KubeletReady",
                 "lastHeartbeatTime": crate::clock::rfc3339(at(heartbeat))},
            ]},
        }))
        .unwrap_or_default()
    }

    fn lease(renewed: i64) -> Lease {
        serde_json::from_value(json!({
            "metadata": {"name": "node-1", "namespace": "kube-node-lease"},
            "spec": {"renewTime": at(renewed).strftime("%Y-%m-%dT%H:%M:%S.000000Z").to_string()},
        }))
        .unwrap_or_default()
    }

    /// `tryUpdateNodeHealth`: the grace period runs from the latest heartbeat, Lease or
    /// status.
    #[test]
    fn a_node_is_silent_once_the_grace_period_passes_its_last_heartbeat() {
        let n = node("True", 0, json!([]));
        assert_eq!(
            health(&n, Some(&lease(30)), at(60)),
            Health::Alive(Duration::from_secs(21))
        );
        assert_eq!(health(&n, Some(&lease(30)), at(80)), Health::Silent);
        assert_eq!(health(&n, None, at(50)), Health::Silent);
        let unmonitored: Node =
            serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap_or_default();
        assert_eq!(health(&unmonitored, None, at(0)), Health::Unmonitored);
    }

    #[test]
    fn silent_nodes_get_unknown_conditions_with_the_controllers_words() {
        let conditions = unknown_conditions(&node("True", 0, json!([])), at(60));
        assert_eq!(conditions.len(), 4);
        assert!(conditions.iter().all(|c| c.status == "Unknown"
            && c.reason.as_deref() == Some("NodeStatusUnknown")
            && c.message.as_deref() == Some("Kubelet stopped posting node status.")));
        let ready = conditions.iter().find(|c| c.type_ == "Ready");
        assert_eq!(
            ready.and_then(|c| c.last_transition_time.clone()),
            Some(Time(at(60)))
        );
    }

    /// `doNoScheduleTaintingPass` / `processTaintBaseEviction`: the taints follow Ready.
    #[test]
    fn lifecycle_taints_follow_the_ready_condition() {
        let other = json!([{"key": "gpu", "effect": "NoSchedule"}]);
        let taints = lifecycle_taints(&node("Unknown", 0, other.clone()), "Unknown", at(60))
            .unwrap_or_default();
        let keys: Vec<_> = taints
            .iter()
            .map(|t| (t.key.as_str(), t.effect.as_str()))
            .collect();
        assert_eq!(
            keys,
            [
                ("gpu", "NoSchedule"),
                (UNREACHABLE, "NoSchedule"),
                (UNREACHABLE, "NoExecute")
            ]
        );
        assert_eq!(taints[2].time_added, Some(Time(at(60))));
        let tainted = node(
            "Unknown",
            0,
            serde_json::to_value(&taints).unwrap_or_default(),
        );
        assert_eq!(lifecycle_taints(&tainted, "Unknown", at(90)), None);
        let back = lifecycle_taints(&tainted, "True", at(90)).unwrap_or_default();
        assert_eq!(back.len(), 1);
        let not_ready = lifecycle_taints(&tainted, "False", at(90)).unwrap_or_default();
        assert!(
            not_ready
                .iter()
                .any(|t| t.key == NOT_READY && t.effect == "NoExecute")
        );
        assert!(!not_ready.iter().any(|t| t.key == UNREACHABLE));
        assert_eq!(
            lifecycle_taints(&node("True", 0, other), "True", at(1)),
            None
        );
    }
}
