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

use std::{sync::Arc, time::Duration};

use kubegen::{client::Client, informers::SharedInformerFactory};
use tokio_util::sync::CancellationToken;

use super::config::{Cluster, ClusterConfig, Workload};
use crate::{inprocess::InProcess, shared::Shared};

/// Starts the cluster over `shared`: registers the nodes (before returning, so a test sees
/// them at once), then spawns each controller `config` turns on. Everything stops with the
/// server (`shared.shutdown`).
pub(crate) async fn start(shared: &Arc<Shared>, config: ClusterConfig) {
    if config.is_empty() {
        return;
    }
    let client = Client::new(InProcess::from_shared(shared.clone()));
    if let Err(err) = super::nodes::register(&client, config.nodes).await {
        tracing::error!(%err, "registering the cluster's nodes");
    }
    if config.runs(Workload::PersistentVolume)
        && let Err(err) = super::volume::register_default_class(&client).await
    {
        tracing::error!(%err, "registering the cluster's default StorageClass");
    }
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let cluster = Arc::new(Cluster {
        client,
        factory,
        config,
    });
    let stop = shared.shutdown.child_token();
    for workload in Workload::ALL {
        if cluster.config.runs(workload) {
            tokio::spawn(run(workload, cluster.clone(), stop.clone()));
        }
    }
}

async fn run(workload: Workload, cluster: Arc<Cluster>, stop: CancellationToken) {
    let result = match workload {
        Workload::Scheduler => super::scheduler::run(cluster, stop).await,
        Workload::Kubelet => super::kubelet::run(cluster, stop).await,
        Workload::ReplicaSet => super::replicaset::run(cluster, stop).await,
        Workload::Deployment => super::deployment::run(cluster, stop).await,
        Workload::Job => super::job::run(cluster, stop).await,
        Workload::EndpointSlice => super::endpointslice::run(cluster, stop).await,
        Workload::PersistentVolume => super::volume::run(cluster, stop).await,
        Workload::StatefulSet => super::statefulset::run(cluster, stop).await,
    };
    if let Err(err) = result {
        tracing::error!(controller = workload.name(), %err, "controller stopped");
    }
}
