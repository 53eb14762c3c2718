//! The DaemonSet controller on the cluster in a process, on a paused clock
//! (`pkg/controller/daemon/daemon_controller.go`, `update.go`,
//! `util/daemonset_util.go`).

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use futures::{StreamExt, TryStreamExt};
use kube_core::WatchEvent;

use k8s_openapi::api::{
    apps::v1::{ControllerRevision, DaemonSet},
    core::v1::{Event, Node, Pod},
};
use kubegen::client::{
    Client, ResourceClient,
    params::{ListParams, Patch, PatchParams, PostParams, WatchParams},
};
use kubegen_testserver::ClusterConfig;
use serde_json::json;

use crate::common::{cluster, eventually};

fn daemonset(name: &str, image: &str, extra: serde_json::Value) -> DaemonSet {
    let mut v = json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "agent", "image": image}]},
            },
        },
    });
    json_patch::merge(&mut v, &extra);
    serde_json::from_value(v).unwrap()
}

/// `kubectl rollout status daemonset/x`'s test (`DaemonSetStatusViewer`): observed, every
/// desired pod updated and available.
fn rolled_out(ds: &DaemonSet, desired: i32) -> bool {
    let Some(s) = &ds.status else {
        return false;
    };
    s.observed_generation >= ds.metadata.generation
        && s.desired_number_scheduled == desired
        && s.updated_number_scheduled == Some(desired)
        && s.number_available == Some(desired)
}

async fn pods_of(client: &Client, app: &str) -> Vec<Pod> {
    ResourceClient::<Pod>::namespaced(client.clone(), "default")
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .unwrap()
        .items
}

fn node_of(pod: &Pod) -> String {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default()
}

fn image_of(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.first()?.image.as_deref())
        .unwrap_or_default()
}

fn is_running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
        && pod.metadata.deletion_timestamp.is_none()
}

/// The nodes running a pod of `app`.
async fn running_on(client: &Client, app: &str) -> BTreeSet<String> {
    pods_of(client, app)
        .await
        .iter()
        .filter(|p| is_running(p))
        .map(node_of)
        .collect()
}

async fn wait_rolled_out(client: &Client, name: &str, desired: i32) -> DaemonSet {
    let daemonsets = ResourceClient::<DaemonSet>::namespaced(client.clone(), "default");
    eventually(&format!("{name} rolled out on {desired} nodes"), || async {
        daemonsets
            .get(name)
            .await
            .ok()
            .filter(|d| rolled_out(d, desired))
    })
    .await
}

/// One Running pod per node, pinned by `matchFields` (`ReplaceDaemonSetPodNodeNameNodeAffinity`)
/// and bound by the scheduler, labelled with the revision's hash, with the daemon
/// tolerations; a failed daemon pod is replaced (`podsShouldBeOnNode`).
#[tokio::test]
async fn a_daemonset_runs_one_pod_per_node_and_replaces_a_failed_one() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    ResourceClient::<DaemonSet>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &daemonset("agent", "agent:1", json!({})),
        )
        .await
        .unwrap();
    let ds = wait_rolled_out(&client, "agent", 3).await;
    let status = ds.status.clone().unwrap();
    assert_eq!(
        (
            status.current_number_scheduled,
            status.number_ready,
            status.number_unavailable,
            status.number_misscheduled
        ),
        (3, 3, Some(0), 0)
    );
    let pods = pods_of(&client, "agent").await;
    assert_eq!(pods.len(), 3);
    let nodes: BTreeSet<String> = pods.iter().map(node_of).collect();
    assert_eq!(
        nodes,
        BTreeSet::from(["node-1".into(), "node-2".into(), "node-3".into()])
    );
    let revisions = ResourceClient::<ControllerRevision>::namespaced(client.clone(), "default")
        .list(&ListParams::default().labels("app=agent"))
        .await
        .unwrap()
        .items;
    assert_eq!(revisions.len(), 1);
    let hash = revisions[0].metadata.labels.as_ref().unwrap()["controller-revision-hash"].clone();
    assert_eq!(
        revisions[0].metadata.name.as_deref(),
        Some(format!("agent-{hash}").as_str())
    );
    for pod in &pods {
        assert!(is_running(pod));
        assert_eq!(
            pod.metadata.labels.as_ref().unwrap()["controller-revision-hash"],
            hash
        );
        let spec = serde_json::to_value(pod.spec.as_ref().unwrap()).unwrap();
        let terms = &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"];
        assert_eq!(
            terms,
            &json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_of(pod)]}]}])
        );
        let tolerations = spec["tolerations"].as_array().unwrap();
        assert!(
            tolerations
                .iter()
                .any(|t| t["key"] == "node.kubernetes.io/unschedulable"
                    && t["effect"] == "NoSchedule")
        );
    }

    // A failed daemon pod is deleted and replaced on its node.
    let failed = pods
        .iter()
        .find(|p| node_of(p) == "node-2")
        .unwrap()
        .clone();
    let failed_name = failed.metadata.name.clone().unwrap();
    ResourceClient::<Pod>::namespaced(client.clone(), "default")
        .patch_status(
            &failed_name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Failed"}})),
        )
        .await
        .unwrap();
    eventually("the failed pod replaced", || async {
        let pods = pods_of(&client, "agent").await;
        let replaced = pods.iter().any(|p| {
            node_of(p) == "node-2"
                && is_running(p)
                && p.metadata.name.as_ref() != Some(&failed_name)
        });
        let gone = !pods
            .iter()
            .any(|p| p.metadata.name.as_ref() == Some(&failed_name));
        (replaced && gone).then_some(())
    })
    .await;
    let events = ResourceClient::<Event>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("FailedDaemonPod")
                && e.type_.as_deref() == Some("Warning")),
        "{events:?}"
    );
}

/// `NodeShouldRunDaemonPod`: a `NoSchedule` taint the pod does not tolerate keeps it off
/// a node; a `NoExecute` one removes a running pod; a new node gets one; a cordoned node
/// still gets one (the daemon pods tolerate `unschedulable`).
#[tokio::test]
async fn tainted_nodes_are_skipped_and_new_nodes_get_a_pod() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let nodes = ResourceClient::<Node>::cluster(client.clone());
    let taint = |key: &str, effect: &str| {
        Patch::Merge(json!({"spec": {"taints": [{"key": key, "value": "true", "effect": effect}]}}))
    };
    nodes
        .patch(
            "node-2",
            &PatchParams::default(),
            &taint("dedicated", "NoSchedule"),
        )
        .await
        .unwrap();
    nodes
        .patch(
            "node-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"unschedulable": true}})),
        )
        .await
        .unwrap();
    ResourceClient::<DaemonSet>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &daemonset("agent", "agent:1", json!({})),
        )
        .await
        .unwrap();
    wait_rolled_out(&client, "agent", 2).await;
    assert_eq!(
        running_on(&client, "agent").await,
        BTreeSet::from(["node-1".into(), "node-3".into()])
    );

    // An untolerated NoExecute taint evicts the pod on node-3.
    nodes
        .patch(
            "node-3",
            &PatchParams::default(),
            &taint("maintenance", "NoExecute"),
        )
        .await
        .unwrap();
    eventually("node-3's pod gone", || async {
        let pods = pods_of(&client, "agent").await;
        (!pods.iter().any(|p| node_of(p) == "node-3")).then_some(())
    })
    .await;
    wait_rolled_out(&client, "agent", 1).await;

    // A new node, registered as a kubelet registers it, gets a pod.
    let node: Node = serde_json::from_value(json!({
        "metadata": {"name": "node-4", "labels": {"kubernetes.io/hostname": "node-4"}},
        "spec": {"podCIDR": "10.244.4.0/24", "providerID": "kubegen://node-4"},
    }))
    .unwrap();
    nodes.create(&PostParams::default(), &node).await.unwrap();
    nodes
        .patch_status(
            "node-4",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
            }})),
        )
        .await
        .unwrap();
    wait_rolled_out(&client, "agent", 2).await;
    assert_eq!(
        running_on(&client, "agent").await,
        BTreeSet::from(["node-1".into(), "node-4".into()])
    );
}

/// `update.go` `rollingUpdate` (maxUnavailable 1): a new template replaces the pods one
/// node at a time, never more than one node without an available pod; the history has
/// two revisions; `OnDelete` replaces only deleted pods.
#[tokio::test]
async fn a_rolling_update_replaces_pods_node_by_node() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let daemonsets = ResourceClient::<DaemonSet>::namespaced(client.clone(), "default");
    daemonsets
        .create(
            &PostParams::default(),
            &daemonset("agent", "agent:1", json!({})),
        )
        .await
        .unwrap();
    wait_rolled_out(&client, "agent", 3).await;
    // Every pod change during the rollout, from a watch started before it.
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    let before = pods
        .list(&ListParams::default().labels("app=agent"))
        .await
        .unwrap();
    let mut changes = pods
        .watch(
            &WatchParams::default().labels("app=agent"),
            before.metadata.resource_version.as_deref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    daemonsets
        .patch(
            "agent",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "agent", "image": "agent:2"}]}}}})),
        )
        .await
        .unwrap();
    eventually("agent:2 rolled out", || async {
        let new = pods_of(&client, "agent")
            .await
            .iter()
            .filter(|p| is_running(p) && image_of(p) == "agent:2")
            .count();
        daemonsets
            .get("agent")
            .await
            .ok()
            .filter(|d| rolled_out(d, 3) && new == 3)
    })
    .await;
    let mut state: BTreeMap<String, Pod> = before
        .items
        .into_iter()
        .map(|p| (p.metadata.name.clone().unwrap(), p))
        .collect();
    let (mut worst, mut partial) = (0, false);
    while let Ok(Ok(Some(event))) =
        tokio::time::timeout(Duration::from_millis(10), changes.try_next()).await
    {
        match event {
            WatchEvent::Added(p) | WatchEvent::Modified(p) => {
                state.insert(p.metadata.name.clone().unwrap(), p);
            }
            WatchEvent::Deleted(p) => {
                state.remove(p.metadata.name.as_deref().unwrap());
            }
            _ => {}
        }
        let running: Vec<&Pod> = state.values().filter(|p| is_running(p)).collect();
        let nodes: BTreeSet<String> = running.iter().map(|p| node_of(p)).collect();
        worst = worst.max(3 - nodes.len());
        let new = running.iter().filter(|p| image_of(p) == "agent:2").count();
        partial |= (1..3).contains(&new);
    }
    assert!(
        worst <= 1,
        "at most maxUnavailable=1 node without a pod, saw {worst}"
    );
    assert!(partial, "the pods were replaced node by node");
    let mut revisions: Vec<i64> =
        ResourceClient::<ControllerRevision>::namespaced(client.clone(), "default")
            .list(&ListParams::default().labels("app=agent"))
            .await
            .unwrap()
            .items
            .iter()
            .map(|r| r.revision.unwrap_or_default())
            .collect();
    revisions.sort_unstable();
    assert_eq!(revisions, [1, 2]);

    // OnDelete: a template change leaves the pods until one is deleted.
    daemonsets
        .patch(
            "agent",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": null},
                "template": {"spec": {"containers": [{"name": "agent", "image": "agent:3"}]}}}}),
            ),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(30)).await;
    let images = |pods: &[Pod]| -> Vec<String> {
        let mut images: Vec<String> = pods
            .iter()
            .filter(|p| is_running(p))
            .filter_map(|p| p.spec.as_ref()?.containers[0].image.clone())
            .collect();
        images.sort();
        images
    };
    assert_eq!(images(&pods_of(&client, "agent").await), ["agent:2"; 3]);
    let victim = pods_of(&client, "agent").await[0]
        .metadata
        .name
        .clone()
        .unwrap();
    ResourceClient::<Pod>::namespaced(client.clone(), "default")
        .delete(&victim, &Default::default())
        .await
        .unwrap();
    eventually("one pod on agent:3", || async {
        let pods = pods_of(&client, "agent").await;
        (images(&pods) == ["agent:2", "agent:2", "agent:3"]).then_some(())
    })
    .await;
}
