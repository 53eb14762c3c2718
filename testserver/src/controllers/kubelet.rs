//! The kubelets of the simulated nodes (`pkg/kubelet/kubelet.go` `syncPod`,
//! `pkg/kubelet/status/status_manager.go`), as one controller over every pod bound to a
//! node the cluster registered (a node whose `providerID` is `kubegen://<name>`). Pods
//! bound to any other node are left alone, as no kubelet runs there.
//!
//! Containers are simulated: they start after the cluster's pod start latency, become
//! ready at once (no probes run), and either run until deleted (`restartPolicy: Always`)
//! or exit 0 after the cluster's pod run time (`Never` and `OnFailure`, as a Job's pods).
//!
//! The sync loop, one pod at a time:
//!
//! 1. Not on one of our nodes, or finished (`Succeeded`, `Failed`): done.
//! 2. Being deleted: the containers stop at once on SIGTERM, so the kubelet finishes the
//!    graceful deletion by deleting the pod with grace period 0 (and the pod's uid as a
//!    precondition, so a new pod of the same name is never touched).
//! 3. First seen (`status.startTime` unset): admitted. `startTime`, `hostIP`, a `podIP`
//!    from the node's pod CIDR, conditions `PodReadyToStartContainers`, `Initialized`,
//!    `Ready=False` and `ContainersReady=False` (`ContainersNotReady`), containers waiting
//!    in `ContainerCreating`. Phase `Pending`.
//! 4. Start latency elapsed: containers running (`startedAt`, `imageID`,
//!    `containerID`, `started`, `ready`), `Ready` and `ContainersReady` True, phase
//!    `Running`.
//!    A running pod found not ready (the node lifecycle controller marks the pods of a
//!    silent node so) is ready again.
//! 5. A run-to-completion pod whose run time has elapsed: containers terminated with exit
//!    code 0 (`Completed`), `Ready=False` (`PodCompleted`), phase `Succeeded`.
//! 6. `activeDeadlineSeconds` passed since `startTime`: phase `Failed`, reason
//!    `DeadlineExceeded` (`pkg/kubelet/active_deadline.go`).
//!
//! Each step that waits requeues the pod for the moment its next step is due, on the
//! server's clock.

use std::{
    collections::BTreeMap,
    hash::{Hash, Hasher},
    sync::Arc,
    time::Duration,
};

use k8s_openapi::{
    api::core::v1::{
        ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
        ContainerStatus, HostIP, Node, Pod, PodIP, PodStatus,
    },
    apimachinery::pkg::apis::meta::v1::Time,
};
use kubegen::{
    cache::Lister,
    client::{
        Error, ResourceClient,
        params::{DeleteParams, PostParams, Preconditions},
    },
    controller::{Action, Controller, ControllerError, Request},
};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::{config::Cluster, pods};

/// The `providerID` prefix of the nodes the cluster simulates.
pub(crate) const PROVIDER_PREFIX: &str = "kubegen://";

struct Context {
    cluster: Arc<Cluster>,
    nodes: Lister<Node>,
    /// The next host part of a pod IP, per node.
    next_ip: Mutex<BTreeMap<String, u32>>,
}

/// Runs the kubelets until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let nodes = cluster.factory.lister_for::<Node>();
    let pods = cluster.factory.lister_for::<Pod>();
    let controller = Controller::<Pod>::builder(&cluster.factory)
        .named("kubelet")
        .with_event_filter(kubegen::controller::predicate::from_fn(|p: &Pod| {
            !node_name(p).is_empty()
        }))
        // A node's change (and its cache's first sync) brings back the pods bound to it.
        .watches::<Node>(move |node| {
            let name = node.metadata.name.as_deref().unwrap_or_default();
            let mut requests: Vec<Request> = pods
                .list(&kube_core::Selector::default())
                .iter()
                .filter(|p| node_name(p) == name)
                .filter_map(|p| Request::for_object(p.as_ref()))
                .collect();
            requests.sort_by_key(Request::cache_key);
            requests
        })
        .max_concurrent_reconciles(4)
        .build();
    let cx = Arc::new(Context {
        cluster,
        nodes,
        next_ip: Mutex::new(BTreeMap::new()),
    });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

async fn reconcile(pod: Arc<Pod>, cx: Arc<Context>) -> Result<Action, Error> {
    let Ok(node) = cx.nodes.get(node_name(&pod)) else {
        return Ok(Action::done());
    };
    let ours = node
        .spec
        .as_ref()
        .and_then(|s| s.provider_id.as_deref())
        .is_some_and(|p| p.starts_with(PROVIDER_PREFIX));
    // A stopped kubelet does nothing; its start brings the node's pods back.
    if !ours || cx.cluster.kubelet_stopped(node_name(&pod)) {
        return Ok(Action::done());
    }
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let client: ResourceClient<Pod> =
        ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
    if pod.metadata.deletion_timestamp.is_some() {
        return finish_deletion(&client, &pod).await;
    }
    if pods::is_terminal(&pod) {
        return Ok(Action::done());
    }
    let now = crate::clock::now();
    let config = &cx.cluster.config;
    let mut status = pod.status.clone().unwrap_or_default();
    let next = match step(&pod, &mut status, &node, now, config, &cx.next_ip) {
        Step::Wait(d) => return Ok(Action::requeue_after(d)),
        Step::Write(next) => next,
    };
    let mut updated = (*pod).clone();
    updated.status = Some(status);
    match client.update_status(&PostParams::default(), &updated).await {
        Ok(_) => {}
        // A newer pod is on its way; its event brings the pod back.
        Err(e) if e.is_conflict() || e.is_not_found() => return Ok(Action::done()),
        Err(e) => return Err(e),
    }
    Ok(next.map_or_else(Action::done, Action::requeue_after))
}

async fn finish_deletion(client: &ResourceClient<Pod>, pod: &Pod) -> Result<Action, Error> {
    let params = DeleteParams {
        grace_period_seconds: Some(0),
        preconditions: Some(Preconditions {
            uid: pod.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match client
        .delete(pod.metadata.name.as_deref().unwrap_or_default(), &params)
        .await
    {
        Ok(_) => Ok(Action::done()),
        Err(e) if e.is_not_found() || e.is_conflict() => Ok(Action::done()),
        Err(e) => Err(e),
    }
}

/// What one sync decided.
enum Step {
    /// Nothing to write yet: look again after this long.
    Wait(Duration),
    /// Write the status; then look again after this long, if anything is still due.
    Write(Option<Duration>),
}

/// How long from `since` until `after` has passed, at `now` (zero when it has).
fn remaining(since: Option<&Time>, after: Duration, now: jiff::Timestamp) -> Duration {
    let Some(Time(since)) = since else {
        return Duration::ZERO;
    };
    let due = since.checked_add(after).unwrap_or(*since);
    if due <= now {
        Duration::ZERO
    } else {
        Duration::try_from(due.duration_since(now)).unwrap_or(Duration::ZERO)
    }
}

/// Advances `status` by the steps that are due at `now` (the numbered steps of the module
/// docs, 3 to 6).
fn step(
    pod: &Pod,
    status: &mut PodStatus,
    node: &Node,
    now: jiff::Timestamp,
    config: &super::config::ClusterConfig,
    next_ip: &Mutex<BTreeMap<String, u32>>,
) -> Step {
    let spec = pod.spec.clone().unwrap_or_default();
    let runs_to_completion = spec.restart_policy.as_deref().unwrap_or("Always") != "Always";
    let mut changed = false;
    if status.start_time.is_none() {
        admit(pod, status, node, now, next_ip);
        changed = true;
    }
    let deadline = spec
        .active_deadline_seconds
        .and_then(|s| u64::try_from(s).ok())
        .map(|s| remaining(status.start_time.as_ref(), Duration::from_secs(s), now));
    if deadline == Some(Duration::ZERO) {
        fail_deadline(pod, status, now);
        return Step::Write(None);
    }
    let pending = status.phase.as_deref() != Some("Running");
    let mut wait = None;
    if pending {
        let left = remaining(status.start_time.as_ref(), config.pod_start_latency, now);
        if left.is_zero() {
            start_containers(pod, status, now);
            changed = true;
        } else {
            wait = Some(left);
        }
    }
    // Running, but marked not ready while this kubelet was away (the node lifecycle
    // controller's `MarkPodsNotReady`): its containers are ready, so the pod is again.
    if !pending && !pods::is_ready(pod) && status.phase.as_deref() == Some("Running") {
        let conditions = status.conditions.get_or_insert_with(Vec::new);
        pods::set_condition(conditions, "Ready", "True", None, None);
        pods::set_condition(conditions, "ContainersReady", "True", None, None);
        changed = true;
    }
    if wait.is_none() && runs_to_completion {
        let started = status
            .container_statuses
            .as_deref()
            .unwrap_or_default()
            .iter()
            .find_map(|c| c.state.as_ref()?.running.as_ref()?.started_at.clone());
        let left = remaining(started.as_ref(), config.pod_run_time, now);
        if left.is_zero() {
            complete(status, now);
            return Step::Write(None);
        }
        wait = Some(left);
    }
    let wait = match (wait, deadline) {
        (Some(w), Some(d)) => Some(w.min(d)),
        (w, d) => w.or(d),
    };
    match (changed, wait) {
        (true, next) => Step::Write(next),
        (false, Some(w)) => Step::Wait(w),
        (false, None) => Step::Write(None),
    }
}

/// Step 3: the pod is admitted to the node.
fn admit(
    pod: &Pod,
    status: &mut PodStatus,
    node: &Node,
    now: jiff::Timestamp,
    next_ip: &Mutex<BTreeMap<String, u32>>,
) {
    let host_ip = node
        .status
        .as_ref()
        .and_then(|s| s.addresses.as_deref())
        .and_then(|a| a.iter().find(|a| a.type_ == "InternalIP"))
        .map(|a| a.address.clone())
        .unwrap_or_default();
    let node_name = node.metadata.name.clone().unwrap_or_default();
    let cidr = node
        .spec
        .as_ref()
        .and_then(|s| s.pod_cidr.clone())
        .unwrap_or_else(|| "10.244.0.0/24".into());
    let prefix = cidr
        .split('/')
        .next()
        .and_then(|a| a.rsplit_once('.'))
        .map(|(p, _)| p.to_string())
        .unwrap_or_else(|| "10.244.0".into());
    let host = {
        let mut next = next_ip.lock();
        let n = next.entry(node_name).or_insert(2);
        let host = *n;
        *n = if *n >= 254 { 2 } else { *n + 1 };
        host
    };
    let pod_ip = format!("{prefix}.{host}");
    status.start_time = Some(Time(now));
    status.phase = Some("Pending".into());
    status.host_ip = Some(host_ip.clone());
    status.host_ips = Some(vec![HostIP { ip: host_ip }]);
    status.pod_ip = Some(pod_ip.clone());
    status.pod_ips = Some(vec![PodIP { ip: pod_ip }]);
    status.qos_class = Some(qos_class(pod).into());
    let names = container_names(pod);
    let unready = format!("containers with unready status: [{}]", names.join(" "));
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    pods::set_condition(conditions, "PodReadyToStartContainers", "True", None, None);
    pods::set_condition(conditions, "Initialized", "True", None, None);
    pods::set_condition(
        conditions,
        "Ready",
        "False",
        Some("ContainersNotReady"),
        Some(&unready),
    );
    pods::set_condition(
        conditions,
        "ContainersReady",
        "False",
        Some("ContainersNotReady"),
        Some(&unready),
    );
    status.container_statuses = Some(
        pod.spec
            .iter()
            .flat_map(|s| &s.containers)
            .map(|c| ContainerStatus {
                name: c.name.clone(),
                image: normalize_image(c.image.as_deref().unwrap_or_default()),
                image_id: String::new(),
                ready: false,
                started: Some(false),
                restart_count: 0,
                state: Some(ContainerState {
                    waiting: Some(ContainerStateWaiting {
                        reason: Some("ContainerCreating".into()),
                        message: None,
                    }),
                    ..ContainerState::default()
                }),
                ..ContainerStatus::default()
            })
            .collect(),
    );
}

/// Step 4: the containers run.
fn start_containers(pod: &Pod, status: &mut PodStatus, now: jiff::Timestamp) {
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    status.phase = Some("Running".into());
    for c in status.container_statuses.iter_mut().flatten() {
        c.image_id = image_id(&c.image);
        c.container_id = Some(format!("containerd://{}", digest(&(&uid, &c.name))));
        c.ready = true;
        c.started = Some(true);
        c.state = Some(ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(Time(now)),
            }),
            ..ContainerState::default()
        });
    }
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    pods::set_condition(conditions, "Ready", "True", None, None);
    pods::set_condition(conditions, "ContainersReady", "True", None, None);
}

/// Step 5: the containers exited 0.
fn complete(status: &mut PodStatus, now: jiff::Timestamp) {
    terminate(status, now, 0, "Completed");
    status.phase = Some("Succeeded".into());
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    pods::set_condition(conditions, "PodReadyToStartContainers", "False", None, None);
    pods::set_condition(conditions, "Ready", "False", Some("PodCompleted"), None);
    pods::set_condition(
        conditions,
        "ContainersReady",
        "False",
        Some("PodCompleted"),
        None,
    );
}

/// Step 6: the pod outlived `activeDeadlineSeconds`.
fn fail_deadline(pod: &Pod, status: &mut PodStatus, now: jiff::Timestamp) {
    terminate(status, now, 137, "Error");
    status.phase = Some("Failed".into());
    status.reason = Some("DeadlineExceeded".into());
    status.message = Some("Pod was active on the node longer than the specified deadline".into());
    let names = container_names(pod);
    let unready = format!("containers with unready status: [{}]", names.join(" "));
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    pods::set_condition(conditions, "Ready", "False", Some("PodFailed"), None);
    pods::set_condition(
        conditions,
        "ContainersReady",
        "False",
        Some("ContainersNotReady"),
        Some(&unready),
    );
}

fn terminate(status: &mut PodStatus, now: jiff::Timestamp, exit_code: i32, reason: &str) {
    for c in status.container_statuses.iter_mut().flatten() {
        let started_at = c
            .state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .and_then(|r| r.started_at.clone());
        c.ready = false;
        c.started = Some(false);
        c.state = Some(ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code,
                reason: Some(reason.into()),
                started_at,
                finished_at: Some(Time(now)),
                container_id: c.container_id.clone(),
                ..ContainerStateTerminated::default()
            }),
            ..ContainerState::default()
        });
    }
}

fn container_names(pod: &Pod) -> Vec<String> {
    pod.spec
        .iter()
        .flat_map(|s| &s.containers)
        .map(|c| c.name.clone())
        .collect()
}

/// `v1qos.GetPodQOS`: `Guaranteed` when every container's limits equal its requests for
/// CPU and memory, `BestEffort` when none asks for anything, `Burstable` otherwise.
fn qos_class(pod: &Pod) -> &'static str {
    let containers: Vec<_> = pod.spec.iter().flat_map(|s| &s.containers).collect();
    let asks = |c: &&k8s_openapi::api::core::v1::Container| {
        c.resources.as_ref().is_some_and(|r| {
            r.requests.as_ref().is_some_and(|m| !m.is_empty())
                || r.limits.as_ref().is_some_and(|m| !m.is_empty())
        })
    };
    if !containers.iter().any(asks) {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let Some(r) = &c.resources else {
            return false;
        };
        let limits = r.limits.clone().unwrap_or_default();
        let requests = r.requests.clone().unwrap_or_else(|| limits.clone());
        ["cpu", "memory"]
            .iter()
            .all(|k| limits.contains_key(*k) && limits.get(*k) == requests.get(*k))
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// An image reference as the container runtime reports it: `nginx` is
/// `docker.io/library/nginx:latest`.
fn normalize_image(image: &str) -> String {
    let first = image.split('/').next().unwrap_or_default();
    let has_registry =
        image.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let full = if has_registry {
        image.to_string()
    } else if image.contains('/') {
        format!("docker.io/{image}")
    } else {
        format!("docker.io/library/{image}")
    };
    let last = full.rsplit('/').next().unwrap_or_default();
    if last.contains(':') || last.contains('@') {
        full
    } else {
        format!("{full}:latest")
    }
}

/// A stable fake digest of `image` (`<repository>@sha256:<64 hex>`).
fn image_id(image: &str) -> String {
    let repository = image
        .rsplit_once(':')
        .filter(|(_, tag)| !tag.contains('/'))
        .map_or(image, |(r, _)| r);
    format!("{repository}@sha256:{}", digest(&image))
}

/// 64 hex characters derived from `value` (not a real SHA-256: a stable stand-in for the
/// digests and container ids a runtime reports).
fn digest(value: &impl Hash) -> String {
    (0u64..4)
        .map(|round| {
            let mut hasher = std::hash::DefaultHasher::new();
            (round, value).hash(&mut hasher);
            format!("{:016x}", hasher.finish())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_reported_as_the_runtime_names_them() {
        assert_eq!(normalize_image("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(
            normalize_image("nginx:1.27"),
            "docker.io/library/nginx:1.27"
        );
        assert_eq!(
            normalize_image("bitnami/redis"),
            "docker.io/bitnami/redis:latest"
        );
        assert_eq!(
            normalize_image("registry.k8s.io/pause:3.10"),
            "registry.k8s.io/pause:3.10"
        );
        assert_eq!(
            normalize_image("localhost:5000/app"),
            "localhost:5000/app:latest"
        );
        let id = image_id("docker.io/library/nginx:1.27");
        assert!(id.starts_with("docker.io/library/nginx@sha256:"), "{id}");
        assert_eq!(id.len(), "docker.io/library/nginx@sha256:".len() + 64);
        assert_eq!(digest(&"x"), digest(&"x"));
    }

    fn pod(restart_policy: &str, deadline: Option<i64>) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "default", "uid": "u"},
            "spec": {"nodeName": "node-1", "restartPolicy": restart_policy,
                     "activeDeadlineSeconds": deadline,
                     "containers": [{"name": "c", "image": "nginx"}]},
        }))
        .unwrap_or_default()
    }

    fn node() -> Node {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "node-1"},
            "spec": {"podCIDR": "10.244.1.0/24", "providerID": "kubegen://node-1"},
            "status": super::super::nodes::status(1),
        }))
        .unwrap_or_default()
    }

    fn after(t: jiff::Timestamp, d: Duration) -> jiff::Timestamp {
        t.checked_add(d).unwrap_or(t)
    }

    #[test]
    fn a_pod_is_admitted_started_and_a_job_pod_completes() {
        let config = super::super::config::ClusterConfig::default()
            .pod_start_latency(Duration::from_secs(1))
            .pod_run_time(Duration::from_secs(5));
        let ips = Mutex::new(BTreeMap::new());
        let p = pod("Never", None);
        let mut status = PodStatus::default();
        let t0 = crate::clock::now();
        assert!(matches!(
            step(&p, &mut status, &node(), t0, &config, &ips),
            Step::Write(Some(d)) if d <= Duration::from_secs(1)
        ));
        assert_eq!(status.phase.as_deref(), Some("Pending"));
        assert_eq!(status.pod_ip.as_deref(), Some("10.244.1.2"));
        assert_eq!(status.host_ip.as_deref(), Some("10.0.0.2"));
        assert_eq!(status.qos_class.as_deref(), Some("BestEffort"));
        let t1 = after(t0, Duration::from_secs(2));
        assert!(matches!(
            step(&p, &mut status, &node(), t1, &config, &ips),
            Step::Write(Some(d)) if d == Duration::from_secs(5)
        ));
        assert_eq!(status.phase.as_deref(), Some("Running"));
        let c = &status.container_statuses.clone().unwrap_or_default()[0];
        assert!(c.ready && c.started == Some(true));
        assert_eq!(c.image, "docker.io/library/nginx:latest");
        let t2 = after(t1, Duration::from_secs(5));
        assert!(matches!(
            step(&p, &mut status, &node(), t2, &config, &ips),
            Step::Write(None)
        ));
        assert_eq!(status.phase.as_deref(), Some("Succeeded"));
        let c = &status.container_statuses.clone().unwrap_or_default()[0];
        let terminated = c.state.as_ref().and_then(|s| s.terminated.clone());
        assert_eq!(
            terminated.map(|t| (t.exit_code, t.reason)),
            Some((0, Some("Completed".into())))
        );
    }

    #[test]
    fn a_server_pod_runs_until_deleted_and_a_deadline_fails_it() {
        let config =
            super::super::config::ClusterConfig::default().pod_start_latency(Duration::ZERO);
        let ips = Mutex::new(BTreeMap::new());
        let mut status = PodStatus::default();
        let t0 = crate::clock::now();
        let web = pod("Always", None);
        assert!(matches!(
            step(&web, &mut status, &node(), t0, &config, &ips),
            Step::Write(None)
        ));
        assert_eq!(status.phase.as_deref(), Some("Running"));
        let mut status = PodStatus::default();
        let bounded = pod("Always", Some(30));
        assert!(matches!(
            step(&bounded, &mut status, &node(), t0, &config, &ips),
            Step::Write(Some(d)) if d == Duration::from_secs(30)
        ));
        assert_eq!(status.pod_ip.as_deref(), Some("10.244.1.3"));
        let late = after(t0, Duration::from_secs(31));
        assert!(matches!(
            step(&bounded, &mut status, &node(), late, &config, &ips),
            Step::Write(None)
        ));
        assert_eq!(status.phase.as_deref(), Some("Failed"));
        assert_eq!(status.reason.as_deref(), Some("DeadlineExceeded"));
    }
}
