//! The workload controllers of a cluster in a process: what kube-controller-manager,
//! kube-scheduler and the kubelets do against a real kube-apiserver, run as tasks beside
//! the server.
//!
//! Unlike the synchronous hooks of this folder (garbage collection, namespaces, CRDs),
//! these are ordinary controllers built on kubegen's own runtime: shared informers over an
//! in-process front of the server, a rate-limited work queue, a reconcile function per
//! object (`kubegen::controller::Controller`). So they see the server as any client does:
//! through list and watch, with caches that lag writes, and write back through the API
//! (conflicts and all). A controller that writes objects it also watches waits for its
//! cache to catch up with its own writes before the next reconcile (KEP-5647's
//! `ConsistencyStore`, in place of kube-controller-manager's older expectations).
//!
//! Every delay (a pod's start latency, a Job pod's run time, a progress deadline) runs on
//! tokio's clock, which is the server's clock ([`crate::clock`]): a test that pauses it
//! (`TestServer::builder().paused_clock()`) sees a 10-minute deadline pass in
//! milliseconds, and the same inputs give the same events in the same order.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use kubegen::{client::Client, informers::SharedInformerFactory};
use tokio_util::sync::CancellationToken;

use super::config::{Cluster, ClusterConfig, Workload};
use crate::{inprocess::InProcess, shared::Shared};

/// Starts the cluster over `shared`, a server listening on `addr`: writes the `kubernetes`
/// Service and registers the nodes (before returning, so a test sees them at once), then
/// spawns each controller `config` turns on. Everything stops with the server
/// (`shared.shutdown`).
pub(crate) async fn start(
    shared: &Arc<Shared>,
    config: ClusterConfig,
    addr: SocketAddr,
) -> Option<Arc<Cluster>> {
    if config.is_empty() {
        return None;
    }
    let client = Client::new(InProcess::from_shared(shared.clone()));
    if let Err(err) = super::kubernetes_service::register(&client, addr).await {
        tracing::error!(%err, "writing the kubernetes Service");
    }
    if let Err(err) = super::nodes::register(&client, config.nodes).await {
        tracing::error!(%err, "registering the cluster's nodes");
    }
    if config.runs(Workload::PersistentVolume)
        && let Err(err) = super::volume::register_default_class(&client).await
    {
        tracing::error!(%err, "registering the cluster's default StorageClass");
    }
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    super::pods::add_indexes(&factory);
    for fault in &config.pod_faults {
        if let Err(err) = shared.pod_faults.add(fault.clone()) {
            tracing::error!(%err, "ignoring a pod fault");
        }
    }
    let cluster = Arc::new(Cluster::new(
        client,
        factory,
        config,
        shared.pod_faults.clone(),
    ));
    let stop = shared.shutdown.child_token();
    for workload in Workload::ALL {
        if cluster.config.runs(workload) {
            tokio::spawn(run(workload, cluster.clone(), stop.clone()));
        }
    }
    if cluster.config.runs(Workload::Kubelet) {
        tokio::spawn(super::node_lease::run(cluster.clone(), stop));
    }
    Some(cluster)
}

/// Stops the kubelet of `node` (`start: false`: it renews no Lease and syncs no pod, as a
/// crashed or partitioned node), or starts it again (it posts a Ready status and renews
/// its Lease at once, as a restarted kubelet does).
pub(crate) async fn set_kubelet(
    cluster: &Cluster,
    node: &str,
    start: bool,
) -> Result<(), kubegen::client::Error> {
    if !start {
        cluster.stopped_kubelets.lock().insert(node.to_string());
        return Ok(());
    }
    cluster.stopped_kubelets.lock().remove(node);
    super::nodes::post_ready(&cluster.client, node).await?;
    super::node_lease::renew(cluster, node).await
}

async fn run(workload: Workload, cluster: Arc<Cluster>, stop: CancellationToken) {
    let result = match workload {
        Workload::Scheduler => super::scheduler::run(cluster, stop).await,
        Workload::Kubelet => super::kubelet::run(cluster, stop).await,
        Workload::ReplicaSet => super::replicaset::run(cluster, stop).await,
        Workload::Deployment => super::deployment::run(cluster, stop).await,
        Workload::Job => super::job::run(cluster, stop).await,
        Workload::EndpointSlice => super::endpointslice::run(cluster, stop).await,
        Workload::NodeLifecycle => super::node_lifecycle::run(cluster, stop).await,
        Workload::TaintEviction => super::taint_eviction::run(cluster, stop).await,
        Workload::DaemonSet => super::daemonset::run(cluster, stop).await,
        Workload::CronJob => super::cronjob::run(cluster, stop).await,
        Workload::PersistentVolume => super::volume::run(cluster, stop).await,
        Workload::StatefulSet => super::statefulset::run(cluster, stop).await,
        Workload::ClusterRoleAggregation => {
            super::clusterrole_aggregation::run(cluster, stop).await
        }
        Workload::CoordinatedLeaderElection => {
            super::coordinated_election::run(cluster, stop).await
        }
    };
    if let Err(err) = result {
        tracing::error!(controller = workload.name(), %err, "controller stopped");
    }
}
