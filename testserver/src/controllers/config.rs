//! What the cluster in a process runs ([`ClusterConfig`], [`Workload`]) and what its
//! workload controllers share ([`Cluster`]): the configuration side of `cluster.rs`, which
//! starts them. Every controller depends on this file and none on `cluster.rs`.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use parking_lot::Mutex;

use kubegen::{client::Client, informers::SharedInformerFactory};

use super::faults::{PodFault, PodFaults};

/// One of the workload controllers a [`ClusterConfig`] can turn off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Workload {
    /// kube-scheduler: assigns pods to nodes.
    Scheduler,
    /// The kubelets of the simulated nodes: run the pods assigned to them.
    Kubelet,
    /// kube-controller-manager's ReplicaSet controller.
    ReplicaSet,
    /// kube-controller-manager's Deployment controller.
    Deployment,
    /// kube-controller-manager's Job controller.
    Job,
    /// kube-controller-manager's EndpointSlice controller.
    EndpointSlice,
    /// kube-controller-manager's node lifecycle controller: marks silent nodes unknown
    /// and taints them.
    NodeLifecycle,
    /// kube-controller-manager's taint eviction controller: deletes pods from nodes with
    /// `NoExecute` taints they do not tolerate.
    TaintEviction,
    /// kube-controller-manager's DaemonSet controller.
    DaemonSet,
    /// kube-controller-manager's CronJob controller.
    CronJob,
    /// kube-controller-manager's PersistentVolume controller (binding, dynamic provisioning
    /// through the cluster's default StorageClass, reclaiming), with that StorageClass.
    PersistentVolume,
    /// kube-controller-manager's StatefulSet controller.
    StatefulSet,
    /// kube-controller-manager's ClusterRole aggregation controller: a ClusterRole with an
    /// aggregation rule gets the rules of the ClusterRoles its selectors match.
    ClusterRoleAggregation,
    /// kube-apiserver's coordinated leader election controller (KEP-4355, the
    /// `CoordinatedLeaderElection` feature, beta in Kubernetes 1.33): elects the holder of
    /// every Lease that `coordination.k8s.io/v1beta1` LeaseCandidates name, the oldest
    /// compatible candidate first. It touches no Lease without candidates, so plain
    /// Lease elections beside it are unaffected.
    CoordinatedLeaderElection,
}

impl Workload {
    /// Every workload controller, in start order.
    pub const ALL: [Workload; 14] = [
        Workload::Scheduler,
        Workload::Kubelet,
        Workload::ReplicaSet,
        Workload::Deployment,
        Workload::Job,
        Workload::EndpointSlice,
        Workload::NodeLifecycle,
        Workload::TaintEviction,
        Workload::DaemonSet,
        Workload::CronJob,
        Workload::PersistentVolume,
        Workload::StatefulSet,
        Workload::ClusterRoleAggregation,
        Workload::CoordinatedLeaderElection,
    ];

    /// The controller's name, as kube-controller-manager's `--controllers` flag spells it
    /// (`scheduler` and `kubelet` for the two that are not controllers there, and
    /// kube-apiserver's `leader-election-controller`).
    pub fn name(self) -> &'static str {
        match self {
            Workload::Scheduler => "scheduler",
            Workload::Kubelet => "kubelet",
            Workload::ReplicaSet => "replicaset",
            Workload::Deployment => "deployment",
            Workload::Job => "job",
            Workload::EndpointSlice => "endpointslice",
            Workload::NodeLifecycle => "nodelifecycle",
            Workload::TaintEviction => "taint-eviction-controller",
            Workload::DaemonSet => "daemonset",
            Workload::CronJob => "cronjob",
            Workload::PersistentVolume => "persistentvolume-binder",
            Workload::StatefulSet => "statefulset",
            Workload::ClusterRoleAggregation => "clusterrole-aggregation",
            Workload::CoordinatedLeaderElection => "leader-election-controller",
        }
    }
}

/// What the cluster in a process runs: its nodes, its workload controllers and how fast
/// its simulated containers start. [`ClusterConfig::default`] is a cluster (3 ready nodes,
/// every controller); [`ClusterConfig::none`] is a bare API server (the fake clientsets'
/// client-go semantics: nothing happens to a Deployment unless the test does it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// How many Nodes are registered at start (`node-1`, `node-2`, ...).
    pub nodes: usize,
    /// The controllers that run.
    pub controllers: BTreeSet<Workload>,
    /// How long a scheduled pod stays `ContainerCreating` before its containers run.
    pub pod_start_latency: Duration,
    /// How long the containers of a pod that runs to completion (`restartPolicy` `Never`
    /// or `OnFailure`, as a Job's pods) run before they exit 0, and how long a container
    /// a [`PodFault`] makes exit runs unless the fault says otherwise.
    pub pod_run_time: Duration,
    /// The kubelet faults scripted from the start ([`ClusterConfig::pod_fault`]).
    pub pod_faults: Vec<PodFault>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: 3,
            controllers: Workload::ALL.into_iter().collect(),
            pod_start_latency: Duration::from_millis(100),
            pod_run_time: Duration::from_secs(1),
            pod_faults: Vec::new(),
        }
    }
}

impl ClusterConfig {
    /// No nodes and no workload controllers: an API server alone.
    pub fn none() -> Self {
        ClusterConfig {
            nodes: 0,
            controllers: BTreeSet::new(),
            ..ClusterConfig::default()
        }
    }

    /// Sets the number of nodes.
    #[must_use]
    pub fn nodes(mut self, n: usize) -> Self {
        self.nodes = n;
        self
    }

    /// Turns `controller` off (a test that owns Pods itself turns off the ReplicaSet
    /// controller, for instance).
    #[must_use]
    pub fn without(mut self, controller: Workload) -> Self {
        self.controllers.remove(&controller);
        self
    }

    /// Turns `controller` on.
    #[must_use]
    pub fn with(mut self, controller: Workload) -> Self {
        self.controllers.insert(controller);
        self
    }

    /// Sets the pod start latency (0 allowed: pods run as soon as they are scheduled).
    #[must_use]
    pub fn pod_start_latency(mut self, latency: Duration) -> Self {
        self.pod_start_latency = latency;
        self
    }

    /// Sets how long a run-to-completion pod runs.
    #[must_use]
    pub fn pod_run_time(mut self, run_time: Duration) -> Self {
        self.pod_run_time = run_time;
        self
    }

    /// Scripts a kubelet fault from the start (see [`PodFault`]; more can be added while
    /// the server runs, with [`crate::TestServer::add_pod_fault`]). A rule whose label
    /// selector does not parse makes [`crate::TestServerBuilder::start`] fail.
    #[must_use]
    pub fn pod_fault(mut self, fault: PodFault) -> Self {
        self.pod_faults.push(fault);
        self
    }

    /// Whether `controller` runs.
    pub fn runs(&self, controller: Workload) -> bool {
        self.controllers.contains(&controller)
    }

    /// Whether anything at all runs (nodes or controllers).
    pub fn is_empty(&self) -> bool {
        self.nodes == 0 && self.controllers.is_empty()
    }
}

/// What every workload controller shares: a client and an informer factory over an
/// in-process front of the server (so every cache is shared, one watch per type), and the
/// configuration.
pub(crate) struct Cluster {
    /// A client whose requests the server serves in-process.
    pub client: Client,
    /// The informers every controller reads from.
    pub factory: SharedInformerFactory,
    /// What runs, and how fast.
    pub config: ClusterConfig,
    /// The nodes whose kubelet the test stopped (`TestServer::stop_kubelet`): they renew
    /// no Lease and sync no pod.
    pub stopped_kubelets: Mutex<BTreeSet<String>>,
    /// The kubelet faults in force (the configuration's, then the server's additions).
    pub faults: Arc<PodFaults>,
}

impl Cluster {
    /// The shared context of a cluster reading through `factory`, writing through
    /// `client`, with the kubelet faults of `faults`.
    pub fn new(
        client: Client,
        factory: SharedInformerFactory,
        config: ClusterConfig,
        faults: Arc<PodFaults>,
    ) -> Self {
        Cluster {
            client,
            factory,
            config,
            stopped_kubelets: Mutex::new(BTreeSet::new()),
            faults,
        }
    }

    /// A recorder of events written as `component`.
    pub fn recorder(&self, component: &'static str) -> super::events::Recorder {
        super::events::Recorder::new(self.client.clone(), component)
    }

    /// Whether the kubelet of `node` is stopped.
    pub fn kubelet_stopped(&self, node: &str) -> bool {
        self.stopped_kubelets.lock().contains(node)
    }
}
