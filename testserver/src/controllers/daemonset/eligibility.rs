//! Which nodes a DaemonSet's pod belongs on, and the pod it gets there (kubernetes
//! `pkg/controller/daemon/daemon_controller.go` `NodeShouldRunDaemonPod` and `predicates`,
//! `pkg/controller/daemon/util/daemonset_util.go` `NewPod`, `CreatePodTemplate`,
//! `AddOrUpdateDaemonPodTolerations` and `ReplaceDaemonSetPodNodeNameNodeAffinity`).

use k8s_openapi::api::{
    apps::v1::DaemonSet,
    core::v1::{
        Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
        PodSpec, PodTemplateSpec, Toleration,
    },
};

use super::revision;
use crate::controllers::{compat::Opt, scheduler};

/// Whether a node should run the DaemonSet's pod, and whether a pod already there may stay
/// (`NodeShouldRunDaemonPod`'s two answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Eligibility {
    /// The node passes the pod's node name, node affinity and taints: a pod is created.
    pub should_run: bool,
    /// A pod there keeps running (it tolerates the node's `NoExecute` taints even if a
    /// `NoSchedule` taint keeps new pods off).
    pub should_continue: bool,
}

/// The tolerations every daemon pod gets (`AddOrUpdateDaemonPodTolerations`): it stays on
/// a node that is not ready or unreachable (`NoExecute`, no `tolerationSeconds`), and is
/// placed on one under disk, memory or PID pressure or cordoned (`NoSchedule`); with
/// `hostNetwork`, on one whose network is unavailable too.
pub(crate) fn daemon_tolerations(spec: &PodSpec) -> Vec<Toleration> {
    let exists = |key: &str, effect: &str| Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some(effect.into()),
        ..Toleration::default()
    };
    let mut added = vec![
        exists("node.kubernetes.io/not-ready", "NoExecute"),
        exists("node.kubernetes.io/unreachable", "NoExecute"),
        exists("node.kubernetes.io/disk-pressure", "NoSchedule"),
        exists("node.kubernetes.io/memory-pressure", "NoSchedule"),
        exists("node.kubernetes.io/pid-pressure", "NoSchedule"),
        exists("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if spec.host_network == Some(true) {
        added.push(exists(
            "node.kubernetes.io/network-unavailable",
            "NoSchedule",
        ));
    }
    // `AddOrUpdateTolerationInPodSpec`: one with the same key and effect is replaced.
    let mut tolerations: Vec<Toleration> = spec.tolerations.clone().unwrap_or_default();
    for toleration in added {
        match tolerations
            .iter_mut()
            .find(|t| t.key == toleration.key && t.effect == toleration.effect)
        {
            Some(existing) => *existing = toleration,
            None => tolerations.push(toleration),
        }
    }
    tolerations
}

/// `NewPod`: the pod the DaemonSet would run on `node`, for the checks below.
fn new_pod(ds: &DaemonSet, node: &str) -> Pod {
    let template = ds
        .spec
        .opt()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let mut spec = template.spec.unwrap_or_default();
    spec.tolerations = Some(daemon_tolerations(&spec));
    spec.node_name = Some(node.into());
    Pod {
        metadata: template.metadata.unwrap_or_default(),
        spec: Some(spec),
        status: None,
    }
}

/// `NodeShouldRunDaemonPod`: the template's `nodeName` (if any) is this node, the
/// node passes the pod's `nodeSelector` and required node affinity, and no `NoSchedule` or
/// `NoExecute` taint goes untolerated; when only taints are in the way, a pod there stays
/// unless a `NoExecute` taint is untolerated.
pub(crate) fn eligibility(node: &Node, ds: &DaemonSet) -> Eligibility {
    let never = Eligibility {
        should_run: false,
        should_continue: false,
    };
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let pinned = ds
        .spec
        .opt()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default();
    if !pinned.is_empty() && pinned != name {
        return never;
    }
    let pod = new_pod(ds, name);
    if !scheduler::node_affinity_matches(&pod, node) {
        return never;
    }
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default();
    if scheduler::untolerated_taint(taints, tolerations, &["NoSchedule", "NoExecute"]).is_none() {
        return Eligibility {
            should_run: true,
            should_continue: true,
        };
    }
    Eligibility {
        should_run: false,
        should_continue: scheduler::untolerated_taint(taints, tolerations, &["NoExecute"])
            .is_none(),
    }
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: the pod's required node affinity becomes
/// the one term `matchFields metadata.name In [node]` (its other terms were checked
/// against the node already); preferred terms and other affinities stay.
pub(crate) fn pin_to_node(affinity: Option<Affinity>, node: &str) -> Affinity {
    let pinned = NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_fields: Some(vec![NodeSelectorRequirement {
                key: "metadata.name".into(),
                operator: "In".into(),
                values: Some(vec![node.into()]),
            }]),
            match_expressions: None,
        }],
    };
    let mut affinity = affinity.unwrap_or_default();
    affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default)
        .required_during_scheduling_ignored_during_execution = Some(pinned);
    affinity
}

/// The template a new daemon pod on `node` is made from (`CreatePodTemplate`, then
/// `ReplaceDaemonSetPodNodeNameNodeAffinity`): the DaemonSet's template with the daemon
/// tolerations, the `controller-revision-hash` label of the current revision, and the
/// affinity pinning it to `node` (the scheduler binds it).
pub(crate) fn pod_template(ds: &DaemonSet, hash: &str, node: &str) -> PodTemplateSpec {
    let mut template = ds
        .spec
        .opt()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let meta = template.metadata.get_or_insert_with(Default::default);
    meta.labels
        .get_or_insert_with(Default::default)
        .insert(revision::HASH_LABEL.into(), hash.into());
    let spec = template.spec.get_or_insert_with(Default::default);
    spec.tolerations = Some(daemon_tolerations(spec));
    spec.affinity = Some(pin_to_node(spec.affinity.take(), node));
    template
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(name: &str, extra: serde_json::Value) -> Node {
        let mut v = json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "spec": {}});
        json_patch::merge(&mut v, &extra);
        serde_json::from_value(v).unwrap_or_default()
    }

    fn ds(template_spec: serde_json::Value) -> DaemonSet {
        serde_json::from_value(json!({
            "metadata": {"name": "agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}}, "spec": template_spec}},
        }))
        .unwrap_or_default()
    }

    const RUN: Eligibility = Eligibility {
        should_run: true,
        should_continue: true,
    };
    const NEVER: Eligibility = Eligibility {
        should_run: false,
        should_continue: false,
    };

    /// `daemon_controller.go` `NodeShouldRunDaemonPod`: selector, affinity and taints.
    #[test]
    fn nodes_pass_selector_affinity_and_taints() {
        let plain = ds(json!({"containers": []}));
        assert_eq!(eligibility(&node("a", json!({})), &plain), RUN);
        let ssd = ds(json!({"nodeSelector": {"disk": "ssd"}, "containers": []}));
        assert_eq!(eligibility(&node("a", json!({})), &ssd), NEVER);
        assert_eq!(
            eligibility(
                &node("a", json!({"metadata": {"labels": {"disk": "ssd"}}})),
                &ssd
            ),
            RUN
        );
        let affinity = ds(json!({"containers": [], "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["b"]}]}]}}}}));
        assert_eq!(eligibility(&node("a", json!({})), &affinity), RUN);
        assert_eq!(eligibility(&node("b", json!({})), &affinity), NEVER);
        let pinned = ds(json!({"nodeName": "b", "containers": []}));
        assert_eq!(eligibility(&node("a", json!({})), &pinned), NEVER);
    }

    /// A `NoSchedule` taint keeps new pods off but lets a running one stay; an untolerated
    /// `NoExecute` taint evicts it; the daemon tolerations cover not-ready, unreachable,
    /// pressure and cordoned nodes (`util/daemonset_util.go`).
    #[test]
    fn taints_decide_between_run_stay_and_leave() {
        let plain = ds(json!({"containers": []}));
        let tainted = |key: &str, effect: &str| {
            node(
                "a",
                json!({"spec": {"taints": [{"key": key, "effect": effect}]}}),
            )
        };
        assert_eq!(
            eligibility(&tainted("gpu", "NoSchedule"), &plain),
            Eligibility {
                should_run: false,
                should_continue: true
            }
        );
        assert_eq!(eligibility(&tainted("gpu", "NoExecute"), &plain), NEVER);
        assert_eq!(
            eligibility(&tainted("gpu", "PreferNoSchedule"), &plain),
            RUN
        );
        for (key, effect) in [
            ("node.kubernetes.io/not-ready", "NoExecute"),
            ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/disk-pressure", "NoSchedule"),
            ("node.kubernetes.io/memory-pressure", "NoSchedule"),
            ("node.kubernetes.io/pid-pressure", "NoSchedule"),
            ("node.kubernetes.io/unschedulable", "NoSchedule"),
        ] {
            assert_eq!(eligibility(&tainted(key, effect), &plain), RUN, "{key}");
        }
        let tolerant =
            ds(json!({"containers": [], "tolerations": [{"key": "gpu", "operator": "Exists"}]}));
        assert_eq!(eligibility(&tainted("gpu", "NoExecute"), &tolerant), RUN);
    }

    /// `ReplaceDaemonSetPodNodeNameNodeAffinity`, and the template's hash label.
    #[test]
    fn new_pods_are_pinned_labelled_and_tolerant() {
        let with_affinity = ds(json!({"containers": [], "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["x"]}]}]}}}}));
        let template = pod_template(&with_affinity, "h1", "node-2");
        let pod = Pod {
            metadata: template.metadata.clone().unwrap_or_default(),
            spec: template.spec.clone(),
            status: None,
        };
        assert_eq!(
            crate::controllers::pods::target_node(&pod).as_deref(),
            Some("node-2")
        );
        let terms = serde_json::to_value(&template.spec).unwrap_or_default()["affinity"]
            ["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            .clone();
        assert_eq!(
            terms,
            json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}])
        );
        let labels = template.metadata.and_then(|m| m.labels).unwrap_or_default();
        assert_eq!(
            labels.get(revision::HASH_LABEL).map(String::as_str),
            Some("h1")
        );
        assert_eq!(labels.get("app").map(String::as_str), Some("agent"));
        let tolerations = template
            .spec
            .and_then(|s| s.tolerations)
            .unwrap_or_default();
        assert_eq!(tolerations.len(), 6);
    }
}
