//! The CronJob controller on the cluster in a process, on a paused clock: hours of
//! schedule in milliseconds of wall time (`pkg/controller/cronjob/cronjob_controllerv2.go`,
//! `utils.go`; <https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/>).

use std::{future::Future, time::Duration};

use k8s_openapi::api::{
    batch::v1::{CronJob, Job},
    core::v1::Event,
};
use kubegen::client::{
    Client, ResourceClient,
    params::{ListParams, Patch, PatchParams, PostParams},
};
use kubegen_testserver::ClusterConfig;
use serde_json::json;

use crate::common::cluster;

fn cronjob(name: &str, schedule: &str, extra: serde_json::Value) -> CronJob {
    let mut v = json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {
                "metadata": {"labels": {"app": name}},
                "spec": {"template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "tick", "image": "busybox"}],
                }}},
            },
        },
    });
    json_patch::merge(&mut v, &extra);
    serde_json::from_value(v).unwrap()
}

/// Polls `check` once a virtual minute for up to `minutes` minutes of server time.
async fn within<T, F, Fut>(minutes: u64, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..=minutes * 6 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    panic!("no {what} within {minutes} minutes");
}

async fn jobs_of(client: &Client, app: &str) -> Vec<Job> {
    let mut jobs = ResourceClient::<Job>::namespaced(client.clone(), "default")
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .unwrap()
        .items;
    jobs.sort_by_key(|j| j.metadata.name.clone());
    jobs
}

fn is_complete(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == "Complete" && c.status == "True")
}

fn names(jobs: &[Job]) -> Vec<String> {
    jobs.iter()
        .filter_map(|j| j.metadata.name.clone())
        .collect()
}

/// The reasons of the CronJob controller's events (about CronJobs), oldest first.
async fn reasons(client: &Client) -> Vec<String> {
    ResourceClient::<Event>::namespaced(client.clone(), "default")
        .list(&ListParams::default().fields("involvedObject.kind=CronJob"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|e| e.reason)
        .collect()
}

async fn get(client: &Client, name: &str) -> CronJob {
    ResourceClient::<CronJob>::namespaced(client.clone(), "default")
        .get(name)
        .await
        .unwrap()
}

/// A `*/10 * * * *` CronJob runs a Job every ten minutes of server time, named by its
/// scheduled minute and annotated with its time; finished Jobs beyond
/// `successfulJobsHistoryLimit` (default 3) are deleted; the status tracks
/// `lastScheduleTime` and `lastSuccessfulTime` (`syncCronJob`, `cleanupFinishedJobs`).
#[tokio::test]
async fn a_cronjob_runs_a_job_every_ten_minutes_and_keeps_three() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let wall = std::time::Instant::now();
    ResourceClient::<CronJob>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &cronjob("tick", "*/10 * * * *", json!({})),
        )
        .await
        .unwrap();
    // The first run, at the next multiple of ten minutes.
    let first = within(11, "first job", || async {
        jobs_of(&client, "tick").await.into_iter().next()
    })
    .await;
    let first_minute: i64 = names(std::slice::from_ref(&first))[0]
        .trim_start_matches("tick-")
        .parse()
        .unwrap();
    assert_eq!(first_minute % 10, 0, "named by the scheduled minute");
    let annotations = first.metadata.annotations.clone().unwrap();
    let scheduled: jiff::Timestamp = annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        .parse()
        .unwrap();
    assert_eq!(scheduled.as_second(), first_minute * 60);
    let owner = &first.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("CronJob", "tick")
    );

    // Five more runs: six in all, three kept.
    let last = first_minute + 50;
    within(52, "the sixth job complete", || async {
        let jobs = jobs_of(&client, "tick").await;
        jobs.iter()
            .any(|j| {
                j.metadata.name.as_deref() == Some(format!("tick-{last}").as_str())
                    && is_complete(j)
            })
            .then_some(())
    })
    .await;
    let jobs = within(2, "history pruned to three", || async {
        let jobs = jobs_of(&client, "tick").await;
        (jobs.len() == 3).then_some(jobs)
    })
    .await;
    assert_eq!(
        names(&jobs),
        [30, 40, 50].map(|m| format!("tick-{}", first_minute + m))
    );
    assert!(jobs.iter().all(is_complete));
    let cj = get(&client, "tick").await;
    let status = cj.status.unwrap();
    assert_eq!(status.last_schedule_time.unwrap().0.as_second(), last * 60);
    assert!(status.last_successful_time.unwrap().0.as_second() > last * 60);
    assert!(status.active.unwrap_or_default().is_empty());
    let reasons = reasons(&client).await;
    assert_eq!(
        reasons.iter().filter(|r| *r == "SuccessfulCreate").count(),
        6,
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|r| r == "SuccessfulDelete"));
    assert!(
        wall.elapsed() < Duration::from_secs(30),
        "an hour of schedule took {:?} of wall time",
        wall.elapsed()
    );
}

/// `concurrencyPolicy: Forbid` skips a schedule time while a Job is active
/// (`JobAlreadyActive`); `Replace` deletes the active Job and starts the new one.
#[tokio::test]
async fn forbid_skips_while_a_job_runs_and_replace_replaces_it() {
    // Pods run 25 minutes: each Job is still active at the next two schedule times.
    let config = ClusterConfig::default().pod_run_time(Duration::from_secs(25 * 60));
    let (_server, client) = cluster(config).await;
    let cronjobs = ResourceClient::<CronJob>::namespaced(client.clone(), "default");
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob(
                "forbid",
                "*/10 * * * *",
                json!({"spec": {"concurrencyPolicy": "Forbid"}}),
            ),
        )
        .await
        .unwrap();
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob(
                "replace",
                "*/10 * * * *",
                json!({"spec": {"concurrencyPolicy": "Replace"}}),
            ),
        )
        .await
        .unwrap();
    let first = within(11, "first forbid job", || async {
        jobs_of(&client, "forbid").await.into_iter().next()
    })
    .await;
    let first_replace = within(1, "first replace job", || async {
        jobs_of(&client, "replace").await.into_iter().next()
    })
    .await;
    // Two more schedule times pass while the first Jobs run.
    tokio::time::sleep(Duration::from_secs(21 * 60)).await;
    assert_eq!(names(&jobs_of(&client, "forbid").await), names(&[first]));
    assert!(
        reasons(&client)
            .await
            .iter()
            .any(|r| r == "JobAlreadyActive")
    );
    let replaced = jobs_of(&client, "replace").await;
    let live: Vec<&Job> = replaced
        .iter()
        .filter(|j| j.metadata.deletion_timestamp.is_none())
        .collect();
    assert_eq!(live.len(), 1, "{:?}", names(&replaced));
    assert_ne!(live[0].metadata.name, first_replace.metadata.name);
    let active = get(&client, "replace")
        .await
        .status
        .unwrap()
        .active
        .unwrap();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0].name, live[0].metadata.name);
}

/// `suspend: true` schedules nothing; resumed without `startingDeadlineSeconds`, the
/// CronJob runs the latest time it missed at once, one Job and not one per missed time
/// (`mostRecentScheduleTime`).
#[tokio::test]
async fn a_suspended_cronjob_runs_nothing_until_resumed() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let cronjobs = ResourceClient::<CronJob>::namespaced(client.clone(), "default");
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob("paused", "*/10 * * * *", json!({"spec": {"suspend": true}})),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(35 * 60)).await;
    assert!(jobs_of(&client, "paused").await.is_empty());
    cronjobs
        .patch(
            "paused",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"suspend": false}})),
        )
        .await
        .unwrap();
    let jobs = within(1, "a job after resuming", || async {
        let jobs = jobs_of(&client, "paused").await;
        (!jobs.is_empty()).then_some(jobs)
    })
    .await;
    // Three schedule times passed while suspended; at most the next one may have come too.
    assert!((1..=2).contains(&jobs.len()), "{:?}", names(&jobs));
}

/// A schedule that does not parse gets kube's `UnparseableSchedule` warning and no Job;
/// the controller keeps running.
#[tokio::test]
async fn an_unparseable_schedule_is_a_warning_not_a_crash() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let cronjobs = ResourceClient::<CronJob>::namespaced(client.clone(), "default");
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob("broken", "every tuesday", json!({})),
        )
        .await
        .unwrap();
    within(1, "an UnparseableSchedule warning", || async {
        reasons(&client)
            .await
            .iter()
            .any(|r| r == "UnparseableSchedule")
            .then_some(())
    })
    .await;
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob("fine", "@hourly", json!({})),
        )
        .await
        .unwrap();
    within(61, "the hourly job", || async {
        (!jobs_of(&client, "fine").await.is_empty()).then_some(())
    })
    .await;
    assert!(jobs_of(&client, "broken").await.is_empty());
}
