//! kube-controller-manager's Job controller (`pkg/controller/job/job_controller.go`
//! `syncJob`), for `NonIndexed` jobs: runs pods from the template until enough succeed,
//! or fails the job once too many have failed or its deadline passed.
//!
//! The sync loop, one Job at a time:
//!
//! 1. Wait until the pod cache holds every pod this controller created or deleted
//!    (KEP-5647's `ConsistencyStore`, in place of the controller's expectations).
//! 2. Finished (`Complete` or `Failed` condition True), or being deleted: done.
//! 3. Count its pods (controlled by the Job): active, ready, succeeded, failed.
//! 4. Failure: more failed pods than `backoffLimit`, or, under `restartPolicy: OnFailure`,
//!    as many container restarts in the running and pending pods as `backoffLimit` (any
//!    restart when it is 0: `pastBackoffLimitOnFailure`), gives `BackoffLimitExceeded`
//!    ("Job has reached the specified backoff limit"); `activeDeadlineSeconds` since
//!    `startTime` gives `DeadlineExceeded` ("Job was active longer than specified
//!    deadline"). The Job gets `FailureTarget`, its active pods are deleted (and counted
//!    as failed, as `trackJobStatusAndRemoveFinalizers` counts a finishing Job's deleted
//!    pods), and once none is left, `Failed` (Kubernetes 1.31's order, so `Failed` means
//!    no pod runs any more). `failed` never decreases: a failed pod deleted later still
//!    counts, as the job-tracking finalizer makes kube's count it.
//! 5. Success: `succeeded` reached `completions` (or, without completions, one pod
//!    succeeded and none is active): `SuccessCriteriaMet`, then `Complete` with
//!    `completionTime` once no pod is active.
//! 6. Otherwise keep `min(parallelism, completions - succeeded)` pods active: create the
//!    missing ones (after a failure, not before the pod backoff, 10 s doubled per failure up
//!    to 6 minutes, `DefaultJobPodFailureBackOff`), delete extras (parallelism lowered).
//! 7. Status: `startTime` (first sync), `active`, `ready`, `succeeded`, `failed`,
//!    `terminating`, the conditions; written when it changed. Requeue for the pod backoff
//!    or the deadline, whichever comes first.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        batch::v1::{Job, JobCondition, JobStatus},
        core::v1::Pod,
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time},
};
use kubegen::{
    cache::Lister,
    client::{
        Error, ResourceClient,
        params::{DeleteParams, PostParams},
    },
    controller::{Action, CachedClient, Controller, ControllerError},
};
use tokio_util::sync::CancellationToken;

use super::{
    config::Cluster,
    events::{EventType, Recorder},
    pods,
};

/// How long a sync waits for the pod cache to show the controller's own writes.
const CONSISTENCY_WAIT: Duration = Duration::from_secs(5);

/// The first pod backoff after a failure (`DefaultJobPodFailureBackOff`).
const POD_BACKOFF: Duration = Duration::from_secs(10);

/// The longest pod backoff (`MaxJobPodFailureBackOff`).
const MAX_POD_BACKOFF: Duration = Duration::from_secs(360);

struct Context {
    cluster: Arc<Cluster>,
    recorder: Recorder,
    pods: CachedClient<Pod>,
    pod_lister: Lister<Pod>,
}

/// Runs the Job controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let pods = CachedClient::<Pod>::new(cluster.client.clone(), &cluster.factory).map_err(|e| {
        ControllerError::Informer {
            controller: "job".into(),
            source: e,
        }
    })?;
    let pod_lister = cluster.factory.lister_for::<Pod>();
    let controller = Controller::<Job>::builder(&cluster.factory)
        .named("job")
        .owns::<Pod>()
        .build();
    let cx = Arc::new(Context {
        recorder: cluster.recorder("job-controller"),
        cluster,
        pods,
        pod_lister,
    });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

/// What a Job's pods add up to (step 3).
#[derive(Debug, Default, Clone)]
struct Counts {
    active: Vec<Arc<Pod>>,
    ready: i32,
    succeeded: i32,
    failed: i32,
    terminating: i32,
    /// When the last pod failed (for the pod backoff).
    last_failure: Option<jiff::Timestamp>,
}

fn count(job: &Job, all: &[Arc<Pod>]) -> Counts {
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let mut counts = Counts::default();
    for pod in all {
        if pod.metadata.namespace != job.metadata.namespace
            || !pods::is_controlled_by(&pod.metadata, &uid)
        {
            continue;
        }
        match pods::phase(pod) {
            "Succeeded" => counts.succeeded += 1,
            "Failed" => {
                counts.failed += 1;
                let finished = pod
                    .status
                    .as_ref()
                    .and_then(|s| s.container_statuses.as_deref())
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|c| c.state.as_ref()?.terminated.as_ref()?.finished_at.clone())
                    .map(|Time(t)| t)
                    .max();
                counts.last_failure = counts.last_failure.max(finished);
            }
            _ if pod.metadata.deletion_timestamp.is_some() => counts.terminating += 1,
            _ => {
                if pods::is_ready(pod) {
                    counts.ready += 1;
                }
                counts.active.push(pod.clone());
            }
        }
    }
    counts.active.sort_by_key(|p| p.metadata.name.clone());
    counts
}

/// Whether the job has the condition `type_` set True.
fn has_condition(job: &Job, type_: &str) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// Adds the condition `type_` (True) unless present.
fn add_condition(
    status: &mut JobStatus,
    type_: &str,
    reason: &str,
    message: &str,
    now: jiff::Timestamp,
) {
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    if conditions.iter().any(|c| c.type_ == type_) {
        return;
    }
    conditions.push(JobCondition {
        type_: type_.into(),
        status: "True".into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_probe_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
    });
}

/// `pastBackoffLimitOnFailure`: under `restartPolicy: OnFailure`, whether the container
/// restarts of the Job's running and pending pods reached `backoff_limit` (any restart
/// when it is 0).
fn past_backoff_limit_on_failure(job: &Job, counts: &Counts, backoff_limit: i32) -> bool {
    let on_failure = job
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.restart_policy.as_deref())
        == Some("OnFailure");
    if !on_failure {
        return false;
    }
    let restarts: i32 = counts
        .active
        .iter()
        .filter(|p| matches!(pods::phase(p), "Running" | "Pending"))
        .filter_map(|p| p.status.as_ref())
        .flat_map(|s| {
            s.init_container_statuses
                .iter()
                .flatten()
                .chain(s.container_statuses.iter().flatten())
        })
        .map(|c| c.restart_count)
        .sum();
    if backoff_limit == 0 {
        restarts > 0
    } else {
        restarts >= backoff_limit
    }
}

/// The pod backoff after `failed` failures (step 6).
fn pod_backoff(failed: i32) -> Duration {
    let doublings = u32::try_from(failed.saturating_sub(1)).unwrap_or(0).min(16);
    POD_BACKOFF
        .saturating_mul(1 << doublings)
        .min(MAX_POD_BACKOFF)
}

/// What one sync decided: the status to write, the pods to create or delete, and when to
/// look again.
#[derive(Debug, Default)]
struct Plan {
    status: JobStatus,
    create: usize,
    delete: Vec<Arc<Pod>>,
    requeue: Option<Duration>,
}

/// Steps 4 to 7, without I/O.
fn plan(job: &Job, counts: &Counts, now: jiff::Timestamp) -> Plan {
    let spec = job.spec.clone().unwrap_or_default();
    let mut status = job.status.clone().unwrap_or_default();
    let start = status.start_time.clone().map_or(now, |Time(t)| t);
    status.start_time = Some(Time(start));
    let active = i32::try_from(counts.active.len()).unwrap_or(i32::MAX);
    // Failed pods stay counted once gone (`failed` never decreases).
    let failed = counts.failed.max(status.failed.unwrap_or(0));
    status.active = Some(active);
    status.ready = Some(counts.ready);
    status.succeeded = Some(counts.succeeded);
    status.failed = Some(failed);
    status.terminating = Some(counts.terminating);
    let mut plan = Plan::default();
    // 4.
    let backoff_limit = spec.backoff_limit.unwrap_or(6);
    let deadline = spec
        .active_deadline_seconds
        .and_then(|s| start.checked_add(jiff::SignedDuration::from_secs(s)).ok());
    let failure = if has_condition(job, "FailureTarget") {
        Some(())
    } else if failed > backoff_limit || past_backoff_limit_on_failure(job, counts, backoff_limit) {
        add_condition(
            &mut status,
            "FailureTarget",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
            now,
        );
        Some(())
    } else if deadline.is_some_and(|d| d <= now) {
        add_condition(
            &mut status,
            "FailureTarget",
            "DeadlineExceeded",
            "Job was active longer than specified deadline",
            now,
        );
        Some(())
    } else {
        None
    };
    if failure.is_some() {
        // The pods deleted because the Job failed count as failed.
        status.failed = Some(failed.max(counts.failed + active + counts.terminating));
        if counts.active.is_empty() && counts.terminating == 0 {
            let target = status
                .conditions
                .as_deref()
                .unwrap_or_default()
                .iter()
                .find(|c| c.type_ == "FailureTarget")
                .map(|c| {
                    (
                        c.reason.clone().unwrap_or_default(),
                        c.message.clone().unwrap_or_default(),
                    )
                });
            if let Some((reason, message)) = target {
                add_condition(&mut status, "Failed", &reason, &message, now);
            }
        } else {
            plan.delete = counts.active.clone();
        }
        plan.status = status;
        return plan;
    }
    // 5.
    let parallelism = spec.parallelism.unwrap_or(1).max(0);
    let done = match spec.completions {
        Some(completions) => counts.succeeded >= completions,
        None => counts.succeeded > 0 && counts.active.is_empty(),
    };
    if done || has_condition(job, "SuccessCriteriaMet") {
        add_condition(
            &mut status,
            "SuccessCriteriaMet",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
            now,
        );
        if counts.active.is_empty() && counts.terminating == 0 {
            add_condition(
                &mut status,
                "Complete",
                "CompletionsReached",
                "Reached expected number of succeeded pods",
                now,
            );
            status.completion_time = Some(Time(now));
        } else {
            plan.delete = counts.active.clone();
        }
        plan.status = status;
        return plan;
    }
    // 6.
    let wanted = match spec.completions {
        Some(completions) => parallelism.min(completions - counts.succeeded),
        // Work-queue jobs: once one pod succeeded, no new pods start.
        None if counts.succeeded > 0 => 0,
        None => parallelism,
    }
    .max(0);
    let wanted = usize::try_from(wanted).unwrap_or(0);
    if counts.active.len() < wanted {
        let backoff_left = counts.last_failure.and_then(|failed_at| {
            let due = failed_at.checked_add(pod_backoff(counts.failed)).ok()?;
            (due > now).then(|| Duration::try_from(due.duration_since(now)).ok())?
        });
        match backoff_left {
            Some(left) => plan.requeue = Some(left),
            None => plan.create = wanted - counts.active.len(),
        }
    } else if counts.active.len() > wanted {
        plan.delete = counts.active[wanted..].to_vec();
    }
    if let Some(deadline) = deadline
        && deadline > now
    {
        let left = Duration::try_from(deadline.duration_since(now)).unwrap_or_default();
        plan.requeue = Some(plan.requeue.map_or(left, |r| r.min(left)));
    }
    plan.status = status;
    plan
}

async fn reconcile(job: Arc<Job>, cx: Arc<Context>) -> Result<Action, Error> {
    // 1.
    if let Some(consistency) = cx.pods.consistency()
        && !consistency.ensure_all_ready(CONSISTENCY_WAIT).await
    {
        return Ok(Action::requeue_after(Duration::from_millis(100)));
    }
    // 2.
    if job.metadata.deletion_timestamp.is_some()
        || has_condition(&job, "Complete")
        || has_condition(&job, "Failed")
        || job.spec.as_ref().and_then(|s| s.suspend) == Some(true)
    {
        return Ok(Action::done());
    }
    // 3.
    let owned = pods::controlled_by(
        &cx.pod_lister,
        job.metadata.uid.as_deref().unwrap_or_default(),
    );
    let counts = count(&job, &owned);
    let plan = plan(&job, &counts, crate::clock::now());
    for _ in 0..plan.create {
        match cx
            .pods
            .create(&PostParams::default(), &pod_from_template(&job))
            .await
        {
            Ok(pod) => {
                let name = pod.metadata.name.unwrap_or_default();
                cx.recorder
                    .record(
                        job.as_ref(),
                        EventType::Normal,
                        "SuccessfulCreate",
                        format!("Created pod: {name}"),
                    )
                    .await;
            }
            Err(e) if e.is_not_found() => return Ok(Action::done()),
            Err(e) => return Err(e),
        }
    }
    for pod in &plan.delete {
        match cx
            .pods
            .delete(
                pod.metadata.namespace.as_deref(),
                pod.metadata.name.as_deref().unwrap_or_default(),
                &DeleteParams::default(),
            )
            .await
        {
            Ok(_) => {
                let name = pod.metadata.name.as_deref().unwrap_or_default();
                cx.recorder
                    .record(
                        job.as_ref(),
                        EventType::Normal,
                        "SuccessfulDelete",
                        format!("Deleted pod: {name}"),
                    )
                    .await;
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    // 7.
    if job.status.as_ref() != Some(&plan.status) {
        let mut updated = (*job).clone();
        updated.status = Some(plan.status);
        let client: ResourceClient<Job> = ResourceClient::namespaced(
            cx.cluster.client.clone(),
            job.metadata.namespace.as_deref().unwrap_or_default(),
        );
        let finished = finished_event(&job, &updated);
        match client.update_status(&PostParams::default(), &updated).await {
            Ok(_) => {
                if let Some((event_type, reason, message)) = finished {
                    cx.recorder
                        .record(job.as_ref(), event_type, &reason, message)
                        .await;
                }
            }
            // Gone, or changed meanwhile: the newer object's event brings it back.
            Err(e) if e.is_not_found() || e.is_conflict() => return Ok(Action::done()),
            Err(e) => return Err(e),
        }
    }
    Ok(plan
        .requeue
        .map_or_else(Action::done, Action::requeue_after))
}

/// The event of a Job that `updated` finishes (`syncJob`'s "Completed" / "Job completed",
/// or a Warning with the failure's reason and message), if `job` had not finished.
fn finished_event(job: &Job, updated: &Job) -> Option<(EventType, String, String)> {
    let newly = |type_: &str| has_condition(updated, type_) && !has_condition(job, type_);
    if newly("Complete") {
        return Some((
            EventType::Normal,
            "Completed".into(),
            "Job completed".into(),
        ));
    }
    if !newly("Failed") {
        return None;
    }
    let failed = updated
        .status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == "Failed")?;
    Some((
        EventType::Warning,
        failed.reason.clone().unwrap_or_default(),
        failed.message.clone().unwrap_or_default(),
    ))
}

/// A new pod of `job`: the template (whose labels the Job strategy filled with
/// `batch.kubernetes.io/job-name` and `batch.kubernetes.io/controller-uid`), named
/// `<job>-<suffix>`, controlled by the Job.
fn pod_from_template(job: &Job) -> Pod {
    let template = job
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let meta = template.metadata.unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(format!(
                "{}-",
                job.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: job.metadata.namespace.clone(),
            labels: meta.labels,
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            owner_references: Some(vec![OwnerReference {
                api_version: "batch/v1".into(),
                kind: "Job".into(),
                name: job.metadata.name.clone().unwrap_or_default(),
                uid: job.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: template.spec,
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn job(spec: serde_json::Value) -> Job {
        serde_json::from_value(
            json!({"metadata": {"name": "pi", "namespace": "default", "uid": "j"},
            "spec": spec}),
        )
        .unwrap_or_default()
    }

    fn pod(name: &str, phase: &str) -> Arc<Pod> {
        Arc::new(serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default",
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": "j", "controller": true}]},
            "status": {"phase": phase},
        })).unwrap_or_default())
    }

    fn conditions(plan: &Plan) -> Vec<String> {
        plan.status
            .conditions
            .iter()
            .flatten()
            .map(|c| c.type_.clone())
            .collect()
    }

    #[test]
    fn pods_run_up_to_parallelism_until_completions_succeed() {
        let now = crate::clock::now();
        let j = job(json!({"completions": 3, "parallelism": 2, "template": {}}));
        let p = plan(&j, &count(&j, &[]), now);
        assert_eq!(p.create, 2);
        let p = plan(
            &j,
            &count(
                &j,
                &[
                    pod("a", "Succeeded"),
                    pod("b", "Succeeded"),
                    pod("c", "Running"),
                ],
            ),
            now,
        );
        assert_eq!((p.create, p.delete.len()), (0, 0), "one left to finish");
        let p = plan(
            &j,
            &count(
                &j,
                &[
                    pod("a", "Succeeded"),
                    pod("b", "Succeeded"),
                    pod("c", "Succeeded"),
                ],
            ),
            now,
        );
        assert_eq!(conditions(&p), ["SuccessCriteriaMet", "Complete"]);
        assert_eq!(p.status.succeeded, Some(3));
        assert!(p.status.completion_time.is_some());
    }

    #[test]
    fn failures_back_off_and_past_the_limit_fail_the_job() {
        let now = crate::clock::now();
        let j = job(json!({"completions": 1, "backoffLimit": 1, "template": {}}));
        let mut failed = (*pod("a", "Failed")).clone();
        failed.status = serde_json::from_value(json!({"phase": "Failed", "containerStatuses": [
            {"name": "c", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
             "state": {"terminated": {"exitCode": 1, "finishedAt": crate::clock::rfc3339(now)}}}]}))
        .ok();
        let p = plan(&j, &count(&j, &[Arc::new(failed.clone())]), now);
        assert_eq!(p.create, 0, "the replacement waits for the pod backoff");
        // finishedAt has second precision: the backoff is due within the next 10 s.
        let left = p.requeue.unwrap_or_default();
        assert!(
            left <= POD_BACKOFF && left > POD_BACKOFF - Duration::from_secs(1),
            "{left:?}"
        );
        let later = now.checked_add(POD_BACKOFF).unwrap_or(now);
        assert_eq!(
            plan(&j, &count(&j, &[Arc::new(failed.clone())]), later).create,
            1
        );
        let p = plan(
            &j,
            &count(&j, &[Arc::new(failed), pod("b", "Failed")]),
            later,
        );
        assert_eq!(conditions(&p), ["FailureTarget", "Failed"]);
        let reason = p
            .status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Failed")
            .and_then(|c| c.reason.clone());
        assert_eq!(reason.as_deref(), Some("BackoffLimitExceeded"));
        assert_eq!(pod_backoff(3), Duration::from_secs(40));
        assert_eq!(pod_backoff(30), MAX_POD_BACKOFF);
    }

    /// `restartPolicy: OnFailure`: the container restarts of the running pods count
    /// against `backoffLimit` (`job_controller.go` `pastBackoffLimitOnFailure`), and the
    /// pod deleted because the Job failed counts as failed.
    #[test]
    fn container_restarts_count_against_the_backoff_limit_under_on_failure() {
        let now = crate::clock::now();
        let restarting = |restarts: i32| {
            Arc::new(
                serde_json::from_value::<Pod>(json!({
                    "metadata": {"name": "a", "namespace": "default",
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": "j", "controller": true}]},
                    "status": {"phase": "Running", "containerStatuses": [
                        {"name": "c", "image": "x", "imageID": "", "ready": false,
                         "restartCount": restarts, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]},
                }))
                .unwrap_or_default(),
            )
        };
        let j = job(
            json!({"backoffLimit": 2, "template": {"spec": {"restartPolicy": "OnFailure", "containers": []}}}),
        );
        let p = plan(&j, &count(&j, &[restarting(1)]), now);
        assert!(conditions(&p).is_empty(), "{:?}", conditions(&p));
        let p = plan(&j, &count(&j, &[restarting(2)]), now);
        assert_eq!(conditions(&p), ["FailureTarget"]);
        assert_eq!(p.delete.len(), 1);
        assert_eq!(p.status.failed, Some(1));
        let never = job(
            json!({"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never", "containers": []}}}),
        );
        assert!(conditions(&plan(&never, &count(&never, &[restarting(5)]), now)).is_empty());
        let zero = job(
            json!({"backoffLimit": 0, "template": {"spec": {"restartPolicy": "OnFailure", "containers": []}}}),
        );
        assert_eq!(
            conditions(&plan(&zero, &count(&zero, &[restarting(1)]), now)),
            ["FailureTarget"]
        );
        // Once the deleted pod is gone, it still counts.
        let mut failing = j.clone();
        failing.status = Some(p.status.clone());
        let p = plan(&failing, &count(&failing, &[]), now);
        assert_eq!(conditions(&p), ["FailureTarget", "Failed"]);
        assert_eq!(p.status.failed, Some(1));
    }

    #[test]
    fn a_deadline_fails_the_job_after_its_pods_are_gone() {
        let now = crate::clock::now();
        let mut j = job(json!({"activeDeadlineSeconds": 5, "template": {}}));
        j.status = Some(JobStatus {
            start_time: Some(Time(now)),
            ..JobStatus::default()
        });
        let later = now
            .checked_add(jiff::SignedDuration::from_secs(6))
            .unwrap_or(now);
        let p = plan(&j, &count(&j, &[pod("a", "Running")]), later);
        assert_eq!(conditions(&p), ["FailureTarget"]);
        assert_eq!(p.delete.len(), 1);
        let p = plan(&j, &count(&j, &[]), later);
        assert_eq!(conditions(&p), ["FailureTarget", "Failed"]);
    }
}
