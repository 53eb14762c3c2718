//! The kubelets of the simulated nodes (`pkg/kubelet/kubelet.go` `syncPod`,
//! `pkg/kubelet/status/status_manager.go`), as one controller over every pod bound to a
//! node the cluster registered (a node whose `providerID` is `kubegen://<name>`). Pods
//! bound to any other node are left alone, as no kubelet runs there.
//!
//! Containers are simulated: they start after the cluster's pod start latency, become
//! ready at once (no probes run), and either run until deleted (`restartPolicy: Always`)
//! or exit 0 after the cluster's pod run time (`Never` and `OnFailure`, as a Job's pods),
//! unless a scripted fault (`faults.rs`: a rule, or the pod's `kubegen.io/fault`
//! annotation) says otherwise: the image pull fails, the container exits with a code
//! after a while, or it never becomes ready. Each container then goes through the states
//! the real kubelet reports (`pkg/kubelet/kuberuntime/kuberuntime_container.go`,
//! `kuberuntime_manager.go` `computePodActions` / `doBackOff`,
//! `pkg/kubelet/images/image_manager.go` `EnsureImageExists`), and the pod's phase and
//! conditions follow from its containers (`pkg/kubelet/kubelet_pods.go` `getPhase`,
//! `pkg/kubelet/status/generate.go`).
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
//! 4. `activeDeadlineSeconds` passed since `startTime`: containers terminated (137,
//!    `Error`), phase `Failed`, reason `DeadlineExceeded` (`pkg/kubelet/active_deadline.go`).
//! 5. Each container takes the step that is due for it:
//!    1. `ContainerCreating`, once the start latency has passed since `startTime`: started
//!       (below).
//!    2. Starting a container: if its image pull fails, waiting `ErrImagePull` with the
//!       runtime's error, and the pull backs off (10 s, doubled per failure up to 5 min,
//!       kept in memory per pod uid and image as the kubelet's `imagePuller.backOff`);
//!       otherwise running (`startedAt`, `imageID`, a new `containerID`, `started`, `ready`
//!       unless it never becomes ready). A container that ran before is a restart:
//!       `restartCount` + 1, its last termination in `lastState`.
//!    3. `ErrImagePull`, one re-list later (1 s, `plegRelistPeriod`): waiting
//!       `ImagePullBackOff` ("Back-off pulling image ..."); once the pull back-off has
//!       passed: started again (2).
//!    4. Running, at `startedAt` + its run time if it exits: terminated with its exit code
//!       (`Completed` for 0, `Error` otherwise), `startedAt`, `finishedAt`, not ready. A
//!       running container's `ready` follows its fault (a never-ready fault added later
//!       turns it unready).
//!    5. Terminated, when `restartPolicy` restarts it (`Always`; `OnFailure` for a non-zero
//!       exit; never under `Never`), one re-list later: restarted at once (2) after its
//!       first exit; after later exits it waits `CrashLoopBackOff` ("back-off 10s
//!       restarting failed container=... pod=..."), the back-off 10 s doubled per restart
//!       up to 5 min, counted from `finishedAt` (`doBackOff`).
//!    6. `CrashLoopBackOff`, once its back-off has passed since `lastState`'s `finishedAt`:
//!       restarted (2).
//! 6. The pod follows its containers: the phase as `getPhase` computes it (`Pending` while
//!    one waits without having run, `Running` while one runs or restarts, `Succeeded` /
//!    `Failed` once all have exited for good), `ContainersReady` and `Ready` True when
//!    every container is ready, else False (`ContainersNotReady`, listing the unready
//!    containers; `PodCompleted` / `PodFailed` once the pod has finished).
//!
//! Each step that waits requeues the pod for the moment its next step is due, on the
//! server's clock; a change of the fault rules brings back every pod.

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

use super::{
    config::Cluster,
    faults::{FaultAction, normalize_image},
    pods,
};

/// The `providerID` prefix of the nodes the cluster simulates.
pub(crate) const PROVIDER_PREFIX: &str = "kubegen://";

/// How long after a container exits or an image pull fails the kubelet reports its next
/// step (`plegRelistPeriod`).
const RELIST: Duration = Duration::from_secs(1);

/// The first back-off of a crashing container and of a failing image pull
/// (`backOffPeriod`).
const BACKOFF: Duration = Duration::from_secs(10);

/// The longest back-off (`MaxContainerBackOff`).
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// What a kubelet keeps in memory, as the real one does: the pod IPs it handed out and
/// its image pull back-offs.
#[derive(Debug, Default)]
struct Kubelet {
    /// The next host part of a pod IP, per node.
    next_ip: Mutex<BTreeMap<String, u32>>,
    /// The image pull back-off per `<pod uid>_<image>` (`imagePuller.backOff`).
    pulls: Mutex<BTreeMap<String, PullBackOff>>,
}

/// A failing image pull's back-off entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PullBackOff {
    /// How many pulls failed in a row.
    failures: u32,
    /// When the last one failed.
    last: jiff::Timestamp,
}

struct Context {
    cluster: Arc<Cluster>,
    nodes: Lister<Node>,
    kubelet: Kubelet,
}

/// Runs the kubelets until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let nodes = cluster.factory.lister_for::<Node>();
    let pods = cluster.factory.lister_for::<Pod>();
    let on_node = {
        let pods = pods.clone();
        // The pods bound to `name` (the pod cache's node index), or to any node.
        move |name: &str| -> Vec<Request> {
            let bound = if name.is_empty() {
                pods.list(&kube_core::Selector::default())
                    .into_iter()
                    .filter(|p| !node_name(p).is_empty())
                    .collect()
            } else {
                pods::on_node(&pods, name)
            };
            let mut requests: Vec<Request> = bound
                .iter()
                .filter_map(|p| Request::for_object(p.as_ref()))
                .collect();
            requests.sort_by_key(Request::cache_key);
            requests
        }
    };
    let for_node = on_node.clone();
    let controller = Controller::<Pod>::builder(&cluster.factory)
        .named("kubelet")
        .with_event_filter(kubegen::controller::predicate::from_fn(|p: &Pod| {
            !node_name(p).is_empty()
        }))
        // A node's change (and its cache's first sync) brings back the pods bound to it.
        .watches::<Node>(move |node| {
            let name = node.metadata.name.as_deref().unwrap_or_default();
            if name.is_empty() {
                return Vec::new();
            }
            for_node(name)
        })
        .max_concurrent_reconciles(4)
        .build();
    // A change of the fault rules brings back every bound pod.
    let queue = controller.queue().clone();
    let faults = cluster.faults.clone();
    let resync_stop = stop.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = resync_stop.cancelled() => return,
                () = faults.changed() => {
                    for request in on_node("") {
                        queue.add(request);
                    }
                }
            }
        }
    });
    let cx = Arc::new(Context {
        cluster,
        nodes,
        kubelet: Kubelet::default(),
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
        cx.kubelet.forget(&pod);
        return finish_deletion(&client, &pod).await;
    }
    if pods::is_terminal(&pod) {
        cx.kubelet.forget(&pod);
        return Ok(Action::done());
    }
    let now = crate::clock::now();
    let config = &cx.cluster.config;
    let (actions, bad_annotation) = cx.cluster.faults.actions(&pod);
    if let Some(err) = bad_annotation {
        tracing::warn!(
            pod = %format_pod(&pod),
            %err,
            "ignoring the pod's fault annotation"
        );
    }
    let behaviours = behaviours(&pod, &actions, config.pod_run_time);
    let mut status = pod.status.clone().unwrap_or_default();
    let next = match cx.kubelet.step(
        &pod,
        &mut status,
        &node,
        now,
        config.pod_start_latency,
        &behaviours,
    ) {
        Step::Idle => return Ok(Action::done()),
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

/// How one container behaves, as the restart policy and its fault make it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Behaviour {
    /// Every pull of its image fails.
    pull_fails: bool,
    /// It exits with this code after running this long (`None`: it runs until deleted).
    exit: Option<(i32, Duration)>,
    /// It becomes ready once running.
    ready: bool,
}

/// The behaviour of each container of `pod` (in `spec.containers` order) under
/// `actions`, the faults that select them: without a fault a container runs until deleted
/// under `restartPolicy: Always` and exits 0 after `run_time` otherwise.
fn behaviours(pod: &Pod, actions: &[Option<FaultAction>], run_time: Duration) -> Vec<Behaviour> {
    let spec = pod.spec.as_ref();
    let runs_to_completion = spec
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or("Always")
        != "Always";
    let healthy = Behaviour {
        pull_fails: false,
        exit: runs_to_completion.then_some((0, run_time)),
        ready: true,
    };
    let count = spec.map_or(0, |s| s.containers.len());
    (0..count)
        .map(|i| match actions.get(i).copied().flatten() {
            None => healthy,
            Some(FaultAction::ImagePull) => Behaviour {
                pull_fails: true,
                ..healthy
            },
            Some(FaultAction::NeverReady) => Behaviour {
                ready: false,
                ..healthy
            },
            Some(FaultAction::Exit { code, after }) => Behaviour {
                exit: Some((code, after.unwrap_or(run_time))),
                ..healthy
            },
        })
        .collect()
}

/// What one sync decided.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Nothing to write and nothing due.
    Idle,
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
    until(since.checked_add(after).unwrap_or(*since), now)
}

/// How long from `now` until `due` (zero when it has passed).
fn until(due: jiff::Timestamp, now: jiff::Timestamp) -> Duration {
    if due <= now {
        Duration::ZERO
    } else {
        Duration::try_from(due.duration_since(now)).unwrap_or(Duration::ZERO)
    }
}

/// The earlier of two optional wake-ups.
fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The back-off after `n` failures (`flowcontrol.Backoff`): 10 s, doubled per further
/// failure, at most 5 minutes; none before the first.
fn back_off(n: u32) -> Duration {
    if n == 0 {
        return Duration::ZERO;
    }
    BACKOFF
        .saturating_mul(1 << (n - 1).min(16))
        .min(MAX_BACKOFF)
}

/// The crash back-off of a container that exited after `restart_count` restarts
/// (`doBackOff`): none after its first exit (the kubelet's back-off entry is created
/// then), then 10 s doubled per restart up to 5 minutes.
fn crash_back_off(restart_count: i32) -> Duration {
    back_off(u32::try_from(restart_count).unwrap_or(0))
}

/// Whether `restart_policy` restarts a container that exited with `exit_code`
/// (`kubecontainer.ShouldContainerBeRestarted`).
fn restarts(restart_policy: &str, exit_code: i32) -> bool {
    match restart_policy {
        "Never" => false,
        "OnFailure" => exit_code != 0,
        _ => true,
    }
}

/// `format.Pod`: `name_namespace(uid)`.
fn format_pod(pod: &Pod) -> String {
    format!(
        "{}_{}({})",
        pod.metadata.name.as_deref().unwrap_or_default(),
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.uid.as_deref().unwrap_or_default()
    )
}

/// A whole-second duration as Go's `time.Duration.String` prints it (`10s`, `1m20s`,
/// `5m0s`).
fn go_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match (secs / 3600, secs % 3600 / 60, secs % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, m, s) => format!("{h}h{m}m{s}s"),
    }
}

/// `getPhase` (`pkg/kubelet/kubelet_pods.go`) for a pod without init containers that is
/// not terminal yet: from its containers' states and its restart policy.
fn get_phase(
    restart_policy: &str,
    containers: &[ContainerStatus],
    expected: usize,
) -> &'static str {
    let (mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0);
    let unknown = expected.saturating_sub(containers.len());
    for c in containers {
        let state = c.state.clone().unwrap_or_default();
        if state.running.is_some() {
            running += 1;
        } else if let Some(t) = &state.terminated {
            stopped += 1;
            if t.exit_code == 0 {
                succeeded += 1;
            }
        } else if c
            .last_state
            .as_ref()
            .is_some_and(|l| l.terminated.is_some())
        {
            stopped += 1;
        } else {
            waiting += 1;
        }
    }
    if waiting > 0 {
        "Pending"
    } else if running > 0 && unknown == 0 {
        "Running"
    } else if running == 0 && stopped > 0 && unknown == 0 {
        if restart_policy == "Always" {
            "Running"
        } else if stopped == succeeded {
            "Succeeded"
        } else if restart_policy == "Never" {
            "Failed"
        } else {
            "Running"
        }
    } else {
        "Pending"
    }
}

/// Why a waiting container waits (`None` unless it waits).
fn waiting_reason(c: &ContainerStatus) -> Option<&str> {
    c.state
        .as_ref()?
        .waiting
        .as_ref()
        .map(|w| w.reason.as_deref().unwrap_or_default())
}

impl Kubelet {
    /// Forgets what it kept about `pod` (its image pull back-offs).
    fn forget(&self, pod: &Pod) {
        let prefix = format!("{}_", pod.metadata.uid.as_deref().unwrap_or_default());
        self.pulls.lock().retain(|key, _| !key.starts_with(&prefix));
    }

    /// Advances `status` by the steps that are due at `now` (the numbered steps of the
    /// module docs, 3 to 6).
    fn step(
        &self,
        pod: &Pod,
        status: &mut PodStatus,
        node: &Node,
        now: jiff::Timestamp,
        start_latency: Duration,
        behaviours: &[Behaviour],
    ) -> Step {
        let before = status.clone();
        let spec = pod.spec.clone().unwrap_or_default();
        let restart_policy = spec.restart_policy.as_deref().unwrap_or("Always");
        if status.start_time.is_none() {
            admit(pod, status, node, now, &self.next_ip);
        }
        // 4.
        let deadline = spec
            .active_deadline_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map(|s| remaining(status.start_time.as_ref(), Duration::from_secs(s), now));
        if deadline == Some(Duration::ZERO) {
            fail_deadline(status, now);
            return Step::Write(None);
        }
        // 5.
        let created = remaining(status.start_time.as_ref(), start_latency, now);
        let mut next = deadline;
        let healthy = Behaviour {
            pull_fails: false,
            exit: None,
            ready: true,
        };
        for (i, c) in status.container_statuses.iter_mut().flatten().enumerate() {
            let behaviour = behaviours.get(i).copied().unwrap_or(healthy);
            let wake = self.step_container(pod, c, behaviour, restart_policy, created, now);
            next = earliest(next, wake);
        }
        // 6.
        let expected = spec.containers.len();
        let containers = status.container_statuses.clone().unwrap_or_default();
        let phase = get_phase(restart_policy, &containers, expected);
        status.phase = Some(phase.into());
        let conditions = status.conditions.get_or_insert_with(Vec::new);
        match phase {
            "Succeeded" | "Failed" => {
                let reason = if phase == "Succeeded" {
                    "PodCompleted"
                } else {
                    "PodFailed"
                };
                pods::set_condition(conditions, "PodReadyToStartContainers", "False", None, None);
                pods::set_condition(conditions, "Ready", "False", Some(reason), None);
                pods::set_condition(conditions, "ContainersReady", "False", Some(reason), None);
                next = None;
            }
            _ => {
                let unready: Vec<&str> = containers
                    .iter()
                    .filter(|c| !c.ready)
                    .map(|c| c.name.as_str())
                    .collect();
                if unready.is_empty() {
                    pods::set_condition(conditions, "Ready", "True", None, None);
                    pods::set_condition(conditions, "ContainersReady", "True", None, None);
                } else {
                    let message =
                        format!("containers with unready status: [{}]", unready.join(" "));
                    for type_ in ["Ready", "ContainersReady"] {
                        pods::set_condition(
                            conditions,
                            type_,
                            "False",
                            Some("ContainersNotReady"),
                            Some(&message),
                        );
                    }
                }
            }
        }
        match (*status != before, next) {
            (true, next) => Step::Write(next),
            (false, Some(wait)) => Step::Wait(wait),
            (false, None) => Step::Idle,
        }
    }

    /// Step 5 for one container: takes the step that is due at `now`, if one is; returns
    /// how long until its next step is due, if one will be. `created` is how long until
    /// the pod's start latency has passed.
    fn step_container(
        &self,
        pod: &Pod,
        c: &mut ContainerStatus,
        behaviour: Behaviour,
        restart_policy: &str,
        created: Duration,
        now: jiff::Timestamp,
    ) -> Option<Duration> {
        let state = c.state.clone().unwrap_or_default();
        let key = format!(
            "{}_{}",
            pod.metadata.uid.as_deref().unwrap_or_default(),
            container_image(pod, &c.name)
        );
        if let Some(running) = &state.running {
            // 5.4
            c.ready = behaviour.ready;
            let (code, after) = behaviour.exit?;
            let left = remaining(running.started_at.as_ref(), after, now);
            if !left.is_zero() {
                return Some(left);
            }
            let reason = if code == 0 { "Completed" } else { "Error" };
            c.ready = false;
            c.started = Some(false);
            c.state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: code,
                    reason: Some(reason.into()),
                    started_at: running.started_at.clone(),
                    finished_at: Some(Time(now)),
                    container_id: c.container_id.clone(),
                    ..ContainerStateTerminated::default()
                }),
                ..ContainerState::default()
            });
            return restarts(restart_policy, code).then_some(RELIST);
        }
        if let Some(terminated) = &state.terminated {
            // 5.5
            if !restarts(restart_policy, terminated.exit_code) {
                return None;
            }
            let finished = terminated.finished_at.as_ref();
            let back_off = crash_back_off(c.restart_count);
            let relist = remaining(finished, RELIST, now);
            if !relist.is_zero() {
                return Some(relist);
            }
            c.last_state = Some(state.clone());
            let left = remaining(finished, back_off, now);
            if left.is_zero() {
                return self.start_container(pod, c, &key, behaviour, now);
            }
            c.state = Some(waiting(
                "CrashLoopBackOff",
                format!(
                    "back-off {} restarting failed container={} pod={}",
                    go_duration(back_off),
                    c.name,
                    format_pod(pod)
                ),
            ));
            return Some(left);
        }
        let reason = waiting_reason(c).unwrap_or_default().to_string();
        match reason.as_str() {
            "CrashLoopBackOff" => {
                // 5.6
                let finished = c
                    .last_state
                    .as_ref()
                    .and_then(|l| l.terminated.as_ref())
                    .and_then(|t| t.finished_at.clone());
                let left = remaining(finished.as_ref(), crash_back_off(c.restart_count), now);
                if left.is_zero() {
                    self.start_container(pod, c, &key, behaviour, now)
                } else {
                    Some(left)
                }
            }
            reason @ ("ErrImagePull" | "ImagePullBackOff") => {
                // 5.3
                let Some(entry) = self.pulls.lock().get(&key).copied() else {
                    return self.start_container(pod, c, &key, behaviour, now);
                };
                let retry = until(
                    entry
                        .last
                        .checked_add(back_off(entry.failures))
                        .unwrap_or(entry.last),
                    now,
                );
                if retry.is_zero() {
                    return self.start_container(pod, c, &key, behaviour, now);
                }
                let relist = until(entry.last.checked_add(RELIST).unwrap_or(entry.last), now);
                if reason == "ErrImagePull" && relist.is_zero() {
                    let image = container_image(pod, &c.name);
                    c.state = Some(waiting(
                        "ImagePullBackOff",
                        format!("Back-off pulling image {image:?}"),
                    ));
                    return Some(retry);
                }
                Some(if reason == "ErrImagePull" {
                    relist
                } else {
                    retry
                })
            }
            // 5.1: `ContainerCreating`.
            _ if created.is_zero() => self.start_container(pod, c, &key, behaviour, now),
            _ => Some(created),
        }
    }

    /// Step 5.2: pulls the image and starts the container (a restart if it ran before);
    /// returns how long until its next step is due.
    fn start_container(
        &self,
        pod: &Pod,
        c: &mut ContainerStatus,
        key: &str,
        behaviour: Behaviour,
        now: jiff::Timestamp,
    ) -> Option<Duration> {
        if behaviour.pull_fails {
            let mut pulls = self.pulls.lock();
            let entry = pulls.entry(key.to_string()).or_insert(PullBackOff {
                failures: 0,
                last: now,
            });
            // `flowcontrol.Backoff.Next`: an entry idle for twice the longest back-off
            // starts over.
            let idle = until(now, entry.last) > MAX_BACKOFF.saturating_mul(2);
            entry.failures = if idle { 1 } else { entry.failures + 1 };
            entry.last = now;
            c.ready = false;
            c.started = Some(false);
            if c.state.as_ref().is_some_and(|s| s.terminated.is_some()) {
                c.last_state = c.state.clone();
            }
            c.state = Some(waiting("ErrImagePull", pull_error(&c.image)));
            return Some(RELIST);
        }
        self.pulls.lock().remove(key);
        if c.container_id.is_some() {
            c.restart_count += 1;
            if c.state.as_ref().is_some_and(|s| s.terminated.is_some()) {
                c.last_state = c.state.clone();
            }
        }
        let uid = pod.metadata.uid.as_deref().unwrap_or_default();
        c.image_id = image_id(&c.image);
        c.container_id = Some(format!(
            "containerd://{}",
            digest(&(uid, &c.name, c.restart_count))
        ));
        c.ready = behaviour.ready;
        c.started = Some(true);
        c.state = Some(ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(Time(now)),
            }),
            ..ContainerState::default()
        });
        behaviour.exit.map(|(_, after)| after)
    }
}

/// A waiting state.
fn waiting(reason: &str, message: String) -> ContainerState {
    ContainerState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(reason.into()),
            message: Some(message),
        }),
        ..ContainerState::default()
    }
}

/// The image of the container `name` as the pod spells it.
fn container_image<'a>(pod: &'a Pod, name: &str) -> &'a str {
    pod.spec
        .iter()
        .flat_map(|s| &s.containers)
        .find(|c| c.name == name)
        .and_then(|c| c.image.as_deref())
        .unwrap_or_default()
}

/// What containerd answers a pull of an image that does not exist (the message of
/// `ErrImagePull`).
fn pull_error(image: &str) -> String {
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image {image:?}: \
         failed to resolve reference {image:?}: {image}: not found"
    )
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
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    pods::set_condition(conditions, "PodReadyToStartContainers", "True", None, None);
    pods::set_condition(conditions, "Initialized", "True", None, None);
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

/// Step 4: the pod outlived `activeDeadlineSeconds`: its containers are killed.
fn fail_deadline(status: &mut PodStatus, now: jiff::Timestamp) {
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
                exit_code: 137,
                reason: Some("Error".into()),
                started_at,
                finished_at: Some(Time(now)),
                container_id: c.container_id.clone(),
                ..ContainerStateTerminated::default()
            }),
            ..ContainerState::default()
        });
    }
    status.phase = Some("Failed".into());
    status.reason = Some("DeadlineExceeded".into());
    status.message = Some("Pod was active on the node longer than the specified deadline".into());
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    pods::set_condition(conditions, "PodReadyToStartContainers", "False", None, None);
    pods::set_condition(conditions, "Ready", "False", Some("PodFailed"), None);
    pods::set_condition(
        conditions,
        "ContainersReady",
        "False",
        Some("PodFailed"),
        None,
    );
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

    const SECOND: Duration = Duration::from_secs(1);

    /// One sync of `p` with the default behaviours (no fault).
    fn sync(
        k: &Kubelet,
        p: &Pod,
        status: &mut PodStatus,
        now: jiff::Timestamp,
        latency: Duration,
        run_time: Duration,
    ) -> Step {
        k.step(
            p,
            status,
            &node(),
            now,
            latency,
            &behaviours(p, &[], run_time),
        )
    }

    #[test]
    fn a_pod_is_admitted_started_and_a_job_pod_completes() {
        let k = Kubelet::default();
        let (latency, run_time) = (SECOND, Duration::from_secs(5));
        let p = pod("Never", None);
        let mut status = PodStatus::default();
        let t0 = crate::clock::now();
        assert_eq!(
            sync(&k, &p, &mut status, t0, latency, run_time),
            Step::Write(Some(SECOND))
        );
        assert_eq!(status.phase.as_deref(), Some("Pending"));
        assert_eq!(status.pod_ip.as_deref(), Some("10.244.1.2"));
        assert_eq!(status.host_ip.as_deref(), Some("10.0.0.2"));
        assert_eq!(status.qos_class.as_deref(), Some("BestEffort"));
        let t1 = after(t0, Duration::from_secs(2));
        assert_eq!(
            sync(&k, &p, &mut status, t1, latency, run_time),
            Step::Write(Some(Duration::from_secs(5)))
        );
        assert_eq!(status.phase.as_deref(), Some("Running"));
        let c = &status.container_statuses.clone().unwrap_or_default()[0];
        assert!(c.ready && c.started == Some(true));
        assert_eq!(c.image, "docker.io/library/nginx:latest");
        assert_eq!(
            sync(&k, &p, &mut status, after(t1, SECOND), latency, run_time),
            Step::Wait(Duration::from_secs(4)),
            "nothing to write until the run time has passed"
        );
        let t2 = after(t1, Duration::from_secs(5));
        assert_eq!(
            sync(&k, &p, &mut status, t2, latency, run_time),
            Step::Write(None)
        );
        assert_eq!(status.phase.as_deref(), Some("Succeeded"));
        let c = &status.container_statuses.clone().unwrap_or_default()[0];
        let terminated = c.state.as_ref().and_then(|s| s.terminated.clone());
        assert_eq!(
            terminated.map(|t| (t.exit_code, t.reason)),
            Some((0, Some("Completed".into())))
        );
        assert_eq!(
            condition(&status, "Ready"),
            ("False", "PodCompleted".into())
        );
    }

    #[test]
    fn a_server_pod_runs_until_deleted_and_a_deadline_fails_it() {
        let k = Kubelet::default();
        let mut status = PodStatus::default();
        let t0 = crate::clock::now();
        let web = pod("Always", None);
        assert_eq!(
            sync(&k, &web, &mut status, t0, Duration::ZERO, SECOND),
            Step::Write(None)
        );
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert_eq!(
            sync(
                &k,
                &web,
                &mut status,
                after(t0, SECOND),
                Duration::ZERO,
                SECOND
            ),
            Step::Idle
        );
        let mut status = PodStatus::default();
        let bounded = pod("Always", Some(30));
        assert_eq!(
            sync(&k, &bounded, &mut status, t0, Duration::ZERO, SECOND),
            Step::Write(Some(Duration::from_secs(30)))
        );
        assert_eq!(status.pod_ip.as_deref(), Some("10.244.1.3"));
        let late = after(t0, Duration::from_secs(31));
        assert_eq!(
            sync(&k, &bounded, &mut status, late, Duration::ZERO, SECOND),
            Step::Write(None)
        );
        assert_eq!(status.phase.as_deref(), Some("Failed"));
        assert_eq!(status.reason.as_deref(), Some("DeadlineExceeded"));
    }

    /// A written status in short: (milliseconds since admission, phase, the container's
    /// state — its waiting or terminated reason, or `Running` — and its restart count).
    type Trace = Vec<(u128, String, String, i32)>;

    /// Syncs `p` with `action` on its container as the controller does (each time a step
    /// asks to be looked at again), from admission until `end`; returns what was written
    /// and the last status.
    fn drive(p: &Pod, action: Option<FaultAction>, end: Duration) -> (Trace, PodStatus) {
        let k = Kubelet::default();
        let behaviours = behaviours(p, &[action], Duration::from_secs(5));
        let t0 = crate::clock::now();
        let (mut at, mut status, mut trace) = (Duration::ZERO, PodStatus::default(), Vec::new());
        for _ in 0..1000 {
            if at > end {
                break;
            }
            let wait = match k.step(
                p,
                &mut status,
                &node(),
                after(t0, at),
                Duration::ZERO,
                &behaviours,
            ) {
                Step::Idle => break,
                Step::Wait(d) => d,
                Step::Write(next) => {
                    let c = status
                        .container_statuses
                        .clone()
                        .unwrap_or_default()
                        .remove(0);
                    let state = c.state.clone().unwrap_or_default();
                    let shown = match (&state.waiting, &state.terminated) {
                        (Some(w), _) => w.reason.clone().unwrap_or_default(),
                        (_, Some(t)) => t.reason.clone().unwrap_or_default(),
                        _ => "Running".into(),
                    };
                    let phase = status.phase.clone().unwrap_or_default();
                    trace.push((at.as_millis(), phase, shown, c.restart_count));
                    match next {
                        Some(d) => d,
                        None => break,
                    }
                }
            };
            at += wait;
        }
        (trace, status)
    }

    fn row(ms: u128, phase: &str, state: &str, restarts: i32) -> (u128, String, String, i32) {
        (ms, phase.into(), state.into(), restarts)
    }

    fn condition(status: &PodStatus, type_: &str) -> (&'static str, String) {
        let c = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == type_)
            .cloned()
            .unwrap_or_default();
        let s = if c.status == "True" { "True" } else { "False" };
        (s, c.reason.unwrap_or_default())
    }

    fn container(status: &PodStatus) -> ContainerStatus {
        status
            .container_statuses
            .clone()
            .unwrap_or_default()
            .remove(0)
    }

    fn exits(code: i32) -> Option<FaultAction> {
        Some(FaultAction::Exit {
            code,
            after: Some(SECOND),
        })
    }

    /// `restartPolicy: Always`: the first exit restarts at once, later ones wait in
    /// `CrashLoopBackOff` 10 s, 20 s, 40 s from `finishedAt` (`kuberuntime_manager.go`
    /// `doBackOff`); the pod stays `Running` and unready (`kubelet_pods.go` `getPhase`).
    #[test]
    fn a_crashing_container_restarts_with_the_kubelets_back_off() {
        let (trace, status) = drive(&pod("Always", None), exits(1), Duration::from_secs(77));
        assert_eq!(
            trace,
            [
                row(0, "Running", "Running", 0),
                row(1000, "Running", "Error", 0),
                row(2000, "Running", "Running", 1),
                row(3000, "Running", "Error", 1),
                row(4000, "Running", "CrashLoopBackOff", 1),
                row(13000, "Running", "Running", 2),
                row(14000, "Running", "Error", 2),
                row(15000, "Running", "CrashLoopBackOff", 2),
                row(34000, "Running", "Running", 3),
                row(35000, "Running", "Error", 3),
                row(36000, "Running", "CrashLoopBackOff", 3),
                row(75000, "Running", "Running", 4),
                row(76000, "Running", "Error", 4),
                row(77000, "Running", "CrashLoopBackOff", 4),
            ]
        );
        let c = container(&status);
        let waiting = c.state.and_then(|s| s.waiting).unwrap_or_default();
        assert_eq!(
            waiting.message.as_deref(),
            Some("back-off 1m20s restarting failed container=c pod=p_default(u)")
        );
        let last = c.last_state.and_then(|s| s.terminated).unwrap_or_default();
        assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));
        assert!(last.started_at.is_some() && last.finished_at.is_some());
        assert!(!c.ready);
        assert_eq!(
            condition(&status, "Ready"),
            ("False", "ContainersNotReady".into())
        );
        assert_eq!(
            condition(&status, "ContainersReady"),
            ("False", "ContainersNotReady".into())
        );
    }

    /// `OnFailure` restarts a failed container and lets a successful one finish;
    /// `Never` restarts nothing: the pod fails with the container's exit code
    /// (`kubecontainer.ShouldContainerBeRestarted`, `getPhase`).
    #[test]
    fn on_failure_restarts_failures_and_never_fails_the_pod() {
        let (trace, _) = drive(&pod("OnFailure", None), exits(3), Duration::from_secs(4));
        assert_eq!(
            trace,
            [
                row(0, "Running", "Running", 0),
                row(1000, "Running", "Error", 0),
                row(2000, "Running", "Running", 1),
                row(3000, "Running", "Error", 1),
                row(4000, "Running", "CrashLoopBackOff", 1),
            ]
        );
        let (trace, status) = drive(&pod("OnFailure", None), exits(0), Duration::from_secs(60));
        assert_eq!(
            trace,
            [
                row(0, "Running", "Running", 0),
                row(1000, "Succeeded", "Completed", 0)
            ]
        );
        assert_eq!(
            condition(&status, "Ready"),
            ("False", "PodCompleted".into())
        );
        let (trace, status) = drive(&pod("Never", None), exits(3), Duration::from_secs(60));
        assert_eq!(
            trace,
            [
                row(0, "Running", "Running", 0),
                row(1000, "Failed", "Error", 0)
            ]
        );
        let c = container(&status);
        let terminated = c.state.and_then(|s| s.terminated).unwrap_or_default();
        assert_eq!(terminated.exit_code, 3);
        assert!(terminated.started_at.is_some() && terminated.finished_at.is_some());
        assert!(c.last_state.is_none());
        assert_eq!(condition(&status, "Ready"), ("False", "PodFailed".into()));
        assert_eq!(
            condition(&status, "ContainersReady"),
            ("False", "PodFailed".into())
        );
        assert_eq!(condition(&status, "PodReadyToStartContainers").0, "False");
    }

    /// A failing pull: `ErrImagePull` with the runtime's error, `ImagePullBackOff` one
    /// re-list later, and the next pull after 10 s, 20 s, 40 s
    /// (`pkg/kubelet/images/image_manager.go` `EnsureImageExists`); the pod stays `Pending`.
    #[test]
    fn a_failing_image_pull_backs_off() {
        let (trace, status) = drive(
            &pod("Always", None),
            Some(FaultAction::ImagePull),
            Duration::from_secs(71),
        );
        assert_eq!(
            trace,
            [
                row(0, "Pending", "ErrImagePull", 0),
                row(1000, "Pending", "ImagePullBackOff", 0),
                row(10000, "Pending", "ErrImagePull", 0),
                row(11000, "Pending", "ImagePullBackOff", 0),
                row(30000, "Pending", "ErrImagePull", 0),
                row(31000, "Pending", "ImagePullBackOff", 0),
                row(70000, "Pending", "ErrImagePull", 0),
                row(71000, "Pending", "ImagePullBackOff", 0),
            ]
        );
        let c = container(&status);
        let waiting = c.state.and_then(|s| s.waiting).unwrap_or_default();
        assert_eq!(
            waiting.message.as_deref(),
            Some("Back-off pulling image \"nginx\"")
        );
        assert_eq!(
            pull_error("docker.io/library/nginx:latest"),
            "rpc error: code = NotFound desc = failed to pull and unpack image \
             \"docker.io/library/nginx:latest\": failed to resolve reference \
             \"docker.io/library/nginx:latest\": docker.io/library/nginx:latest: not found"
        );
        assert!(c.container_id.is_none() && !c.ready);
    }

    /// A container that never becomes ready: running, `Ready=False` and
    /// `ContainersReady=False` (`pkg/kubelet/status/generate.go`).
    #[test]
    fn a_never_ready_container_runs_unready() {
        let (trace, status) = drive(
            &pod("Always", None),
            Some(FaultAction::NeverReady),
            Duration::from_secs(60),
        );
        assert_eq!(trace, [row(0, "Running", "Running", 0)]);
        let c = container(&status);
        assert!(!c.ready && c.started == Some(true));
        assert_eq!(
            condition(&status, "Ready"),
            ("False", "ContainersNotReady".into())
        );
    }

    #[test]
    fn phases_back_offs_and_durations_follow_the_kubelet() {
        assert_eq!(back_off(0), Duration::ZERO);
        assert_eq!(back_off(1), Duration::from_secs(10));
        assert_eq!(back_off(4), Duration::from_secs(80));
        assert_eq!(back_off(40), MAX_BACKOFF);
        assert_eq!(crash_back_off(2), Duration::from_secs(20));
        assert_eq!(go_duration(Duration::from_secs(10)), "10s");
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_secs(3725)), "1h2m5s");
        assert!(restarts("Always", 0) && restarts("OnFailure", 1));
        assert!(!restarts("OnFailure", 0) && !restarts("Never", 1));
        let status = |json: serde_json::Value| -> ContainerStatus {
            serde_json::from_value(json).unwrap_or_default()
        };
        let running = status(serde_json::json!({"name": "a", "image": "", "imageID": "",
            "ready": true, "restartCount": 0, "state": {"running": {}}}));
        let done = |code: i32| {
            status(
                serde_json::json!({"name": "b", "image": "", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"terminated": {"exitCode": code}}}),
            )
        };
        let creating = status(serde_json::json!({"name": "c", "image": "", "imageID": "",
            "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}));
        assert_eq!(
            get_phase("Never", &[running.clone(), done(0)], 2),
            "Running"
        );
        assert_eq!(get_phase("Never", &[done(0), done(0)], 2), "Succeeded");
        assert_eq!(get_phase("Never", &[done(0), done(1)], 2), "Failed");
        assert_eq!(get_phase("OnFailure", &[done(1)], 1), "Running");
        assert_eq!(get_phase("Always", &[done(0)], 1), "Running");
        assert_eq!(get_phase("Always", &[running, creating], 2), "Pending");
        assert_eq!(get_phase("Always", &[], 1), "Pending");
    }
}
