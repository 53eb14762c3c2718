//! The events the cluster's controllers write, as `kubectl describe` shows them: the
//! Deployment controller's `ScalingReplicaSet` (`pkg/controller/deployment/sync.go`
//! `scaleReplicaSet`), the ReplicaSet controller's `SuccessfulCreate` / `SuccessfulDelete`
//! (`pkg/controller/controller_utils.go` `RealPodControl`), kube-scheduler's `Scheduled`
//! and `FailedScheduling` (`pkg/scheduler/schedule_one.go`), all stamped with the server's
//! clock.

use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{Event, Pod},
};
use kubegen::client::{
    Client, ResourceClient,
    params::{ListParams, Patch, PatchParams, PostParams},
};
use kubegen_testserver::ClusterConfig;
use serde_json::json;

use crate::{cluster, deployment, eventually, rolled_out};

/// The events about `kind`/`name`, oldest first, as `kubectl describe` selects them.
async fn events_of(client: &Client, kind: &str, name: &str) -> Vec<(String, String, String)> {
    let selector = format!("involvedObject.kind={kind},involvedObject.name={name}");
    let mut events = ResourceClient::<Event>::namespaced(client.clone(), "default")
        .list(&ListParams::default().fields(&selector))
        .await
        .unwrap()
        .items;
    events.sort_by_key(|e| e.metadata.name.clone());
    events
        .into_iter()
        .map(|e| {
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.message.unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_rollout_writes_the_events_kubectl_describe_shows() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 2, "nginx"))
        .await
        .unwrap();
    eventually("web rolled out", || async {
        deployments.get("web").await.ok().filter(rolled_out)
    })
    .await;
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    let events = eventually("scaled down", || async {
        let events = events_of(&client, "Deployment", "web").await;
        (events.len() == 2).then_some(events)
    })
    .await;
    let rs = events[0].2.split_whitespace().nth(4).unwrap().to_string();
    assert!(rs.starts_with("web-"), "{events:?}");
    assert_eq!(
        events,
        [
            (
                "Normal".into(),
                "ScalingReplicaSet".into(),
                format!("Scaled up replica set {rs} from 0 to 2")
            ),
            (
                "Normal".into(),
                "ScalingReplicaSet".into(),
                format!("Scaled down replica set {rs} from 2 to 1")
            ),
        ]
    );
    let rs_events = eventually("pod events", || async {
        let events = events_of(&client, "ReplicaSet", &rs).await;
        (events.len() == 3).then_some(events)
    })
    .await;
    let reasons: Vec<_> = rs_events.iter().map(|e| e.1.as_str()).collect();
    assert_eq!(
        reasons,
        ["SuccessfulCreate", "SuccessfulCreate", "SuccessfulDelete"]
    );
    assert!(rs_events[0].2.starts_with(&format!("Created pod: {rs}-")));
    let pod = ResourceClient::<Pod>::namespaced(client.clone(), "default")
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|p| p.metadata.deletion_timestamp.is_none())
        .unwrap();
    let name = pod.metadata.name.unwrap();
    let node = pod.spec.unwrap().node_name.unwrap();
    assert_eq!(
        events_of(&client, "Pod", &name).await,
        [(
            "Normal".into(),
            "Scheduled".into(),
            format!("Successfully assigned default/{name} to {node}")
        )]
    );
}

#[tokio::test]
async fn an_unschedulable_pod_gets_a_failed_scheduling_warning() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "huge"},
        "spec": {"containers": [{"name": "c", "image": "busybox",
                 "resources": {"requests": {"cpu": "64"}}}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let events = eventually("FailedScheduling", || async {
        let events = events_of(&client, "Pod", "huge").await;
        (!events.is_empty()).then_some(events)
    })
    .await;
    assert_eq!(events[0].0, "Warning");
    assert_eq!(events[0].1, "FailedScheduling");
    assert_eq!(events[0].2, "0/3 nodes are available: 3 Insufficient cpu.");
}

/// The Job controller's events (`pkg/controller/job/job_controller.go`): a pod created,
/// then "Completed" / "Job completed".
#[tokio::test]
async fn a_job_writes_created_and_completed_events() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let job: k8s_openapi::api::batch::v1::Job = serde_json::from_value(json!({
        "metadata": {"name": "once"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    ResourceClient::<k8s_openapi::api::batch::v1::Job>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &job)
        .await
        .unwrap();
    let events = eventually("Completed", || async {
        let events = events_of(&client, "Job", "once").await;
        events.iter().any(|e| e.1 == "Completed").then_some(events)
    })
    .await;
    let reasons: Vec<_> = events
        .iter()
        .map(|e| (e.1.as_str(), e.2.as_str()))
        .collect();
    assert_eq!(reasons.len(), 2, "{events:?}");
    assert_eq!(reasons[0].0, "SuccessfulCreate");
    assert!(reasons[0].1.starts_with("Created pod: once-"));
    assert_eq!(reasons[1], ("Completed", "Job completed"));
}
