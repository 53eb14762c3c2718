//! What the workload controllers ask of a pod and of a selector, spelled once
//! (kube-controller-manager's `pkg/api/v1/pod/util.go` and `pkg/controller/controller_utils.go`).

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::{
    api::core::v1::{Pod, PodCondition},
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time},
};
use kube_core::{Selector, SelectorExt};
use kubegen::{
    cache::{IndexFunc, Indexers, Lister},
    client::{
        Error,
        params::{Patch, PatchParams},
    },
    controller::CachedClient,
    informers::SharedInformerFactory,
};
use serde_json::json;

/// The pod cache's index of pods by the node they are bound to (kube-scheduler's and the
/// kubelet's view: "the pods of this node").
const BY_NODE: &str = "spec.nodeName";

/// The pod cache's index of pods by their controller's uid (how a workload controller
/// finds its pods without reading every pod of the namespace).
const BY_CONTROLLER: &str = "controller-uid";

/// Adds the cluster's pod indexes ([`on_node`], [`controlled_by`]) to the shared pod
/// informer, before it starts.
pub(crate) fn add_indexes(factory: &SharedInformerFactory) {
    let by_node: IndexFunc<Pod> = Arc::new(|pod: &Pod| {
        let node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
        Ok(node.filter(|n| !n.is_empty()).into_iter().collect())
    });
    let by_controller: IndexFunc<Pod> = Arc::new(|pod: &Pod| {
        Ok(controller_of(&pod.metadata)
            .map(|r| r.uid.clone())
            .into_iter()
            .collect())
    });
    let indexers = Indexers::from([
        (BY_NODE.to_owned(), by_node),
        (BY_CONTROLLER.to_owned(), by_controller),
    ]);
    if let Err(err) = factory.informer_for::<Pod>().add_indexers(indexers) {
        tracing::error!(%err, "adding the pod cache's indexes");
    }
}

/// The cached pods bound to `node`, in key order.
pub(crate) fn on_node(pods: &Lister<Pod>, node: &str) -> Vec<Arc<Pod>> {
    by_index(pods, BY_NODE, node, |p| {
        p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node)
    })
}

/// The cached pods whose controller is the object with `uid`, in key order.
pub(crate) fn controlled_by(pods: &Lister<Pod>, uid: &str) -> Vec<Arc<Pod>> {
    by_index(pods, BY_CONTROLLER, uid, |p| {
        is_controlled_by(&p.metadata, uid)
    })
}

/// The pods of `index` at `value`, sorted by key; when the index is missing (a cache
/// built without [`add_indexes`]), every pod `keep` keeps.
fn by_index(
    pods: &Lister<Pod>,
    index: &str,
    value: &str,
    keep: impl Fn(&Pod) -> bool,
) -> Vec<Arc<Pod>> {
    let mut found = match pods.indexer().by_index(index, value) {
        Ok(found) => found,
        Err(_) => pods
            .list(&Selector::default())
            .into_iter()
            .filter(|p| keep(p))
            .collect(),
    };
    found.sort_by(|a, b| {
        (a.metadata.namespace.as_deref(), a.metadata.name.as_deref())
            .cmp(&(b.metadata.namespace.as_deref(), b.metadata.name.as_deref()))
    });
    found
}

/// The controller owner reference of an object (`metav1.GetControllerOf`).
pub(crate) fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_deref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// Whether `meta` is controlled by the object with `uid`.
pub(crate) fn is_controlled_by(meta: &ObjectMeta, uid: &str) -> bool {
    controller_of(meta).is_some_and(|r| r.uid == uid)
}

/// Whether `selector` selects `labels`. An empty selector selects everything; a selector
/// that does not parse (an unknown operator) selects nothing, as
/// `metav1.LabelSelectorAsSelector` failing makes a controller skip its pods.
pub(crate) fn selects(selector: &LabelSelector, labels: Option<&BTreeMap<String, String>>) -> bool {
    let Ok(selector) = Selector::try_from(selector.clone()) else {
        return false;
    };
    let empty = BTreeMap::new();
    selector.matches(labels.unwrap_or(&empty))
}

/// Whether `selector` has no requirement at all: it selects everything, so a controller
/// adopts nothing with it (kube-controller-manager refuses to).
pub(crate) fn selector_is_empty(selector: &LabelSelector) -> bool {
    selector
        .match_labels
        .as_ref()
        .is_none_or(BTreeMap::is_empty)
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(Vec::is_empty)
}

/// `PodControllerRefManager.ClaimPods`: of `candidates` (the pods of the owner's
/// namespace), the pods `owner` controls and its `selector` matches, plus the orphans the
/// selector matches and `can_adopt` accepts, adopted (`owner` patched in as their
/// controller, with the pod's uid as a precondition); pods it controls that the selector
/// no longer matches are released (the reference patched out). An empty selector adopts
/// nothing.
pub(crate) async fn claim(
    client: &CachedClient<Pod>,
    candidates: Vec<Arc<Pod>>,
    selector: &LabelSelector,
    owner: &OwnerReference,
    can_adopt: impl Fn(&Pod) -> bool,
) -> Result<Vec<Arc<Pod>>, Error> {
    let mut owned = Vec::new();
    for pod in candidates {
        let matches = selects(selector, pod.metadata.labels.as_ref());
        match controller_of(&pod.metadata) {
            Some(r) if r.uid == owner.uid => {
                if matches {
                    owned.push(pod);
                } else {
                    let patch = json!({"metadata": {
                        "ownerReferences": [{"$patch": "delete", "uid": owner.uid}],
                        "uid": pod.metadata.uid,
                    }});
                    patch_pod(client, &pod, patch).await?;
                }
            }
            None if matches && can_adopt(&pod) && !selector_is_empty(selector) => {
                let patch = json!({"metadata": {
                    "ownerReferences": [owner],
                    "uid": pod.metadata.uid,
                }});
                if patch_pod(client, &pod, patch).await? {
                    owned.push(pod);
                }
            }
            _ => {}
        }
    }
    Ok(owned)
}

/// A strategic merge patch of `pod`; false when the pod is gone or changed meanwhile.
async fn patch_pod(
    client: &CachedClient<Pod>,
    pod: &Pod,
    patch: serde_json::Value,
) -> Result<bool, Error> {
    match client
        .patch(
            pod.metadata.namespace.as_deref(),
            pod.metadata.name.as_deref().unwrap_or_default(),
            &PatchParams::default(),
            &Patch::Strategic(patch),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if e.is_not_found() || e.is_conflict() || e.is_invalid() => Ok(false),
        Err(e) => Err(e),
    }
}

/// The pod's node: `spec.nodeName`, or for a pod not yet bound the node its required
/// affinity pins it to with `matchFields` `metadata.name In [node]`
/// (`daemon/util.GetTargetNodeName`).
pub(crate) fn target_node(pod: &Pod) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    if let Some(node) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(node.to_string());
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    terms
        .iter()
        .flat_map(|t| t.match_fields.iter().flatten())
        .find(|r| r.key == "metadata.name" && r.operator == "In")
        .and_then(|r| r.values.as_deref()?.first().cloned())
}

/// Whether the pod has finished (`Succeeded` or `Failed`).
pub(crate) fn is_terminal(pod: &Pod) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// `controller.IsPodActive`: not finished and not being deleted.
pub(crate) fn is_active(pod: &Pod) -> bool {
    !is_terminal(pod) && pod.metadata.deletion_timestamp.is_none()
}

/// The pod's phase (`Pending` when it has no status yet).
pub(crate) fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending")
}

/// The pod's condition of `type_`.
pub(crate) fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == type_)
}

/// `podutil.IsPodReady`.
pub(crate) fn is_ready(pod: &Pod) -> bool {
    condition(pod, "Ready").is_some_and(|c| c.status == "True")
}

/// `podutil.IsPodAvailable`: ready for at least `min_ready_seconds` at `now`.
pub(crate) fn is_available(pod: &Pod, min_ready_seconds: i32, now: jiff::Timestamp) -> bool {
    let Some(ready) = condition(pod, "Ready").filter(|c| c.status == "True") else {
        return false;
    };
    if min_ready_seconds <= 0 {
        return true;
    }
    ready.last_transition_time.as_ref().is_some_and(|Time(t)| {
        t.checked_add(jiff::SignedDuration::from_secs(i64::from(
            min_ready_seconds,
        )))
        .is_ok_and(|available_at| available_at <= now)
    })
}

/// When a ready pod becomes available with `min_ready_seconds`, if it has not yet at
/// `now` (what a controller requeues for).
pub(crate) fn available_in(
    pod: &Pod,
    min_ready_seconds: i32,
    now: jiff::Timestamp,
) -> Option<std::time::Duration> {
    let ready = condition(pod, "Ready").filter(|c| c.status == "True")?;
    let Time(since) = ready.last_transition_time.as_ref()?;
    let at = since
        .checked_add(jiff::SignedDuration::from_secs(i64::from(
            min_ready_seconds,
        )))
        .ok()?;
    (at > now).then(|| std::time::Duration::try_from(at.duration_since(now)).ok())?
}

/// Sets the pod condition of `type_` in `conditions` (`podutil.UpdatePodCondition`): the
/// transition time moves only when the status changes. Returns whether anything changed.
pub(crate) fn set_condition(
    conditions: &mut Vec<PodCondition>,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
) -> bool {
    let reason = reason.map(str::to_string);
    let message = message.map(str::to_string);
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.status == status && c.reason == reason && c.message == message => false,
        Some(c) => {
            if c.status != status {
                c.last_transition_time = Some(Time(crate::clock::now()));
            }
            c.status = status.to_string();
            c.reason = reason;
            c.message = message;
            true
        }
        None => {
            conditions.push(PodCondition {
                type_: type_.to_string(),
                status: status.to_string(),
                reason,
                message,
                last_transition_time: Some(Time(crate::clock::now())),
                ..PodCondition::default()
            });
            true
        }
    }
}

/// A pod's resource requests as the scheduler adds them up
/// (`schedutil.GetNonzeroRequests` without the non-zero defaults): CPU in millicores,
/// memory in bytes, summed over the containers (init containers count by their maximum).
pub(crate) fn requests(pod: &Pod) -> (i64, i64) {
    let Some(spec) = &pod.spec else {
        return (0, 0);
    };
    let of = |c: &k8s_openapi::api::core::v1::Container| {
        let requests = c.resources.as_ref().and_then(|r| r.requests.as_ref());
        let get = |name: &str, parse: fn(&str) -> Option<i64>| {
            requests
                .and_then(|r| r.get(name))
                .and_then(|q| parse(&q.0))
                .unwrap_or(0)
        };
        (get("cpu", millicores), get("memory", bytes))
    };
    let (mut cpu, mut memory) = spec
        .containers
        .iter()
        .map(of)
        .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
    for init in spec.init_containers.iter().flatten() {
        let (c, m) = of(init);
        cpu = cpu.max(c);
        memory = memory.max(m);
    }
    (cpu, memory)
}

/// A CPU quantity (`500m`, `2`, `0.5`) in millicores; `None` when it does not parse.
pub(crate) fn millicores(q: &str) -> Option<i64> {
    let q = q.trim();
    if let Some(m) = q.strip_suffix('m') {
        return m.parse().ok();
    }
    let cores: f64 = q.parse().ok()?;
    let milli = (cores * 1000.0).ceil();
    (milli.is_finite() && (0.0..9.0e15).contains(&milli)).then_some(milli as i64)
}

/// A memory quantity (`128Mi`, `1G`, `1000`, `1e3`) in bytes; `None` when it does not
/// parse.
pub(crate) fn bytes(q: &str) -> Option<i64> {
    const SUFFIXES: [(&str, f64); 13] = [
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
        ("m", 1e-3),
    ];
    let q = q.trim();
    let (number, factor) = SUFFIXES
        .iter()
        .find_map(|(s, f)| q.strip_suffix(s).map(|n| (n, *f)))
        .unwrap_or((q, 1.0));
    let value = number.parse::<f64>().ok()? * factor;
    (value.is_finite() && (0.0..9.0e18).contains(&value)).then_some(value.ceil() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_as_the_scheduler_counts_them() {
        assert_eq!(millicores("500m"), Some(500));
        assert_eq!(millicores("2"), Some(2000));
        assert_eq!(millicores("0.25"), Some(250));
        assert_eq!(millicores("lots"), None);
        assert_eq!(bytes("128Mi"), Some(134_217_728));
        assert_eq!(bytes("1G"), Some(1_000_000_000));
        assert_eq!(bytes("1e3"), Some(1000));
        assert_eq!(bytes("-1Gi"), None);
    }

    #[test]
    fn selectors_match_labels_and_a_broken_one_matches_nothing() {
        let selector: LabelSelector =
            serde_json::from_value(serde_json::json!({"matchLabels": {"app": "web"}}))
                .unwrap_or_default();
        let labels: BTreeMap<String, String> = [("app".to_string(), "web".to_string())].into();
        assert!(selects(&selector, Some(&labels)));
        assert!(!selects(&selector, None));
        assert!(selects(&LabelSelector::default(), None));
        let broken: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchExpressions": [{"key": "app", "operator": "Near", "values": ["web"]}]
        }))
        .unwrap_or_default();
        assert!(!selects(&broken, Some(&labels)));
    }

    #[test]
    fn availability_waits_for_min_ready_seconds() {
        let now = crate::clock::now();
        let mut pod = Pod::default();
        let mut conditions = Vec::new();
        set_condition(&mut conditions, "Ready", "True", None, None);
        pod.status = Some(k8s_openapi::api::core::v1::PodStatus {
            conditions: Some(conditions),
            ..Default::default()
        });
        assert!(is_available(&pod, 0, now));
        assert!(!is_available(&pod, 30, now));
        let later = now
            .checked_add(jiff::SignedDuration::from_secs(31))
            .unwrap_or(now);
        assert!(is_available(&pod, 30, later));
        assert!(available_in(&pod, 30, now).is_some());
        assert!(available_in(&pod, 30, later).is_none());
    }
}
