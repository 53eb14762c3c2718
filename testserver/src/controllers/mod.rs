//! The controllers a real cluster runs beside kube-apiserver, in two kinds:
//!
//! * engine hooks ([`crate::engine::Controller`]), run synchronously after each committed
//!   change: the CRD controllers, namespace lifecycle and the garbage collector
//!   (`crd.rs`, `namespace.rs`, `gc.rs`), registered by [`crate::apiserver`], never called
//!   by name from the engine;
//! * the cluster's workload controllers (`cluster.rs` starts them): the nodes, the
//!   scheduler, the kubelets, kube-controller-manager's workload controllers and
//!   kube-apiserver's coordinated leader election controller (`coordinated_election.rs`),
//!   each its own file, running as tasks on kubegen's informers and work queues over an
//!   in-process front.

mod cluster;
mod clusterrole_aggregation;
mod compat;
mod config;
mod coordinated_election;
mod crd;
mod cronjob;
mod daemonset;
mod deployment;
mod endpointslice;
mod events;
mod faults;
mod gc;
mod history;
mod job;
mod kubelet;
mod kubernetes_service;
mod namespace;
mod node_lease;
mod node_lifecycle;
mod nodes;
mod pods;
mod replicaset;
mod scheduler;
mod statefulset;
mod taint_eviction;
mod volume;

use std::sync::Arc;

pub(crate) use cluster::{set_kubelet, start as start_cluster};
pub(crate) use config::Cluster;
pub use config::{ClusterConfig, Workload};
pub use crd::CrdController;
pub(crate) use faults::PodFaults;
pub use faults::{FAULT_ANNOTATION, FaultAction, PodFault, PodFaultError};
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
