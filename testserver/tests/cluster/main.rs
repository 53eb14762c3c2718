//! The cluster in a process, driven in-process on a paused clock: nodes, the scheduler,
//! the kubelets, the ReplicaSet and Deployment controllers, as kube-controller-manager
//! and kube-scheduler behave (each test cites the Go source or the documentation whose
//! behaviour it checks).

#![allow(clippy::unwrap_used)] // tests: a failed call is a failed test

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::{Node, Pod},
};
use kube_core::WatchEvent;
use kubegen::client::{
    Client, ResourceClient,
    params::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams},
};
use kubegen_testserver::{ClusterConfig, Workload};
use serde_json::json;

mod common;
mod cronjob;
mod daemonset;
mod events;
mod faults;
mod nodes;
mod statefulset;

use common::{cluster, eventually};

fn deployment(name: &str, replicas: i32, image: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    }))
    .unwrap()
}

fn condition<'a>(d: &'a Deployment, type_: &str) -> Option<(&'a str, &'a str)> {
    d.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_.as_deref() == Some(type_))
        .map(|c| {
            (
                c.status.as_deref().unwrap_or_default(),
                c.reason.as_deref().unwrap_or_default(),
            )
        })
}

/// Whether kubectl's `rollout status` would report the rollout complete
/// (`kubectl/pkg/polymorphichelpers/rollout_status.go` `DeploymentStatusViewer`).
fn rolled_out(d: &Deployment) -> bool {
    let (Some(status), spec) = (&d.status, &d.spec) else {
        return false;
    };
    let replicas = spec.replicas.unwrap_or(1);
    status.observed_generation >= d.metadata.generation
        && status.updated_replicas.unwrap_or(0) == replicas
        && status.replicas.unwrap_or(0) == replicas
        && status.available_replicas.unwrap_or(0) == replicas
        && condition(d, "Progressing") == Some(("True", "NewReplicaSetAvailable"))
}

async fn pods_of(client: &Client, app: &str) -> Vec<Pod> {
    ResourceClient::<Pod>::namespaced(client.clone(), "default")
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .unwrap()
        .items
}

#[tokio::test]
async fn three_ready_nodes_are_registered_at_start() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let nodes = ResourceClient::<Node>::cluster(client)
        .list(&ListParams::default())
        .await
        .unwrap();
    let names: Vec<_> = nodes
        .items
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    assert_eq!(names, ["node-1", "node-2", "node-3"]);
    for node in &nodes.items {
        let status = node.status.as_ref().unwrap();
        let ready = status
            .conditions
            .as_deref()
            .unwrap()
            .iter()
            .find(|c| c.type_ == "Ready")
            .unwrap();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_deref()),
            ("True", Some("KubeletReady"))
        );
        assert_eq!(status.allocatable.as_ref().unwrap()["pods"].0, "110");
        assert!(node.spec.as_ref().unwrap().pod_cidr.is_some());
    }
}

/// A Deployment becomes ReplicaSet → Pods → scheduled → running → available, with the
/// status kubectl reads (`pkg/controller/deployment/sync.go` `syncRolloutStatus`).
#[tokio::test]
async fn a_deployment_becomes_available_with_pods_spread_over_the_nodes() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 3, "nginx:1.27"))
        .await
        .unwrap();
    let d = eventually("web rolled out", || async {
        deployments.get("web").await.ok().filter(rolled_out)
    })
    .await;
    assert_eq!(
        condition(&d, "Available"),
        Some(("True", "MinimumReplicasAvailable"))
    );
    let rss = ResourceClient::<ReplicaSet>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(rss.len(), 1);
    let rs = &rss[0];
    let hash = &rs.metadata.labels.as_ref().unwrap()["pod-template-hash"];
    assert_eq!(
        rs.metadata.name.as_deref(),
        Some(format!("web-{hash}").as_str())
    );
    assert_eq!(
        rs.metadata.annotations.as_ref().unwrap()["deployment.kubernetes.io/revision"],
        "1"
    );
    let pods = pods_of(&client, "web").await;
    assert_eq!(pods.len(), 3);
    let mut nodes: Vec<_> = pods
        .iter()
        .map(|p| p.spec.as_ref().unwrap().node_name.clone().unwrap())
        .collect();
    nodes.sort();
    assert_eq!(
        nodes,
        ["node-1", "node-2", "node-3"],
        "least-allocated spreads pods"
    );
    for pod in &pods {
        let status = pod.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(status.pod_ip.as_deref().unwrap().starts_with("10.244."));
        let c = &status.container_statuses.as_ref().unwrap()[0];
        assert!(c.ready);
        assert_eq!(c.image, "docker.io/library/nginx:1.27");
        assert_eq!(
            pod.metadata.labels.as_ref().unwrap()["pod-template-hash"],
            *hash
        );
    }
}

/// A template change rolls out a new ReplicaSet and scales the old one to zero, within
/// maxSurge / maxUnavailable (`pkg/controller/deployment/rolling.go`).
#[tokio::test]
async fn a_template_change_rolls_out_a_second_revision() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 4, "nginx:1.27"))
        .await
        .unwrap();
    eventually("revision 1", || async {
        deployments.get("web").await.ok().filter(rolled_out)
    })
    .await;
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}})),
        )
        .await
        .unwrap();
    // Watch pods while the rollout runs: never fewer than replicas - maxUnavailable (3)
    // ready, never more than replicas + maxSurge (5) pods.
    let d = eventually("revision 2", || async {
        let pods = pods_of(&client, "web").await;
        assert!(
            pods.len() <= 5,
            "maxSurge 25% of 4 rounds up to 1: {} pods",
            pods.len()
        );
        deployments.get("web").await.ok().filter(|d| {
            rolled_out(d)
                && d.metadata
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a["deployment.kubernetes.io/revision"] == "2")
        })
    })
    .await;
    assert_eq!(d.status.as_ref().unwrap().updated_replicas, Some(4));
    let rss = ResourceClient::<ReplicaSet>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(rss.len(), 2, "the old ReplicaSet is kept for rollbacks");
    let replicas: Vec<_> = rss
        .iter()
        .map(|rs| {
            (
                rs.metadata.annotations.as_ref().unwrap()["deployment.kubernetes.io/revision"]
                    .clone(),
                rs.spec.replicas,
            )
        })
        .collect();
    assert!(replicas.contains(&("1".into(), Some(0))), "{replicas:?}");
    assert!(replicas.contains(&("2".into(), Some(4))), "{replicas:?}");
    let pods = pods_of(&client, "web").await;
    assert_eq!(pods.len(), 4);
    assert!(
        pods.iter()
            .all(|p| p.spec.as_ref().unwrap().containers[0].image.as_deref() == Some("nginx:1.28"))
    );
}

/// A ReplicaSet replaces a pod that was deleted (`pkg/controller/replicaset/replica_set.go`
/// `manageReplicas`), and the deleted pod goes through graceful deletion: its kubelet
/// finishes it (`pkg/registry/core/pod/strategy.go` `CheckGracefulDelete`).
#[tokio::test]
async fn a_deleted_pod_is_replaced_and_its_kubelet_finishes_the_deletion() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 2, "nginx"))
        .await
        .unwrap();
    eventually("rolled out", || async {
        deployments.get("web").await.ok().filter(rolled_out)
    })
    .await;
    let victim = pods_of(&client, "web").await.remove(0);
    let name = victim.metadata.name.clone().unwrap();
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    let deleted = pods.delete(&name, &DeleteParams::default()).await.unwrap();
    let kubegen::client::DeleteResponse::Object(kept) = deleted else {
        panic!("a pod's DELETE answers with the pod");
    };
    assert!(kept.metadata.deletion_timestamp.is_some());
    assert_eq!(kept.metadata.deletion_grace_period_seconds, Some(30));
    eventually("the deleted pod gone and replaced", || async {
        let now = pods_of(&client, "web").await;
        (now.len() == 2
            && now
                .iter()
                .all(|p| p.metadata.name.as_deref() != Some(&name)))
        .then_some(())
    })
    .await;
    eventually("available again", || async {
        deployments.get("web").await.ok().filter(rolled_out)
    })
    .await;
}

/// A pod no node fits stays Pending with `PodScheduled=False`, reason `Unschedulable`
/// (kube-scheduler's `FailedScheduling` summary), and is scheduled once a node fits.
#[tokio::test]
async fn an_unschedulable_pod_waits_with_kube_schedulers_reason() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "picky"},
        "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "c", "image": "busybox"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let message = eventually("PodScheduled=False", || async {
        let p = pods.get("picky").await.ok()?;
        let c = p
            .status?
            .conditions?
            .into_iter()
            .find(|c| c.type_ == "PodScheduled")?;
        (c.status == "False" && c.reason.as_deref() == Some("Unschedulable")).then_some(c.message)
    })
    .await;
    assert_eq!(
        message.as_deref(),
        Some("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
    );
    ResourceClient::<Node>::cluster(client.clone())
        .patch(
            "node-2",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"disk": "ssd"}}})),
        )
        .await
        .unwrap();
    let p = eventually("running on node-2", || async {
        pods.get("picky")
            .await
            .ok()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
    })
    .await;
    assert_eq!(p.spec.unwrap().node_name.as_deref(), Some("node-2"));
}

/// A pod that runs to completion (`restartPolicy: Never`) succeeds after the cluster's
/// pod run time; `activeDeadlineSeconds` fails a pod that outlives it
/// (`pkg/kubelet/active_deadline.go`).
#[tokio::test]
async fn run_to_completion_pods_succeed_and_deadlines_fail_pods() {
    let (_server, client) =
        cluster(ClusterConfig::default().pod_run_time(Duration::from_secs(60))).await;
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    for (name, deadline) in [("once", None), ("bounded", Some(10))] {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"restartPolicy": "Never", "activeDeadlineSeconds": deadline,
                     "containers": [{"name": "c", "image": "busybox"}]},
        }))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    let phase = |name: &'static str| {
        let pods = pods.clone();
        async move {
            let p = pods.get(name).await.ok()?;
            let s = p.status?;
            let phase = s.phase?;
            matches!(phase.as_str(), "Succeeded" | "Failed").then_some((phase, s.reason))
        }
    };
    assert_eq!(
        eventually("bounded finished", || phase("bounded")).await,
        ("Failed".into(), Some("DeadlineExceeded".into()))
    );
    assert_eq!(
        eventually("once finished", || phase("once")).await,
        ("Succeeded".into(), None)
    );
}

/// Turning the workload controllers off gives an API server alone: a Deployment gets no
/// ReplicaSet (client-go's fake semantics), and pods stay Pending.
#[tokio::test]
async fn a_cluster_without_controllers_leaves_workloads_alone() {
    let (_server, client) = cluster(ClusterConfig::none()).await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 1, "nginx"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let rss = ResourceClient::<ReplicaSet>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(rss.items.is_empty());
    let nodes = ResourceClient::<Node>::cluster(client)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(nodes.items.is_empty());
}

/// With the ReplicaSet controller alone off, a test owns its pods: the Deployment
/// controller still makes the ReplicaSet, and nothing makes pods.
#[tokio::test]
async fn one_controller_can_be_turned_off() {
    let (_server, client) = cluster(ClusterConfig::default().without(Workload::ReplicaSet)).await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 2, "nginx"))
        .await
        .unwrap();
    let rss = ResourceClient::<ReplicaSet>::namespaced(client.clone(), "default");
    eventually("a ReplicaSet", || async {
        let list = rss.list(&ListParams::default()).await.ok()?;
        (!list.items.is_empty()).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(pods_of(&client, "web").await.is_empty());
}

/// The same inputs on a paused clock give the same events in the same order: names,
/// uids, nodes, IPs and phases included.
#[test]
fn two_runs_on_a_paused_clock_write_the_same_events() {
    async fn run() -> Vec<String> {
        let (_server, client) = cluster(ClusterConfig::default()).await;
        let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
        let mut events = pods
            .watch(&WatchParams::default(), "0")
            .await
            .unwrap()
            .boxed();
        let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
        deployments
            .create(&PostParams::default(), &deployment("web", 3, "nginx"))
            .await
            .unwrap();
        eventually("rolled out", || async {
            deployments.get("web").await.ok().filter(rolled_out)
        })
        .await;
        pods.delete_collection(&DeleteParams::default(), &ListParams::default())
            .await
            .unwrap();
        eventually("replaced", || async {
            deployments
                .get("web")
                .await
                .ok()
                .filter(|d| rolled_out(d) && d.status.as_ref().unwrap().ready_replicas == Some(3))
        })
        .await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        let mut seen = Vec::new();
        while let Ok(Ok(Some(event))) =
            tokio::time::timeout(Duration::from_millis(10), events.try_next()).await
        {
            let line = match event {
                WatchEvent::Added(p) | WatchEvent::Modified(p) | WatchEvent::Deleted(p) => {
                    let s = p.status.clone().unwrap_or_default();
                    format!(
                        "{} {} {:?} {:?} {:?} {:?}",
                        p.metadata.name.unwrap_or_default(),
                        p.metadata.uid.unwrap_or_default(),
                        p.spec.and_then(|s| s.node_name),
                        s.phase,
                        s.pod_ip,
                        p.metadata.deletion_timestamp.is_some(),
                    )
                }
                other => format!("{other:?}"),
            };
            seen.push(line);
        }
        seen
    }
    // Each run on a fresh runtime, so nothing left over from the first schedules beside
    // the second.
    let replay = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(run())
    };
    let first = replay();
    assert!(first.len() > 20, "{first:#?}");
    assert_eq!(first, replay());
}

/// A Job runs `parallelism` pods at a time until `completions` succeeded, then is
/// `Complete` (`pkg/controller/job/job_controller.go`; Kubernetes 1.31's
/// `SuccessCriteriaMet` first).
#[tokio::test]
async fn a_job_completes_once_its_pods_succeed() {
    use k8s_openapi::api::batch::v1::Job;
    let (_server, client) =
        cluster(ClusterConfig::default().pod_run_time(Duration::from_secs(30))).await;
    let jobs = ResourceClient::<Job>::namespaced(client.clone(), "default");
    let job: Job = serde_json::from_value(json!({
        "metadata": {"name": "pi"},
        "spec": {"completions": 3, "parallelism": 2, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]}}},
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    let done = eventually("Complete", || async {
        let j = jobs.get("pi").await.ok()?;
        let complete = j
            .status
            .as_ref()?
            .conditions
            .as_deref()?
            .iter()
            .any(|c| c.type_ == "Complete" && c.status == "True");
        complete.then_some(j)
    })
    .await;
    let status = done.status.unwrap();
    assert_eq!((status.succeeded, status.active), (Some(3), Some(0)));
    assert!(status.completion_time.is_some() && status.start_time.is_some());
    let types: Vec<_> = status
        .conditions
        .unwrap()
        .into_iter()
        .map(|c| c.type_)
        .collect();
    assert_eq!(types, ["SuccessCriteriaMet", "Complete"]);
    let pods = ResourceClient::<Pod>::namespaced(client, "default")
        .list(&ListParams::default().labels("batch.kubernetes.io/job-name=pi"))
        .await
        .unwrap()
        .items;
    assert_eq!(pods.len(), 3);
    assert!(
        pods.iter()
            .all(|p| p.status.as_ref().unwrap().phase.as_deref() == Some("Succeeded"))
    );
}

/// A ReplicaSet keeps `replicas` pods and reports them (`pkg/controller/replicaset`):
/// scaled down, the pods that matter least go first; an orphan pod its selector matches
/// is adopted.
#[tokio::test]
async fn a_replicaset_keeps_its_replicas_and_adopts_orphans() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    let orphan: Pod = serde_json::from_value(json!({
        "metadata": {"name": "orphan", "labels": {"app": "cache"}},
        "spec": {"containers": [{"name": "c", "image": "redis"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &orphan).await.unwrap();
    let rss = ResourceClient::<ReplicaSet>::namespaced(client.clone(), "default");
    let rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "cache"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "cache"}},
                 "template": {"metadata": {"labels": {"app": "cache"}},
                              "spec": {"containers": [{"name": "c", "image": "redis"}]}}},
    }))
    .unwrap();
    rss.create(&PostParams::default(), &rs).await.unwrap();
    let available = |n: i32| {
        let rss = rss.clone();
        async move {
            let rs = rss.get("cache").await.ok()?;
            let s = rs.status?;
            (s.replicas == n && s.available_replicas == Some(n) && s.ready_replicas == Some(n))
                .then_some(())
        }
    };
    eventually("3 available", || available(3)).await;
    let adopted = pods.get("orphan").await.unwrap();
    let owner = &adopted.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("ReplicaSet", Some(true))
    );
    assert_eq!(
        pods_of(&client, "cache").await.len(),
        3,
        "the orphan counts as one of three"
    );
    rss.patch(
        "cache",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await
    .unwrap();
    eventually("1 available", || available(1)).await;
    eventually("2 pods gone", || async {
        (pods_of(&client, "cache").await.len() == 1).then_some(())
    })
    .await;
}

/// A Service's EndpointSlice lists the pods it selects with their readiness
/// (`pkg/controller/endpointslice`), and follows them as they come and go.
#[tokio::test]
async fn a_service_gets_an_endpointslice_of_its_ready_pods() {
    use k8s_openapi::api::{core::v1::Service, discovery::v1::EndpointSlice};
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "cache"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "cache"}},
                 "template": {"metadata": {"labels": {"app": "cache"}},
                              "spec": {"containers": [{"name": "c", "image": "redis",
                                       "ports": [{"name": "redis", "containerPort": 6379}]}]}}},
    }))
    .unwrap();
    let rss = ResourceClient::<ReplicaSet>::namespaced(client.clone(), "default");
    rss.create(&PostParams::default(), &rs).await.unwrap();
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": "cache"},
        "spec": {"selector": {"app": "cache"}, "ports": [{"name": "redis", "port": 6379, "targetPort": "redis"}]},
    }))
    .unwrap();
    ResourceClient::<Service>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &service)
        .await
        .unwrap();
    let slices = ResourceClient::<EndpointSlice>::namespaced(client.clone(), "default");
    let ready_endpoints = |n: usize| {
        let slices = slices.clone();
        async move {
            let list = slices
                .list(&ListParams::default().labels("kubernetes.io/service-name=cache"))
                .await
                .ok()?;
            let slice = list.items.into_iter().next()?;
            let endpoints = slice.endpoints.clone().unwrap_or_default();
            let ready = endpoints
                .iter()
                .filter(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
                .count();
            (endpoints.len() == n && ready == n).then_some(slice)
        }
    };
    let slice = eventually("2 ready endpoints", || ready_endpoints(2)).await;
    assert_eq!(slice.address_type, "IPv4");
    let port = &slice.ports.unwrap()[0];
    assert_eq!(
        (port.name.as_deref(), port.port),
        (Some("redis"), Some(6379))
    );
    rss.patch(
        "cache",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await
    .unwrap();
    eventually("3 ready endpoints", || ready_endpoints(3)).await;
}
