//! The cluster's nodes: registered at start as kubelets register theirs
//! (`pkg/kubelet/kubelet_node_status.go` `registerWithAPIServer`, then the first status
//! update of `setNodeStatus`): Ready, with capacity, addresses, a pod CIDR and node info.
//!
//! Node `i` (from 1) is `node-<i>`, InternalIP `10.0.0.<i+1>`, pod CIDR
//! `10.244.<i>.0/24`; each has 4 CPUs, 16Gi of memory and room for 110 pods, and the
//! well-known labels (`kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch`).

use k8s_openapi::api::core::v1::Node;
use kubegen::client::{
    Client, Error, ResourceClient,
    params::{Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

/// The name of node `i` (from 1).
pub(crate) fn node_name(i: usize) -> String {
    format!("node-{i}")
}

/// The resources every simulated node offers (`status.capacity`, `status.allocatable`).
pub(crate) fn capacity() -> Value {
    json!({"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"})
}

/// The Node object of node `i`, as its kubelet registers it.
fn node(i: usize) -> Value {
    let name = node_name(i);
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
            },
        },
        "spec": {
            "podCIDR": format!("10.244.{i}.0/24"),
            "podCIDRs": [format!("10.244.{i}.0/24")],
            "providerID": format!("kubegen://{name}"),
        },
    })
}

/// The status node `i`'s kubelet reports: Ready, no pressure (the reasons and messages
/// are the kubelet's, `pkg/kubelet/nodestatus/setters.go`).
pub(crate) fn status(i: usize) -> Value {
    let now = crate::clock::now_rfc3339();
    let condition = |type_: &str, status: &str, reason: &str, message: &str| {
        json!({
            "type": type_, "status": status, "reason": reason, "message": message,
            "lastHeartbeatTime": now, "lastTransitionTime": now,
        })
    };
    json!({
        "capacity": capacity(),
        "allocatable": capacity(),
        "conditions": [
            condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ],
        "addresses": [
            {"type": "InternalIP", "address": format!("10.0.0.{}", i + 1)},
            {"type": "Hostname", "address": node_name(i)},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": format!("kubegen-{i}"),
            "systemUUID": format!("kubegen-{i}"),
            "bootID": format!("kubegen-{i}"),
            "kernelVersion": "6.1.0",
            "osImage": "kubegen simulated node",
            "containerRuntimeVersion": "kubegen://0.1.0",
            "kubeletVersion": "v1.34.0",
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    })
}

/// Posts a Ready status for `node` (a restarted kubelet's first status: every condition
/// healthy, heartbeats now). A node that is not one of the cluster's gets the same
/// conditions.
pub(crate) async fn post_ready(client: &Client, node: &str) -> Result<(), Error> {
    let i = node
        .strip_prefix("node-")
        .and_then(|i| i.parse::<usize>().ok())
        .unwrap_or(1);
    let conditions = status(i)["conditions"].clone();
    ResourceClient::<Node>::cluster(client.clone())
        .patch_status(
            node,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": conditions}})),
        )
        .await
        .map(drop)
}

/// Registers nodes 1 to `count` (a node that already exists keeps its spec and gets a
/// fresh status, as a restarted kubelet's).
pub(crate) async fn register(client: &Client, count: usize) -> Result<(), Error> {
    let nodes: ResourceClient<Node> = ResourceClient::cluster(client.clone());
    for i in 1..=count {
        let object: Node = serde_json::from_value(node(i)).map_err(Error::Decode)?;
        match nodes.create(&PostParams::default(), &object).await {
            Ok(_) => {}
            Err(e) if e.is_already_exists() => {}
            Err(e) => return Err(e),
        }
        nodes
            .patch_status(
                &node_name(i),
                &PatchParams::default(),
                &Patch::Merge(json!({"status": status(i)})),
            )
            .await?;
    }
    Ok(())
}
