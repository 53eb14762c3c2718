//! Node health: kubelet heartbeats (node Leases), the node lifecycle controller, taint
//! eviction with the `DefaultTolerationSeconds` admission plugin's 300 seconds, and the
//! `kubernetes` Service, as a cluster built by kubeadm has them.

use k8s_openapi::api::{
    apps::v1::Deployment,
    coordination::v1::Lease,
    core::v1::{Node, Pod, Service},
    discovery::v1::EndpointSlice,
};
use kubegen::client::{
    Client, ResourceClient,
    params::{ListParams, PostParams},
};
use kubegen_testserver::ClusterConfig;

use crate::{cluster, deployment, eventually, pods_of, rolled_out};

fn node_ready(node: &Node) -> Option<(String, Option<String>)> {
    node.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| (c.status.clone(), c.reason.clone()))
}

fn pod_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

fn node_of(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

async fn node(client: &Client, name: &str) -> Node {
    ResourceClient::<Node>::cluster(client.clone())
        .get(name)
        .await
        .unwrap()
}

/// Every kubelet renews a Lease in `kube-node-lease`, owned by its Node
/// (`component-helpers/apimachinery/lease/controller.go`); created pods get the
/// `DefaultTolerationSeconds` tolerations (`plugin/pkg/admission/defaulttolerationseconds`).
#[tokio::test]
async fn kubelets_renew_node_leases_and_pods_get_default_tolerations() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let leases = ResourceClient::<Lease>::namespaced(client.clone(), "kube-node-lease");
    let list = eventually("three node leases", || async {
        let list = leases.list(&ListParams::default()).await.ok()?;
        (list.items.len() == 3).then_some(list)
    })
    .await;
    let lease = &list.items[0];
    let spec = lease.spec.as_ref().unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("node-1"));
    assert_eq!(spec.lease_duration_seconds, Some(40));
    let owner = &lease.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Node", "node-1")
    );
    let first = spec.renew_time.clone().unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(11)).await;
    let renewed = leases.get("node-1").await.unwrap();
    assert!(renewed.spec.unwrap().renew_time.unwrap().0 > first.0);

    let pods = ResourceClient::<Pod>::namespaced(client, "default");
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }))
    .unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.unwrap();
    let tolerations = created.spec.unwrap().tolerations.unwrap();
    let keys: Vec<_> = tolerations
        .iter()
        .map(|t| (t.key.clone().unwrap(), t.toleration_seconds))
        .collect();
    assert_eq!(
        keys,
        [
            ("node.kubernetes.io/not-ready".to_string(), Some(300)),
            ("node.kubernetes.io/unreachable".to_string(), Some(300))
        ]
    );
}

/// A node whose kubelet stops goes `NotReady` after the node monitor grace period, with
/// the `unreachable` taints and its pods marked not ready
/// (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`); five minutes later its
/// pods are evicted (`pkg/controller/tainteviction/taint_eviction.go`), replaced on the
/// other nodes, and stay `Terminating` until the kubelet comes back.
#[tokio::test]
async fn pods_leave_a_node_whose_kubelet_stopped() {
    let (server, client) = cluster(ClusterConfig::default()).await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 3, "nginx"))
        .await
        .unwrap();
    eventually("web rolled out", || async {
        deployments.get("web").await.ok().filter(rolled_out)
    })
    .await;
    let lost = pods_of(&client, "web")
        .await
        .into_iter()
        .find(|p| node_of(p) == "node-1")
        .unwrap();
    let lost_name = lost.metadata.name.clone().unwrap();
    let stopped_at = tokio::time::Instant::now();
    server.stop_kubelet("node-1").await.unwrap();

    let silent = eventually("node-1 unknown", || async {
        let n = node(&client, "node-1").await;
        let unknown = node_ready(&n)? == ("Unknown".into(), Some("NodeStatusUnknown".into()));
        let tainted = n
            .spec
            .as_ref()?
            .taints
            .as_ref()?
            .iter()
            .any(|t| t.key == "node.kubernetes.io/unreachable" && t.effect == "NoExecute");
        (unknown && tainted).then_some(n)
    })
    .await;
    let waited = stopped_at.elapsed().as_secs();
    assert!(
        (40..=70).contains(&waited),
        "the grace period is 50 s after the last heartbeat: {waited} s"
    );
    let taints = silent.spec.unwrap().taints.unwrap();
    assert!(
        taints
            .iter()
            .any(|t| t.key == "node.kubernetes.io/unreachable" && t.effect == "NoSchedule")
    );
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    eventually("the lost pod not ready", || async {
        let p = pods.get(&lost_name).await.ok()?;
        (!pod_ready(&p)).then_some(())
    })
    .await;
    eventually("web unavailable", || async {
        let d = deployments.get("web").await.ok()?;
        (d.status?.available_replicas.unwrap_or(0) == 2).then_some(())
    })
    .await;

    let evicted = eventually("the lost pod evicted", || async {
        let p = pods.get(&lost_name).await.ok()?;
        p.metadata.deletion_timestamp.is_some().then_some(p)
    })
    .await;
    let waited = stopped_at.elapsed().as_secs();
    assert!(
        (340..=380).contains(&waited),
        "evicted 300 s after the taint: {waited} s"
    );
    let disruption = evicted
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "DisruptionTarget")
        .unwrap();
    assert_eq!(disruption.reason.as_deref(), Some("DeletionByTaintManager"));
    eventually("web available again", || async {
        let d = deployments.get("web").await.ok()?;
        let running: Vec<Pod> = pods_of(&client, "web")
            .await
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none() && pod_ready(p))
            .collect();
        let elsewhere = running.iter().all(|p| node_of(p) != "node-1");
        (d.status?.available_replicas == Some(3) && running.len() == 3 && elsewhere).then_some(())
    })
    .await;
    // Still Terminating: no kubelet finishes the deletion.
    assert!(pods.get(&lost_name).await.is_ok());

    server.start_kubelet("node-1").await.unwrap();
    eventually("the lost pod gone", || async {
        pods.get(&lost_name)
            .await
            .err()
            .filter(|e| e.is_not_found())
    })
    .await;
    eventually("node-1 ready and untainted", || async {
        let n = node(&client, "node-1").await;
        let ready = node_ready(&n)?.0 == "True";
        let untainted = !n
            .spec
            .as_ref()?
            .taints
            .as_deref()
            .unwrap_or_default()
            .iter()
            .any(|t| t.key == "node.kubernetes.io/unreachable");
        (ready && untainted).then_some(())
    })
    .await;
}

/// kube-apiserver's bootstrap controller writes the `kubernetes` Service on the first
/// address of the service range, with endpoints at the server
/// (`pkg/controlplane/controller/kubernetesservice/controller.go`).
#[tokio::test]
async fn the_kubernetes_service_points_at_the_server() {
    let (server, client) = cluster(ClusterConfig::default()).await;
    let svc = ResourceClient::<Service>::namespaced(client.clone(), "default")
        .get("kubernetes")
        .await
        .unwrap();
    let spec = svc.spec.unwrap();
    assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.1"));
    assert_eq!(spec.ports.as_ref().unwrap()[0].port, 443);
    assert!(spec.selector.is_none());
    let slice = ResourceClient::<EndpointSlice>::namespaced(client, "default")
        .get("kubernetes")
        .await
        .unwrap();
    let port = i32::from(server.addr().port());
    assert_eq!(slice.ports.unwrap()[0].port, Some(port));
}
