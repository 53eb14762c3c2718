//! The controllers a real cluster runs beside kube-apiserver, in two kinds:
//!
//! * engine hooks ([`crate::engine::Controller`]), run synchronously after each committed
//!   change: the CRD controllers, namespace lifecycle and the garbage collector
//!   (`crd.rs`, `namespace.rs`, `gc.rs`), registered by [`crate::apiserver`], never called
//!   by name from the engine;
//! * the cluster's workload controllers (`cluster.rs` starts them): the nodes, the
//!   scheduler, the kubelets and kube-controller-manager's workload controllers, each its
//!   own file, running as tasks on kubegen's informers and work queues over an in-process
//!   front.

mod cluster;
mod compat;
mod config;
mod crd;
mod deployment;
mod endpointslice;
mod gc;
mod history;
mod job;
mod kubelet;
mod namespace;
mod nodes;
mod pods;
mod replicaset;
mod scheduler;
mod statefulset;
mod volume;

use std::sync::Arc;

pub(crate) use cluster::start as start_cluster;
pub use config::{ClusterConfig, Workload};
pub use crd::CrdController;
pub use gc::GarbageCollector;
pub use namespace::NamespaceController;

use crate::engine::Controller;

/// The standard set: the CRD controllers, the namespace controller and the garbage
/// collector, in that order.
pub fn standard() -> Vec<Arc<dyn Controller>> {
    vec![
        Arc::new(CrdController),
        Arc::new(NamespaceController),
        Arc::new(GarbageCollector),
    ]
}
