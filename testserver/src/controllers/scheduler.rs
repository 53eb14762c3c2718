//! kube-scheduler, reduced to what a test can observe: every pod that names no node (and
//! the default scheduler) is bound to a node that fits it, through the `pods/binding`
//! subresource as kube-scheduler binds.
//!
//! The sync loop, one pod at a time:
//!
//! 1. A pod with `spec.nodeName`, a deletion timestamp, or another `schedulerName` is not
//!    ours: done.
//! 2. Filter the nodes (kube-scheduler's filter plugins, `pkg/scheduler/framework/plugins`):
//!    `NodeUnschedulable` (`spec.unschedulable`, unless the pod tolerates the
//!    `node.kubernetes.io/unschedulable` taint), node readiness, `TaintToleration`
//!    (`NoSchedule` and `NoExecute` taints must be tolerated), `NodeAffinity`
//!    (`nodeSelector` and required node affinity terms: `matchExpressions` on the node's
//!    labels, `matchFields` on `metadata.name`, as DaemonSet pods are pinned), and
//!    `NodeResourcesFit` (CPU,
//!    memory and pod count against `status.allocatable`, counting the requests of the
//!    pods already bound there).
//! 3. No node fits: the pod gets `PodScheduled=False`, reason `Unschedulable`, with
//!    kube-scheduler's message (`0/3 nodes are available: 3 node(s) didn't match Pod's
//!    node affinity/selector.`), and waits: any Node change requeues every pending pod
//!    (kube-scheduler's queueing hints, simplified to "a node changed").
//!    A pod with PersistentVolumeClaims goes through kube-scheduler's VolumeBinding plugin
//!    too (`volume/binding.rs`): a missing claim or an unbound claim of an `Immediate`
//!    class fits no node; a bound claim's volume must allow the node; an unbound
//!    `WaitForFirstConsumer` claim needs a volume or a provisioner there.
//! 4. Otherwise score the fitting nodes (`NodeResourcesFit`'s `LeastAllocated`: the node
//!    with the smallest share of its CPU and memory requested, then the fewest pods, then
//!    the name, so placement is deterministic) and bind the pod to the best one. Unbound
//!    `WaitForFirstConsumer` claims are first bound or annotated with the chosen node
//!    (`volume.kubernetes.io/selected-node`); the pod, reserved on that node meanwhile, is
//!    bound once the PV controller has bound them (their changes bring the pod back, and a
//!    poll every second).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::{
    core::v1::{
        Node, NodeSelector, NodeSelectorRequirement, PersistentVolume, PersistentVolumeClaim, Pod,
        Taint, Toleration,
    },
    storage::v1::StorageClass,
};
use kubegen::{
    cache::Lister,
    client::{Error, ResourceClient, params::PostParams},
    controller::{Action, Controller, ControllerError, Request},
};
use parking_lot::Mutex;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{
    config::Cluster,
    events::{EventType, Recorder},
    pods,
    volume::binding::{self as volume_binding, PodVolumes},
};

/// The scheduler name pods get by default.
pub(crate) const DEFAULT_SCHEDULER: &str = "default-scheduler";

struct Context {
    cluster: Arc<Cluster>,
    recorder: Recorder,
    nodes: Lister<Node>,
    pods: Lister<Pod>,
    /// Pods bound whose binding the pod cache may not show yet (kube-scheduler's
    /// "assumed" pods): counted on their node, so pods bound back to back spread.
    assumed: Mutex<BTreeMap<String, String>>,
    /// What the VolumeBinding plugin reads.
    volumes: VolumeListers,
}

/// The caches the VolumeBinding plugin reads.
struct VolumeListers {
    claims: Lister<PersistentVolumeClaim>,
    volumes: Lister<PersistentVolume>,
    classes: Lister<StorageClass>,
}

/// Runs the scheduler until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let nodes = cluster.factory.lister_for::<Node>();
    let pods = cluster.factory.lister_for::<Pod>();
    let pending = pods.clone();
    let controller = Controller::<Pod>::builder(&cluster.factory)
        .named("scheduler")
        .with_event_filter(kubegen::controller::predicate::from_fn(needs_node))
        .watches::<Node>(move |_| {
            // In name order, so a replay schedules in the same order.
            let mut requests: Vec<Request> = pending
                .list(&kube_core::Selector::default())
                .iter()
                .filter(|p| needs_node(p))
                .filter_map(|p| Request::for_object(p.as_ref()))
                .collect();
            requests.sort_by_key(Request::cache_key);
            requests
        })
        // A claim's or a volume's change (bound at last, say) brings back the pods using
        // the claim.
        .watches::<PersistentVolumeClaim>(volume_binding::pods_using(pods.clone()))
        .watches::<PersistentVolume>(volume_binding::pods_using_volume(pods.clone()))
        .build();
    let volumes = VolumeListers {
        claims: cluster.factory.lister_for::<PersistentVolumeClaim>(),
        volumes: cluster.factory.lister_for::<PersistentVolume>(),
        classes: cluster.factory.lister_for::<StorageClass>(),
    };
    let cx = Arc::new(Context {
        recorder: cluster.recorder("default-scheduler"),
        cluster,
        nodes,
        pods,
        assumed: Mutex::new(BTreeMap::new()),
        volumes,
    });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

fn needs_node(pod: &Pod) -> bool {
    let Some(spec) = &pod.spec else {
        return false;
    };
    spec.node_name.as_deref().unwrap_or_default().is_empty()
        && pod.metadata.deletion_timestamp.is_none()
        && spec.scheduler_name.as_deref().unwrap_or(DEFAULT_SCHEDULER) == DEFAULT_SCHEDULER
        && !pods::is_terminal(pod)
}

async fn reconcile(pod: Arc<Pod>, cx: Arc<Context>) -> Result<Action, Error> {
    if !needs_node(&pod) {
        return Ok(Action::done());
    }
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let nodes = cx.nodes.list(&kube_core::Selector::default());
    let bound = pods_by_node(&cx, &nodes, &pod);
    let volumes = match pod_volumes(&cx, &pod) {
        Ok(volumes) => volumes,
        Err(reason) => {
            // A PreFilter rejection (`FitError` with its `PreFilterMsg`).
            let message = format!("0/{} nodes are available: {reason}.", nodes.len());
            return unschedulable(&cx, &pod, &message).await;
        }
    };
    match choose_with_volumes(&pod, &nodes, &bound, &volumes) {
        Ok(node) => {
            if !prebind(&cx, &volumes, &nodes, &node).await? {
                // Reserved on the node meanwhile (kube-scheduler's Reserve), so the pods
                // scheduled next count it; the claims' binding brings the pod back, or the
                // next poll.
                if let Some(key) = Request::for_object(pod.as_ref()).map(|r| r.cache_key()) {
                    cx.assumed.lock().insert(key, node);
                }
                // kube-scheduler's PreBind polls the claims every second.
                return Ok(Action::requeue_after(Duration::from_secs(1)));
            }
            let binding = json!({
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            });
            let request = kube_core::Request::new(format!("/api/v1/namespaces/{namespace}/pods"))
                .create_subresource(
                "binding",
                &name,
                &PostParams::default(),
                serde_json::to_vec(&binding).map_err(Error::Encode)?,
            )?;
            match cx
                .cluster
                .client
                .request::<serde_json::Value>(request)
                .await
            {
                Ok(_) => {
                    let message = format!("Successfully assigned {namespace}/{name} to {node}");
                    let key = Request::for_object(pod.as_ref()).map(|r| r.cache_key());
                    if let Some(key) = key {
                        cx.assumed.lock().insert(key, node);
                    }
                    cx.recorder
                        .record(pod.as_ref(), EventType::Normal, "Scheduled", message)
                        .await;
                    Ok(Action::done())
                }
                // Bound meanwhile, or gone: the next event tells.
                Err(e) if e.is_conflict() || e.is_not_found() => Ok(Action::done()),
                Err(e) => Err(e),
            }
        }
        Err(message) => unschedulable(&cx, &pod, &message).await,
    }
}

/// Step 3: the pod waits with `PodScheduled=False`, reason `Unschedulable`.
async fn unschedulable(cx: &Context, pod: &Pod, message: &str) -> Result<Action, Error> {
    let mut updated = pod.clone();
    let status = updated.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    if pods::set_condition(
        conditions,
        "PodScheduled",
        "False",
        Some("Unschedulable"),
        Some(message),
    ) {
        let pods: ResourceClient<Pod> = ResourceClient::namespaced(
            cx.cluster.client.clone(),
            pod.metadata.namespace.as_deref().unwrap_or_default(),
        );
        match pods.update_status(&PostParams::default(), &updated).await {
            Ok(_) => {}
            Err(e) if e.is_conflict() || e.is_not_found() => {}
            Err(e) => return Err(e),
        }
        cx.recorder
            .record(pod, EventType::Warning, "FailedScheduling", message)
            .await;
    }
    Ok(Action::done())
}

/// VolumeBinding's PreFilter over the caches (`volume/binding.rs`).
fn pod_volumes(cx: &Context, pod: &Pod) -> Result<PodVolumes, String> {
    if volume_binding::claim_names(pod).is_empty() {
        return Ok(PodVolumes::default());
    }
    let all = kube_core::Selector::default();
    volume_binding::pod_volumes(
        pod,
        &cx.volumes.claims.list(&all),
        &cx.volumes.volumes.list(&all),
        &cx.volumes.classes.list(&all),
    )
}

/// VolumeBinding's PreBind on the chosen node: whether the pod's claims are all bound.
async fn prebind(
    cx: &Context,
    volumes: &PodVolumes,
    nodes: &[Arc<Node>],
    node: &str,
) -> Result<bool, Error> {
    if volumes.all_bound() {
        return Ok(true);
    }
    let Some(node) = nodes
        .iter()
        .find(|n| n.metadata.name.as_deref() == Some(node))
    else {
        return Ok(false);
    };
    volume_binding::prebind(&cx.cluster.client, volumes, node).await
}

/// The pods counted on each node: the cached pods bound there (the pod cache's
/// `spec.nodeName` index, `pods::on_node`) that have not finished, and the pods assumed
/// there whose binding the cache does not show yet; `pod` itself is left out (a pod
/// waiting for its volumes is assumed on its node). Assumptions the cache confirms (or
/// whose pod is gone) are forgotten.
fn pods_by_node(cx: &Context, nodes: &[Arc<Node>], pod: &Pod) -> PodsByNode {
    let other = |p: &Pod| p.metadata.uid != pod.metadata.uid && !pods::is_terminal(p);
    let mut by_node: PodsByNode = nodes
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .map(|name| {
            let on = pods::on_node(&cx.pods, &name)
                .into_iter()
                .filter(|p| other(p))
                .collect();
            (name, on)
        })
        .collect();
    cx.assumed.lock().retain(|key, node| {
        let Some(cached) = cx.pods.indexer().get_by_key(key) else {
            return false;
        };
        if cached
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty())
        {
            return false;
        }
        if other(&cached) {
            let mut assumed = (*cached).clone();
            if let Some(spec) = assumed.spec.as_mut() {
                spec.node_name = Some(node.clone());
            }
            by_node
                .entry(node.clone())
                .or_default()
                .push(Arc::new(assumed));
        }
        true
    });
    by_node
}

/// Why a node does not fit, as kube-scheduler's filter plugins word it in the
/// `FailedScheduling` summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Misfit {
    NotReady,
    Unschedulable,
    Taint,
    Selector,
    Cpu,
    Memory,
    Pods,
    /// A VolumeBinding filter's reason (`volume/binding.rs`).
    Volume(&'static str),
}

impl Misfit {
    fn phrase(self) -> &'static str {
        match self {
            Misfit::NotReady => "node(s) were not ready",
            Misfit::Unschedulable => "node(s) were unschedulable",
            Misfit::Taint => "node(s) had untolerated taint(s)",
            Misfit::Selector => "node(s) didn't match Pod's node affinity/selector",
            Misfit::Cpu => "Insufficient cpu",
            Misfit::Memory => "Insufficient memory",
            Misfit::Pods => "Too many pods",
            Misfit::Volume(reason) => reason,
        }
    }
}

/// The node `pod` goes to, or kube-scheduler's message saying why none fits.
#[cfg(test)]
fn choose(pod: &Pod, nodes: &[Arc<Node>], all_pods: &[Arc<Pod>]) -> Result<String, String> {
    let mut by_node = PodsByNode::new();
    for p in all_pods.iter().filter(|p| !pods::is_terminal(p)) {
        if let Some(node) = p.spec.as_ref().and_then(|s| s.node_name.clone()) {
            by_node.entry(node).or_default().push(p.clone());
        }
    }
    choose_with_volumes(pod, nodes, &by_node, &PodVolumes::default())
}

/// The pods counted against each node's capacity, by node name.
type PodsByNode = BTreeMap<String, Vec<Arc<Pod>>>;

/// The node `pod` goes to, with the VolumeBinding filter for the pod's claims, or
/// kube-scheduler's message saying why none fits.
fn choose_with_volumes(
    pod: &Pod,
    nodes: &[Arc<Node>],
    pods_on: &PodsByNode,
    volumes: &PodVolumes,
) -> Result<String, String> {
    let (cpu, memory) = pods::requests(pod);
    let mut misfits: BTreeMap<Misfit, usize> = BTreeMap::new();
    let mut best: Option<((i64, usize), String)> = None;
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        let on_node: Vec<&Arc<Pod>> = pods_on.get(&name).into_iter().flatten().collect();
        let fit = fits(pod, node, &on_node, cpu, memory)
            .and_then(|share| volumes.filter(node).map(|()| share).map_err(Misfit::Volume));
        match fit {
            Err(misfit) => *misfits.entry(misfit).or_default() += 1,
            Ok(share) => {
                let score = (share, on_node.len());
                if best.as_ref().is_none_or(|(b, n)| (score, &name) < (*b, n)) {
                    best = Some((score, name));
                }
            }
        }
    }
    if let Some((_, node)) = best {
        return Ok(node);
    }
    let reasons: Vec<String> = misfits
        .iter()
        .map(|(m, n)| format!("{n} {}", m.phrase()))
        .collect();
    Err(format!(
        "0/{} nodes are available: {}.",
        nodes.len(),
        if reasons.is_empty() {
            "no nodes available to schedule pods".to_string()
        } else {
            reasons.join(", ")
        }
    ))
}

/// Whether `pod` fits `node`, and if so the share (per mille) of the node's CPU and
/// memory requested once it runs there (the lower, the better).
fn fits(
    pod: &Pod,
    node: &Node,
    on_node: &[&Arc<Pod>],
    cpu: i64,
    memory: i64,
) -> Result<i64, Misfit> {
    let status = node.status.as_ref();
    let ready = status
        .and_then(|s| s.conditions.as_deref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True");
    let spec = node.spec.as_ref();
    if spec.and_then(|s| s.unschedulable) == Some(true) && !tolerates_unschedulable(pod) {
        return Err(Misfit::Unschedulable);
    }
    let pod_spec = pod.spec.as_ref();
    let tolerations = pod_spec
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default();
    let taints = spec.and_then(|s| s.taints.as_deref()).unwrap_or_default();
    if taints
        .iter()
        .filter(|t| matches!(t.effect.as_str(), "NoSchedule" | "NoExecute"))
        .any(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
    {
        return Err(Misfit::Taint);
    }
    if !ready {
        return Err(Misfit::NotReady);
    }
    if !node_affinity_matches(pod, node) {
        return Err(Misfit::Selector);
    }
    let allocatable = status.and_then(|s| s.allocatable.as_ref());
    let quantity = |name: &str, parse: fn(&str) -> Option<i64>| {
        allocatable
            .and_then(|a| a.get(name))
            .and_then(|q| parse(&q.0))
            .unwrap_or(0)
    };
    let (cpu_cap, memory_cap) = (
        quantity("cpu", pods::millicores),
        quantity("memory", pods::bytes),
    );
    let pod_cap = quantity("pods", |q| q.parse().ok());
    let (used_cpu, used_memory) = on_node
        .iter()
        .map(|p| pods::requests(p))
        .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
    if used_cpu + cpu > cpu_cap {
        return Err(Misfit::Cpu);
    }
    if used_memory + memory > memory_cap {
        return Err(Misfit::Memory);
    }
    if i64::try_from(on_node.len()).unwrap_or(i64::MAX) >= pod_cap {
        return Err(Misfit::Pods);
    }
    let share = |used: i64, cap: i64| if cap > 0 { used * 1000 / cap } else { 0 };
    Ok((share(used_cpu + cpu, cpu_cap) + share(used_memory + memory, memory_cap)) / 2)
}

/// `v1helper.TolerationsTolerateTaint` for one toleration.
pub(crate) fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref()
        && !effect.is_empty()
        && effect != taint.effect
    {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => key.is_empty() || key == taint.key,
        _ => key == taint.key && toleration.value.as_deref() == taint.value.as_deref(),
    }
}

/// Whether `node` satisfies `selector` (one of its terms: every `matchExpressions`
/// requirement on the node's labels and every `matchFields` requirement on
/// `metadata.name`), as a PersistentVolume's node affinity is checked.
pub(crate) fn node_selector_matches(selector: &NodeSelector, node: &Node) -> bool {
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let fields = BTreeMap::from([(
        "metadata.name".to_string(),
        node.metadata.name.clone().unwrap_or_default(),
    )]);
    selector.node_selector_terms.iter().any(|term| {
        term.match_expressions
            .iter()
            .flatten()
            .all(|r| requirement_matches(r, &labels))
            && term
                .match_fields
                .iter()
                .flatten()
                .all(|r| requirement_matches(r, &fields))
    })
}

/// One `nodeSelectorTerms` requirement against a node's labels.
fn requirement_matches(r: &NodeSelectorRequirement, labels: &BTreeMap<String, String>) -> bool {
    let value = labels.get(&r.key);
    let values = r.values.as_deref().unwrap_or_default();
    let number = |v: &str| v.parse::<i64>().ok();
    match r.operator.as_str() {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => value.is_none_or(|v| !values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => {
            matches!((value.and_then(|v| number(v)), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a > b)
        }
        "Lt" => {
            matches!((value.and_then(|v| number(v)), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a < b)
        }
        _ => false,
    }
}

/// The taint `node.kubernetes.io/unschedulable` a cordoned node stands for.
const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// `NodeUnschedulable`'s exception: a pod that tolerates the `unschedulable` NoSchedule
/// taint (as every DaemonSet pod does) may go to a cordoned node.
fn tolerates_unschedulable(pod: &Pod) -> bool {
    let taint = Taint {
        key: UNSCHEDULABLE_TAINT.into(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    };
    pod.spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default()
        .iter()
        .any(|t| tolerates(t, &taint))
}

/// `v1helper.FindMatchingUntoleratedTaint`: the first of `taints` with one of `effects`
/// that no toleration tolerates.
pub(crate) fn untolerated_taint<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    effects: &[&str],
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| effects.contains(&t.effect.as_str()))
        .find(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
}

/// `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`: the pod's `nodeSelector`
/// and, if set, its required node affinity (any one term, each term's `matchExpressions`
/// on the node's labels and `matchFields` on `metadata.name` all holding; a term with
/// neither matches nothing).
pub(crate) fn node_affinity_matches(pod: &Pod, node: &Node) -> bool {
    let empty = BTreeMap::new();
    let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
    let spec = pod.spec.as_ref();
    if let Some(selector) = spec.and_then(|s| s.node_selector.as_ref())
        && selector.iter().any(|(k, v)| labels.get(k) != Some(v))
    {
        return false;
    }
    let required = spec
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    let Some(required) = required else {
        return true;
    };
    let name = node.metadata.name.as_deref().unwrap_or_default();
    required.node_selector_terms.iter().any(|term| {
        let expressions = term.match_expressions.as_deref().unwrap_or_default();
        let fields = term.match_fields.as_deref().unwrap_or_default();
        (!expressions.is_empty() || !fields.is_empty())
            && expressions.iter().all(|r| requirement_matches(r, labels))
            && fields.iter().all(|r| field_matches(r, name))
    })
}

/// One `matchFields` requirement: only `metadata.name` with `In` / `NotIn` is valid
/// (`nodeaffinity`'s field selector); anything else matches nothing.
fn field_matches(r: &NodeSelectorRequirement, node_name: &str) -> bool {
    let values = r.values.as_deref().unwrap_or_default();
    let listed = values.iter().any(|v| v == node_name);
    match (r.key.as_str(), r.operator.as_str()) {
        ("metadata.name", "In") => listed,
        ("metadata.name", "NotIn") => !listed,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, extra: serde_json::Value) -> Arc<Node> {
        let mut v = json!({
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "2"},
                       "conditions": [{"type": "Ready", "status": "True"}]},
        });
        json_patch::merge(&mut v, &extra);
        Arc::new(serde_json::from_value(v).unwrap_or_default())
    }

    fn pod(spec: serde_json::Value) -> Pod {
        let mut v = json!({"metadata": {"name": "p", "namespace": "default"},
                           "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        json_patch::merge(&mut v, &json!({ "spec": spec }));
        serde_json::from_value(v).unwrap_or_default()
    }

    fn on(node: &str, cpu: &str) -> Arc<Pod> {
        Arc::new(pod(json!({"nodeName": node, "containers": [
            {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]})))
    }

    #[test]
    fn the_least_allocated_node_wins_and_ties_go_by_name() {
        let nodes = [node("b", json!({})), node("a", json!({}))];
        assert_eq!(choose(&pod(json!({})), &nodes, &[]), Ok("a".into()));
        let busy = [on("a", "500m")];
        assert_eq!(choose(&pod(json!({})), &nodes, &busy), Ok("b".into()));
    }

    #[test]
    fn unschedulable_pods_get_kube_schedulers_summary() {
        let nodes = [
            node(
                "a",
                json!({"spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}),
            ),
            node("b", json!({})),
            node(
                "c",
                json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
            ),
        ];
        let wants_ssd = pod(json!({"nodeSelector": {"disk": "ssd"}}));
        assert_eq!(
            choose(&wants_ssd, &nodes, &[]),
            Err("0/3 nodes are available: 1 node(s) were not ready, 1 node(s) had untolerated taint(s), 1 node(s) didn't match Pod's node affinity/selector.".into())
        );
        let tolerant = pod(json!({"nodeSelector": {"kubernetes.io/hostname": "a"},
            "tolerations": [{"key": "gpu", "operator": "Exists"}]}));
        assert_eq!(choose(&tolerant, &nodes, &[]), Ok("a".into()));
        let greedy = pod(json!({"containers": [{"name": "c", "image": "nginx",
            "resources": {"requests": {"cpu": "2"}}}]}));
        assert!(
            choose(&greedy, &nodes[1..2], &[])
                .is_err_and(|m| m == "0/1 nodes are available: 1 Insufficient cpu.")
        );
        let full = [on("b", "0"), on("b", "0")];
        assert!(
            choose(&pod(json!({})), &nodes[1..2], &full)
                .is_err_and(|m| m == "0/1 nodes are available: 1 Too many pods.")
        );
    }

    #[test]
    fn required_node_affinity_is_honoured() {
        let nodes = [
            node("a", json!({"metadata": {"labels": {"zone": "x"}}})),
            node("b", json!({"metadata": {"labels": {"zone": "y"}}})),
        ];
        let p = pod(
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["y"]}]}]}}}}),
        );
        assert_eq!(choose(&p, &nodes, &[]), Ok("b".into()));
    }

    /// `ReplaceDaemonSetPodNodeNameNodeAffinity` pins a DaemonSet pod with `matchFields`;
    /// `NodeUnschedulable` lets a pod that tolerates `unschedulable` onto a cordoned node.
    #[test]
    fn match_fields_pin_a_pod_to_a_node_name_even_when_cordoned() {
        let nodes = [
            node("a", json!({})),
            node("b", json!({"spec": {"unschedulable": true}})),
        ];
        let pinned = |tolerations: serde_json::Value| {
            pod(json!({"tolerations": tolerations,
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}}))
        };
        assert!(choose(&pinned(json!([])), &nodes, &[]).is_err());
        let tolerant = pinned(
            json!([{"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"}]),
        );
        assert_eq!(choose(&tolerant, &nodes, &[]), Ok("b".into()));
        let empty_term = pod(
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{}]}}}}),
        );
        assert!(
            choose(&empty_term, &nodes[..1], &[]).is_err(),
            "an empty term matches nothing"
        );
    }
}
