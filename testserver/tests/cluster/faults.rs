//! Scripted kubelet faults on the cluster in a process (`PodFault`, the
//! `kubegen.io/fault` annotation): the container states, restart counts and pod phases
//! the kubelet reports (`pkg/kubelet/kuberuntime/kuberuntime_manager.go`,
//! `pkg/kubelet/images/image_manager.go`, `pkg/kubelet/kubelet_pods.go` `getPhase`), and
//! what the Deployment and Job controllers make of them.

use std::time::Duration;

use k8s_openapi::api::{
    apps::v1::Deployment,
    batch::v1::Job,
    core::v1::{ContainerStatus, Pod},
};
use kubegen::client::{
    Client, ResourceClient,
    params::{ListParams, PostParams},
};
use kubegen_testserver::{ClusterConfig, PodFault, PodFaultError, ServerError, TestServer};
use serde_json::json;

use crate::{
    common::{cluster, eventually},
    condition, deployment, pods_of,
};

/// The first container status of `pod`.
fn container(pod: &Pod) -> Option<ContainerStatus> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .first()
        .cloned()
}

/// The reason `pod`'s first container waits, if it does.
fn waiting_reason(pod: &Pod) -> Option<String> {
    container(pod)?.state?.waiting?.reason
}

fn pod_condition(pod: &Pod, type_: &str) -> Option<(String, Option<String>)> {
    pod.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone()))
}

async fn only_pod(client: &Client, app: &str) -> Option<Pod> {
    let mut pods = pods_of(client, app).await;
    (pods.len() == 1).then(|| pods.remove(0))
}

fn job_condition(job: &Job, type_: &str) -> Option<(String, Option<String>)> {
    job.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == type_ && c.status == "True")
        .map(|c| (c.status.clone(), c.reason.clone()))
}

/// A crash-looping Deployment pod: restarted at once after its first exit, then in
/// `CrashLoopBackOff` with the kubelet's back-off message, its last termination in
/// `lastState`, the pod `Running` but unready, and the Deployment not Available
/// (`kuberuntime_manager.go` `doBackOff`; `pkg/controller/deployment/sync.go`).
#[tokio::test]
async fn a_crash_looping_deployment_pod_backs_off_and_the_deployment_is_not_available() {
    let (_server, client) =
        cluster(ClusterConfig::default().pod_fault(PodFault::on_label("app=web").crash_loop()))
            .await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 1, "nginx"))
        .await
        .unwrap();
    let pod = eventually("restartCount >= 3 in CrashLoopBackOff", || async {
        let pod = only_pod(&client, "web").await?;
        let c = container(&pod)?;
        (c.restart_count >= 3 && waiting_reason(&pod).as_deref() == Some("CrashLoopBackOff"))
            .then_some(pod)
    })
    .await;
    let name = pod.metadata.name.clone().unwrap();
    let c = container(&pod).unwrap();
    let message = c.state.unwrap().waiting.unwrap().message.unwrap();
    let uid = pod.metadata.uid.clone().unwrap();
    assert_eq!(
        message,
        format!(
            "back-off {} restarting failed container=app pod={name}_default({uid})",
            match c.restart_count {
                3 => "40s",
                _ => "1m20s",
            }
        )
    );
    let last = c.last_state.unwrap().terminated.unwrap();
    assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));
    assert!(last.started_at.is_some() && last.finished_at.is_some());
    assert!(!c.ready);
    let status = pod.status.as_ref().unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert_eq!(
        pod_condition(&pod, "Ready"),
        Some(("False".into(), Some("ContainersNotReady".into())))
    );
    eventually("the Deployment not Available", || async {
        let d = deployments.get("web").await.ok()?;
        (condition(&d, "Available") == Some(("False", "MinimumReplicasUnavailable"))).then_some(())
    })
    .await;
}

/// An image no pull of which succeeds: `ErrImagePull` with the runtime's error, then
/// `ImagePullBackOff` ("Back-off pulling image ..."), the pod `Pending`
/// (`pkg/kubelet/images/image_manager.go`); once the fault is cleared, the next pull
/// succeeds and the pod runs.
#[tokio::test]
async fn an_image_pull_failure_backs_off_until_the_image_can_be_pulled() {
    let (server, client) = cluster(
        ClusterConfig::default().pod_fault(PodFault::on_image("nginx:nope").image_pull_failure()),
    )
    .await;
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "nope"},
        "spec": {"containers": [{"name": "c", "image": "nginx:nope"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let failed = eventually("ErrImagePull", || async {
        let p = pods.get("nope").await.ok()?;
        (waiting_reason(&p).as_deref() == Some("ErrImagePull")).then_some(p)
    })
    .await;
    let message = container(&failed)
        .unwrap()
        .state
        .unwrap()
        .waiting
        .unwrap()
        .message;
    assert_eq!(
        message.as_deref(),
        Some(
            "rpc error: code = NotFound desc = failed to pull and unpack image \
             \"docker.io/library/nginx:nope\": failed to resolve reference \
             \"docker.io/library/nginx:nope\": docker.io/library/nginx:nope: not found"
        )
    );
    let backing_off = eventually("ImagePullBackOff", || async {
        let p = pods.get("nope").await.ok()?;
        (waiting_reason(&p).as_deref() == Some("ImagePullBackOff")).then_some(p)
    })
    .await;
    let c = container(&backing_off).unwrap();
    assert_eq!(
        c.state.unwrap().waiting.unwrap().message.as_deref(),
        Some("Back-off pulling image \"nginx:nope\"")
    );
    assert_eq!((c.restart_count, c.ready), (0, false));
    assert_eq!(
        backing_off.status.unwrap().phase.as_deref(),
        Some("Pending")
    );
    server.clear_pod_faults();
    let running = eventually("running once the pull succeeds", || async {
        let p = pods.get("nope").await.ok()?;
        (p.status.as_ref()?.phase.as_deref() == Some("Running")).then_some(p)
    })
    .await;
    assert_eq!(
        pod_condition(&running, "Ready").map(|c| c.0).as_deref(),
        Some("True")
    );
}

/// A Job whose pods exit 3 under `restartPolicy: Never`: each pod `Failed` with the
/// container's exit code, and after `backoffLimit + 1` failed pods the Job is `Failed`
/// with `BackoffLimitExceeded` (`pkg/controller/job/job_controller.go`).
#[tokio::test]
async fn a_job_whose_pods_fail_exceeds_its_backoff_limit() {
    let (_server, client) = cluster(
        ClusterConfig::default()
            .pod_fault(PodFault::on_label("batch.kubernetes.io/job-name=boom").exit_code(3)),
    )
    .await;
    let jobs = ResourceClient::<Job>::namespaced(client.clone(), "default");
    let job: Job = serde_json::from_value(json!({
        "metadata": {"name": "boom"},
        "spec": {"backoffLimit": 2, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    let failed = eventually("Failed", || async {
        let j = jobs.get("boom").await.ok()?;
        job_condition(&j, "Failed").is_some().then_some(j)
    })
    .await;
    assert_eq!(
        job_condition(&failed, "Failed"),
        Some(("True".into(), Some("BackoffLimitExceeded".into())))
    );
    assert_eq!(failed.status.as_ref().unwrap().failed, Some(3));
    let pods = ResourceClient::<Pod>::namespaced(client, "default")
        .list(&ListParams::default().labels("batch.kubernetes.io/job-name=boom"))
        .await
        .unwrap()
        .items;
    assert_eq!(pods.len(), 3, "backoffLimit + 1 pods");
    for pod in &pods {
        assert_eq!(
            pod.status.as_ref().unwrap().phase.as_deref(),
            Some("Failed")
        );
        let terminated = container(pod).unwrap().state.unwrap().terminated.unwrap();
        assert_eq!(
            (terminated.exit_code, terminated.reason.as_deref()),
            (3, Some("Error"))
        );
    }
}

/// `restartPolicy: OnFailure`: the kubelet restarts the failing container in place, and
/// the Job controller counts the restarts against `backoffLimit`
/// (`job_controller.go` `pastBackoffLimitOnFailure`): one pod, `Failed` with
/// `BackoffLimitExceeded`, the pod deleted and counted as failed.
#[tokio::test]
async fn on_failure_container_restarts_count_against_the_backoff_limit() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let jobs = ResourceClient::<Job>::namespaced(client.clone(), "default");
    let job: Job = serde_json::from_value(json!({
        "metadata": {"name": "flaky"},
        "spec": {"backoffLimit": 2, "template": {
            "metadata": {"annotations": {"kubegen.io/fault": "exit-code=1"}},
            "spec": {"restartPolicy": "OnFailure",
                     "containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    let failed = eventually("Failed", || async {
        let j = jobs.get("flaky").await.ok()?;
        job_condition(&j, "Failed").is_some().then_some(j)
    })
    .await;
    assert_eq!(
        job_condition(&failed, "Failed")
            .and_then(|c| c.1)
            .as_deref(),
        Some("BackoffLimitExceeded")
    );
    let status = failed.status.unwrap();
    assert_eq!((status.failed, status.active), (Some(1), Some(0)));
    eventually("the pod deleted", || async {
        let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default")
            .list(&ListParams::default().labels("batch.kubernetes.io/job-name=flaky"))
            .await
            .ok()?;
        pods.items.is_empty().then_some(())
    })
    .await;
}

/// Pods that run and never become ready keep their Deployment from Available, and its
/// rollout runs into the progress deadline (`pkg/controller/deployment/progress.go`).
#[tokio::test]
async fn never_ready_pods_keep_their_deployment_unavailable() {
    let (_server, client) =
        cluster(ClusterConfig::default().pod_fault(PodFault::on_label("app=slow").never_ready()))
            .await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    let mut slow = deployment("slow", 2, "nginx");
    slow.spec.progress_deadline_seconds = Some(60);
    deployments
        .create(&PostParams::default(), &slow)
        .await
        .unwrap();
    let pods = eventually("two running, unready pods", || async {
        let pods = pods_of(&client, "slow").await;
        (pods.len() == 2
            && pods.iter().all(|p| {
                p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                    && container(p).is_some_and(|c| c.started == Some(true))
            }))
        .then_some(pods)
    })
    .await;
    for pod in &pods {
        assert!(!container(pod).unwrap().ready);
        assert_eq!(
            pod_condition(pod, "ContainersReady"),
            Some(("False".into(), Some("ContainersNotReady".into())))
        );
    }
    let d = eventually("the progress deadline", || async {
        let d = deployments.get("slow").await.ok()?;
        (condition(&d, "Progressing") == Some(("False", "ProgressDeadlineExceeded"))).then_some(d)
    })
    .await;
    assert_eq!(
        condition(&d, "Available"),
        Some(("False", "MinimumReplicasUnavailable"))
    );
    let status = d.status.unwrap();
    assert_eq!(status.ready_replicas.unwrap_or(0), 0);
    assert_eq!(status.available_replicas.unwrap_or(0), 0);
}

/// A fault added while the server runs takes effect on a running pod (its container
/// exits and crash-loops, its Deployment becomes unavailable); cleared, the container's
/// next restart runs for good and the Deployment is Available again.
#[tokio::test]
async fn a_fault_added_while_running_takes_effect() {
    let (server, client) = cluster(ClusterConfig::default()).await;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 1, "nginx"))
        .await
        .unwrap();
    let available = |wanted: &'static str| {
        let deployments = deployments.clone();
        async move {
            let d = deployments.get("web").await.ok()?;
            (condition(&d, "Available").map(|c| c.0) == Some(wanted)).then_some(())
        }
    };
    eventually("Available", || available("True")).await;
    server
        .add_pod_fault(PodFault::on_label("app=web").crash_loop())
        .unwrap();
    eventually("CrashLoopBackOff", || async {
        let pod = only_pod(&client, "web").await?;
        (waiting_reason(&pod).as_deref() == Some("CrashLoopBackOff")).then_some(())
    })
    .await;
    eventually("not Available", || available("False")).await;
    server.clear_pod_faults();
    eventually("Available again", || available("True")).await;
    let pod = only_pod(&client, "web").await.unwrap();
    let c = container(&pod).unwrap();
    assert!(c.ready && c.restart_count >= 2, "{c:?}");
    tokio::time::sleep(Duration::from_secs(600)).await;
    let later = container(&only_pod(&client, "web").await.unwrap()).unwrap();
    assert_eq!(later.restart_count, c.restart_count, "no more restarts");
}

/// The `kubegen.io/fault` annotation scripts a pod's own fault (`exit-code=N` under
/// `restartPolicy: Never` fails the pod with that code); an annotation that does not
/// parse is logged and the pod runs normally.
#[tokio::test]
async fn the_fault_annotation_scripts_a_pod_and_a_bad_one_is_ignored() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), "default");
    for (name, fault) in [("fails", "exit-code=2,after=5s"), ("garbled", "explode")] {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "annotations": {"kubegen.io/fault": fault}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
        }))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    let finished = |name: &'static str| {
        let pods = pods.clone();
        async move {
            let p = pods.get(name).await.ok()?;
            let phase = p.status.as_ref()?.phase.clone()?;
            matches!(phase.as_str(), "Succeeded" | "Failed").then_some((phase, p))
        }
    };
    let (phase, pod) = eventually("fails finished", || finished("fails")).await;
    assert_eq!(phase, "Failed");
    let terminated = container(&pod).unwrap().state.unwrap().terminated.unwrap();
    assert_eq!(terminated.exit_code, 2);
    let (Some(start), Some(end)) = (terminated.started_at, terminated.finished_at) else {
        panic!("startedAt and finishedAt");
    };
    assert_eq!(end.0.duration_since(start.0).as_secs(), 5, "after=5s");
    let (phase, _) = eventually("garbled finished", || finished("garbled")).await;
    assert_eq!(phase, "Succeeded");
}

/// A rule whose label selector does not parse is refused, at start and while running.
#[tokio::test]
async fn a_rule_with_a_bad_selector_is_refused() {
    let bad = || PodFault::on_label("app in (web").crash_loop();
    let refused = TestServer::builder()
        .cluster(ClusterConfig::default().pod_fault(bad()))
        .paused_clock()
        .start()
        .await;
    assert!(matches!(
        refused,
        Err(ServerError::PodFault(PodFaultError::Selector { .. }))
    ));
    let (server, _client) = cluster(ClusterConfig::default()).await;
    assert!(matches!(
        server.add_pod_fault(bad()),
        Err(PodFaultError::Selector { .. })
    ));
}
