//! The kubelets' heartbeats: each simulated node's kubelet renews a Lease named after its
//! node in `kube-node-lease` every 10 seconds (a quarter of its 40-second duration), as
//! the kubelet's node lease controller does
//! (`staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go`,
//! `pkg/kubelet/kubelet.go` `nodeLeaseRenewIntervalFraction`). The node lifecycle
//! controller reads these Leases to tell a live node from a dead one
//! (`node_lifecycle.rs`).
//!
//! A kubelet the test stopped (`TestServer::stop_kubelet`) renews nothing, so its node's
//! Lease ages until the node lifecycle controller marks the node unreachable.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference},
};
use kubegen::client::{
    Error, ResourceClient,
    params::{Patch, PatchParams, PostParams},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{config::Cluster, nodes};

/// The namespace of the node Leases.
pub(crate) const NAMESPACE: &str = "kube-node-lease";

/// How long a node Lease lasts (the kubelet's `nodeLeaseDurationSeconds`).
pub(crate) const DURATION_SECONDS: i32 = 40;

/// How often a kubelet renews its Lease.
pub(crate) const RENEW_INTERVAL: Duration = Duration::from_secs(10);

/// Renews the Lease of every running kubelet every [`RENEW_INTERVAL`], until `stop`.
pub(crate) async fn run(cluster: Arc<Cluster>, stop: CancellationToken) {
    loop {
        for i in 1..=cluster.config.nodes {
            let name = nodes::node_name(i);
            if cluster.kubelet_stopped(&name) {
                continue;
            }
            if let Err(err) = renew(&cluster, &name).await {
                tracing::debug!(node = %name, %err, "renewing the node lease");
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(RENEW_INTERVAL) => {}
        }
    }
}

/// Renews `node`'s Lease, creating it (owned by the Node) the first time.
pub(crate) async fn renew(cluster: &Cluster, node: &str) -> Result<(), Error> {
    let leases: ResourceClient<Lease> =
        ResourceClient::namespaced(cluster.client.clone(), NAMESPACE);
    let now = MicroTime(crate::clock::now());
    let patch = Patch::Merge(json!({"spec": {"holderIdentity": node, "renewTime": now}}));
    match leases.patch(node, &PatchParams::default(), &patch).await {
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    let owner = ResourceClient::<k8s_openapi::api::core::v1::Node>::cluster(cluster.client.clone())
        .get(node)
        .await
        .ok()
        .and_then(|n| n.metadata.uid)
        .map(|uid| OwnerReference {
            api_version: "v1".into(),
            kind: "Node".into(),
            name: node.into(),
            uid,
            ..OwnerReference::default()
        });
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some(node.into()),
            namespace: Some(NAMESPACE.into()),
            owner_references: owner.map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(node.into()),
            lease_duration_seconds: Some(DURATION_SECONDS),
            renew_time: Some(now),
            ..LeaseSpec::default()
        }),
    };
    match leases.create(&PostParams::default(), &lease).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(e),
    }
}
