//! kube-controller-manager's CronJob controller (kubernetes
//! `pkg/controller/cronjob/cronjob_controllerv2.go` and `utils.go`): Jobs created on a
//! schedule, on the server's clock ([`crate::clock::now`]); each sync requeues the CronJob
//! for its next schedule time, so on a paused clock tokio jumps there and a `*/10` schedule
//! runs every ten minutes of server time in milliseconds of wall time.
//!
//! Schedules are parsed by the `croner` crate (POSIX / Vixie cron: five fields, names,
//! ranges, steps, day-of-month OR day-of-week, the `@yearly` / `@monthly` / `@weekly` /
//! `@daily` / `@hourly` macros); this file adds what robfig/cron's `ParseStandard` (kube's
//! parser) has beside: `@midnight`, `@every <duration>`, and a `CRON_TZ=` / `TZ=` prefix.
//! The time zone (`spec.timeZone` or the prefix) comes from the system's tz database
//! through `jiff`: `croner` matches the schedule against the zone's wall-clock time (a
//! time in a DST gap runs once the clock has jumped past it, one in a fold once).
//!
//! The sync loop (`sync` / `syncCronJob` / `cleanupFinishedJobs`), one CronJob at a time
//! (every change to it or to a Job it controls queues it):
//!
//! 1. Wait until the Job cache holds every Job this controller wrote (KEP-5647's
//!    `ConsistencyStore`); reconciles of the CronJob itself wait for its own status writes
//!    (the builder's `read_your_writes`), so a Job just created is in `status.active`.
//! 2. Reconcile `status.active` with the Jobs it controls: a finished Job leaves the list
//!    (`SawCompletedJob`); an unfinished Job not in the list is reported (`UnexpectedJob`,
//!    as a `kubectl create job --from=cronjob/...` Job is); a listed Job that no longer
//!    exists (asked of the API server, not the cache) leaves it (`MissingJob`);
//!    `lastSuccessfulTime` follows the latest completed Job.
//! 3. Being deleted: only the status. An unknown `timeZone`: an `UnknownTimeZone` warning.
//!    `suspend`: nothing is scheduled. A schedule that does not parse: an
//!    `UnparseableSchedule` warning, and nothing until the spec changes. A `TZ` in the
//!    schedule: an `UnsupportedSchedule` warning, and it is used.
//! 4. The time to run ([`most_recent_schedule_time`]): the latest schedule time after
//!    `lastScheduleTime` (or the creation time), and not before now less
//!    `startingDeadlineSeconds`, that is not after now. Missed times before it are not run:
//!    at most one Job per sync; more than 100 missed ones earn a `TooManyMissedTimes`
//!    warning. None: requeue for the next one.
//! 5. That time more than `startingDeadlineSeconds` ago: `MissSchedule` warning, requeue.
//!    Already run (its Job is active, or it is `lastScheduleTime`): requeue.
//! 6. Concurrency: `Forbid` with an active Job skips this time (`JobAlreadyActive`);
//!    `Replace` deletes the active Jobs first (background propagation); `Allow` runs
//!    beside them.
//! 7. Create the Job ([`job_from_template`]): named `<cronjob>-<scheduled time in minutes
//!    since the epoch>` (so a second create of the same time fails with AlreadyExists),
//!    the template's labels and annotations plus
//!    `batch.kubernetes.io/cronjob-scheduled-timestamp`, controlled by the CronJob. It
//!    joins `status.active`; `lastScheduleTime` becomes its time (`SuccessfulCreate`).
//! 8. History ([`jobs_to_prune`]): finished Jobs beyond `successfulJobsHistoryLimit`
//!    (default 3) and `failedJobsHistoryLimit` (default 1) are deleted, the earliest
//!    started first, with background propagation (`SuccessfulDelete`).
//! 9. Write the status when it changed, and requeue for the next schedule time (plus
//!    100 ms, `nextScheduleDelta`).

use std::{cmp::Ordering, sync::Arc, time::Duration};

use jiff::{SignedDuration, Timestamp, tz::TimeZone};
use k8s_openapi::{
    api::{
        batch::v1::{CronJob, CronJobStatus, Job},
        core::v1::ObjectReference,
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time},
};
use kube_core::Selector;
use kubegen::{
    client::{
        Error, ResourceClient,
        params::{DeleteParams, PostParams},
    },
    controller::{Action, CachedClient, Controller, ControllerError},
};
use tokio_util::sync::CancellationToken;

use super::{
    compat::Opt,
    config::Cluster,
    events::{EventType, Recorder},
    pods,
};

/// The controller's name (kube-controller-manager's `--controllers` spelling).
const NAME: &str = "cronjob";

/// The component its events name.
const COMPONENT: &str = "cronjob-controller";

/// The annotation holding a Job's scheduled time
/// (`batchv1.CronJobScheduledTimestampAnnotation`).
pub(crate) const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// How long after a schedule time the CronJob is looked at again (`nextScheduleDelta`).
const NEXT_SCHEDULE_DELTA: Duration = Duration::from_millis(100);

/// How long a sync waits for the Job cache to show the controller's own writes.
const CONSISTENCY_WAIT: Duration = Duration::from_secs(5);

/// More missed schedule times than this earn a `TooManyMissedTimes` warning.
const MANY_MISSED: i64 = 100;

/// Why a schedule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ScheduleError {
    /// The time zone is not in the tz database.
    #[error("unknown time zone {0}")]
    UnknownTimeZone(String),
    /// The cron expression does not parse.
    #[error("{0}")]
    Parse(String),
    /// Two consecutive schedule times are less than a second apart (or never come).
    #[error("time difference between two schedules is less than 1 second")]
    TooClose,
}

/// What a schedule is: cron fields, or a fixed interval (`@every`).
#[derive(Debug, Clone)]
enum Rule {
    Cron(Box<croner::Cron>),
    Every(SignedDuration),
}

/// A parsed schedule in its time zone.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    rule: Rule,
    zone: TimeZone,
}

/// Loads a time zone by IANA name (`time.LoadLocation`: "" and `UTC` are UTC, `Local` the
/// system's).
fn load_zone(name: &str) -> Result<TimeZone, ScheduleError> {
    match name {
        "" | "UTC" => Ok(TimeZone::UTC),
        "Local" => Ok(TimeZone::system()),
        _ => TimeZone::get(name).map_err(|_| ScheduleError::UnknownTimeZone(name.into())),
    }
}

impl Schedule {
    /// Parses `schedule` (`cron.ParseStandard` of `formatSchedule`'s text): a `CRON_TZ=` /
    /// `TZ=` prefix wins over `time_zone`.
    pub(crate) fn parse(schedule: &str, time_zone: Option<&str>) -> Result<Self, ScheduleError> {
        let mut text = schedule.trim();
        let mut zone = load_zone(time_zone.unwrap_or_default())?;
        if let Some(rest) = text
            .strip_prefix("CRON_TZ=")
            .or_else(|| text.strip_prefix("TZ="))
        {
            let (name, spec) = rest
                .split_once(char::is_whitespace)
                .ok_or_else(|| ScheduleError::Parse(format!("missing spec after {text:?}")))?;
            zone = load_zone(name)?;
            text = spec.trim();
        }
        let rule = if let Some(every) = text.strip_prefix("@every ") {
            let interval: SignedDuration = every.trim().parse().map_err(|e| {
                ScheduleError::Parse(format!("failed to parse duration {every}: {e}"))
            })?;
            // robfig/cron: at least a second, whole seconds.
            Rule::Every(SignedDuration::from_secs(interval.as_secs().max(1)))
        } else {
            let text = match text {
                "@midnight" => "0 0 * * *",
                other => other,
            };
            Rule::Cron(Box::new(parse_cron(text)?))
        };
        Ok(Schedule { rule, zone })
    }

    /// The first schedule time strictly after `after` (`Schedule.Next`), if any in the
    /// next few years.
    pub(crate) fn next(&self, after: Timestamp) -> Option<Timestamp> {
        match &self.rule {
            Rule::Every(interval) => {
                let whole = Timestamp::from_second(after.as_second()).ok()?;
                whole.checked_add(*interval).ok()
            }
            Rule::Cron(cron) => cron
                .find_next_occurrence(&after.to_zoned(self.zone.clone()), false)
                .ok()
                .map(|next| next.timestamp()),
        }
    }

    /// The time zone its times are written in.
    pub(crate) fn zone(&self) -> &TimeZone {
        &self.zone
    }
}

/// Parses five cron fields (or a `croner` macro) with `croner`.
fn parse_cron(text: &str) -> Result<croner::Cron, ScheduleError> {
    croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Disallowed)
        .build()
        .parse(text)
        .map_err(|e| ScheduleError::Parse(e.to_string()))
}

/// What [`most_recent_schedule_time`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recent {
    /// Where the search started: `lastScheduleTime`, or the creation time, moved up to
    /// now less `startingDeadlineSeconds` when asked.
    pub earliest: Timestamp,
    /// The latest schedule time after `earliest` and not after now.
    pub most_recent: Option<Timestamp>,
    /// About how many schedule times passed since `earliest` (0 when none).
    pub missed: i64,
}

/// `mostRecentScheduleTime`: the latest schedule time in `(earliest, now]`, and an
/// estimate of how many passed, from the interval between the first two after
/// `earliest` (so a CronJob decades behind costs two steps, not millions).
pub(crate) fn most_recent_schedule_time(
    cj: &CronJob,
    now: Timestamp,
    schedule: &Schedule,
    include_deadline: bool,
) -> Result<Recent, ScheduleError> {
    let created = cj
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |Time(t)| *t);
    let mut earliest = cj
        .status
        .as_ref()
        .and_then(|s| s.last_schedule_time.as_ref())
        .map_or(created, |Time(t)| *t);
    let deadline = cj.spec.opt().and_then(|s| s.starting_deadline_seconds);
    if include_deadline
        && let Some(seconds) = deadline
        && let Ok(limit) = now.checked_sub(SignedDuration::from_secs(seconds))
        && limit > earliest
    {
        earliest = limit;
    }
    let none = |missed| Recent {
        earliest,
        most_recent: None,
        missed,
    };
    let Some(t1) = schedule.next(earliest) else {
        return Ok(none(0));
    };
    if now < t1 {
        return Ok(none(0));
    }
    let Some(t2) = schedule.next(t1) else {
        return Ok(Recent {
            earliest,
            most_recent: Some(t1),
            missed: 1,
        });
    };
    if now < t2 {
        return Ok(Recent {
            earliest,
            most_recent: Some(t1),
            missed: 1,
        });
    }
    let between = (t2.as_millisecond() - t1.as_millisecond() + 500).div_euclid(1000);
    if between < 1 {
        return Err(ScheduleError::TooClose);
    }
    let elapsed = now.duration_since(t1).as_secs();
    let missed = elapsed / between + 1;
    // Start a little before the estimated latest time and walk forward to it.
    let back = missed.saturating_sub(2).saturating_mul(between);
    let mut t = t1
        .checked_add(SignedDuration::from_secs(back))
        .unwrap_or(t1);
    let mut most_recent = None;
    while let Some(next) = schedule.next(t) {
        if next > now {
            break;
        }
        most_recent = Some(next);
        t = next;
    }
    Ok(Recent {
        earliest,
        most_recent,
        missed,
    })
}

/// `nextScheduleTime`: the time a Job should run for now, and whether so many times were
/// missed that the user should hear of it.
pub(crate) fn next_schedule_time(
    cj: &CronJob,
    now: Timestamp,
    schedule: &Schedule,
) -> Result<(Option<Timestamp>, bool), ScheduleError> {
    let recent = most_recent_schedule_time(cj, now, schedule, true)?;
    Ok(match recent.most_recent {
        Some(t) if t <= now => (Some(t), recent.missed > MANY_MISSED),
        _ => (None, false),
    })
}

/// `nextScheduleTimeDuration`: how long until the sync after the next schedule time.
pub(crate) fn requeue_after(cj: &CronJob, now: Timestamp, schedule: &Schedule) -> Duration {
    let from = match most_recent_schedule_time(cj, now, schedule, false) {
        Err(_) => now,
        Ok(Recent {
            most_recent: Some(t),
            ..
        }) => t,
        Ok(Recent {
            earliest,
            missed: 0,
            ..
        }) => earliest,
        Ok(_) => now,
    };
    schedule
        .next(from)
        .and_then(|next| Duration::try_from(next.duration_since(now)).ok())
        .map_or(Duration::from_secs(3600), |d| d + NEXT_SCHEDULE_DELTA)
}

/// `getJobName`: `<cronjob>-<scheduled time in minutes since the epoch>`.
pub(crate) fn job_name(cronjob: &str, scheduled: Timestamp) -> String {
    format!("{cronjob}-{}", scheduled.as_second().div_euclid(60))
}

/// `t` as Go's `time.RFC3339` writes it in `zone` (`Z` for a zero offset).
fn rfc3339_in(t: Timestamp, zone: &TimeZone) -> String {
    let zoned = t.to_zoned(zone.clone());
    if zoned.offset().seconds() == 0 {
        zoned.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
    }
}

/// The controller reference Jobs of `cj` carry.
fn owner_reference(cj: &CronJob) -> OwnerReference {
    OwnerReference {
        api_version: "batch/v1".into(),
        kind: "CronJob".into(),
        name: cj.metadata.name.clone().unwrap_or_default(),
        uid: cj.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `getJobFromTemplate2`: the Job of `cj` for `scheduled`.
pub(crate) fn job_from_template(cj: &CronJob, scheduled: Timestamp, zone: &TimeZone) -> Job {
    let template = cj
        .spec
        .opt()
        .map(|s| s.job_template.clone())
        .unwrap_or_default();
    let meta = template.metadata.unwrap_or_default();
    let mut annotations = meta.annotations.unwrap_or_default();
    annotations.insert(SCHEDULED_TIMESTAMP.into(), rfc3339_in(scheduled, zone));
    Job {
        metadata: ObjectMeta {
            name: Some(job_name(
                cj.metadata.name.as_deref().unwrap_or_default(),
                scheduled,
            )),
            namespace: cj.metadata.namespace.clone(),
            labels: meta.labels,
            annotations: Some(annotations),
            owner_references: Some(vec![owner_reference(cj)]),
            ..ObjectMeta::default()
        },
        spec: template.spec,
        status: None,
    }
}

/// The finished condition of a Job (`Complete` or `Failed`, True), if any.
fn finished(job: &Job) -> Option<&str> {
    job.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| matches!(c.type_.as_str(), "Complete" | "Failed") && c.status == "True")
        .map(|c| c.type_.as_str())
}

/// `byJobStartTime`: started Jobs by start time (unstarted last), then by name.
fn by_start_time(a: &Job, b: &Job) -> Ordering {
    let start = |j: &Job| j.status.as_ref()?.start_time.clone().map(|Time(t)| t);
    match (start(a), start(b)) {
        (Some(x), Some(y)) if x != y => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        _ => a.metadata.name.cmp(&b.metadata.name),
    }
}

/// `cleanupFinishedJobs` / `removeOldestJobs`: indexes of the Jobs to delete so that at
/// most `successful` completed and `failed` failed Jobs remain, the earliest started
/// first. `None` keeps every Job of that kind.
pub(crate) fn jobs_to_prune(
    jobs: &[&Job],
    successful: Option<i32>,
    failed: Option<i32>,
) -> Vec<usize> {
    let mut chosen = Vec::new();
    for (kind, limit) in [("Complete", successful), ("Failed", failed)] {
        let Some(limit) = limit else {
            continue;
        };
        let mut of_kind: Vec<usize> = (0..jobs.len())
            .filter(|&i| finished(jobs[i]) == Some(kind))
            .collect();
        let keep = usize::try_from(limit.max(0)).unwrap_or(0);
        let excess = of_kind.len().saturating_sub(keep);
        of_kind.sort_by(|&a, &b| by_start_time(jobs[a], jobs[b]));
        chosen.extend(of_kind.into_iter().take(excess));
    }
    chosen
}

/// An Event to record about the CronJob.
type Note = (EventType, &'static str, String);

struct Context {
    cluster: Arc<Cluster>,
    recorder: Recorder,
    jobs: CachedClient<Job>,
    cronjobs: CachedClient<CronJob>,
}

/// Runs the CronJob controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let informer_error = |source| ControllerError::Informer {
        controller: NAME.into(),
        source,
    };
    let jobs = CachedClient::<Job>::new(cluster.client.clone(), &cluster.factory)
        .map_err(informer_error)?;
    let cronjobs = CachedClient::<CronJob>::new(cluster.client.clone(), &cluster.factory)
        .map_err(informer_error)?;
    let controller = Controller::<CronJob>::builder(&cluster.factory)
        .named(NAME)
        .owns::<Job>()
        .read_your_writes(&cronjobs)
        .build();
    let cx = Arc::new(Context {
        recorder: cluster.recorder(COMPONENT),
        cluster,
        jobs,
        cronjobs,
    });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

/// The object reference of `job` (`getRef`), as `status.active` lists it.
fn job_reference(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some("batch/v1".into()),
        kind: Some("Job".into()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        resource_version: job.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

fn in_active(status: &CronJobStatus, uid: Option<&str>) -> bool {
    status
        .active
        .iter()
        .flatten()
        .any(|r| r.uid.as_deref() == uid && uid.is_some())
}

fn remove_active(status: &mut CronJobStatus, uid: Option<&str>) {
    if let Some(active) = status.active.as_mut() {
        active.retain(|r| r.uid.as_deref() != uid);
    }
}

/// Step 2 without I/O: the status after looking at the Jobs, the events to record, and the
/// listed Jobs the cache does not hold (to ask the API server about).
fn reconcile_active(
    status: &mut CronJobStatus,
    jobs: &[Arc<Job>],
) -> (Vec<Note>, Vec<ObjectReference>) {
    let mut notes = Vec::new();
    for job in jobs {
        let uid = job.metadata.uid.as_deref();
        let name = job.metadata.name.clone().unwrap_or_default();
        let listed = in_active(status, uid);
        match finished(job) {
            None if !listed => notes.push((
                EventType::Warning,
                "UnexpectedJob",
                format!("Saw a job that the controller did not create or forgot: {name}"),
            )),
            Some(condition) if listed => {
                remove_active(status, uid);
                notes.push((
                    EventType::Normal,
                    "SawCompletedJob",
                    format!("Saw completed job: {name}, condition: {condition}"),
                ));
            }
            _ => {}
        }
        if finished(job) == Some("Complete")
            && let Some(done) = job.status.as_ref().and_then(|s| s.completion_time.clone())
            && status
                .last_successful_time
                .as_ref()
                .is_none_or(|t| t.0 < done.0)
        {
            status.last_successful_time = Some(done);
        }
    }
    let missing = status
        .active
        .iter()
        .flatten()
        .filter(|r| !jobs.iter().any(|j| j.metadata.uid == r.uid))
        .cloned()
        .collect();
    (notes, missing)
}

async fn reconcile(cj: Arc<CronJob>, cx: Arc<Context>) -> Result<Action, Error> {
    // 1.
    if let Some(consistency) = cx.jobs.consistency()
        && !consistency.ensure_all_ready(CONSISTENCY_WAIT).await
    {
        return Ok(Action::requeue_after(Duration::from_millis(100)));
    }
    let namespace = cj.metadata.namespace.clone().unwrap_or_default();
    let uid = cj.metadata.uid.clone().unwrap_or_default();
    let jobs: Vec<Arc<Job>> = cx
        .jobs
        .lister()
        .namespaced(&namespace)
        .list(&Selector::default())
        .into_iter()
        .filter(|j| pods::is_controlled_by(&j.metadata, &uid))
        .collect();
    let mut status = cj.status.clone().unwrap_or_default();
    let mut notes = Vec::new();
    let requeue = match sync(&cj, &cx, &jobs, &mut status, &mut notes).await {
        Ok(requeue) => requeue,
        Err(e) if e.is_conflict() || e.is_not_found() => return Ok(Action::done()),
        Err(e) => {
            record(&cx, &cj, notes).await;
            return Err(e);
        }
    };
    // 8.
    let refs: Vec<&Job> = jobs.iter().map(AsRef::as_ref).collect();
    let spec = cj.spec.opt().cloned().unwrap_or_default();
    for i in jobs_to_prune(
        &refs,
        spec.successful_jobs_history_limit,
        spec.failed_jobs_history_limit,
    ) {
        let job = refs[i];
        match cx
            .jobs
            .delete(
                job.metadata.namespace.as_deref(),
                job.metadata.name.as_deref().unwrap_or_default(),
                &DeleteParams::background(),
            )
            .await
        {
            Ok(_) => {
                remove_active(&mut status, job.metadata.uid.as_deref());
                notes.push((
                    EventType::Normal,
                    "SuccessfulDelete",
                    format!(
                        "Deleted job {}",
                        job.metadata.name.as_deref().unwrap_or_default()
                    ),
                ));
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => notes.push((
                EventType::Warning,
                "FailedDelete",
                format!("Deleted job: {e}"),
            )),
        }
    }
    record(&cx, &cj, notes).await;
    // 9.
    if status.active.as_ref().is_some_and(Vec::is_empty) {
        status.active = None;
    }
    let before = cj.status.clone().unwrap_or_default();
    if before != status {
        let mut updated = (*cj).clone();
        updated.status = Some(status);
        match cx
            .cronjobs
            .update_status(&PostParams::default(), &updated)
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_conflict() || e.is_not_found() => return Ok(Action::done()),
            Err(e) => return Err(e),
        }
    }
    Ok(requeue.map_or_else(Action::done, Action::requeue_after))
}

async fn record(cx: &Context, cj: &CronJob, notes: Vec<Note>) {
    for (kind, reason, message) in notes {
        cx.recorder.record(cj, kind, reason, message).await;
    }
}

/// Steps 2 to 7: updates `status`, collects events, and says when to look again.
async fn sync(
    cj: &CronJob,
    cx: &Context,
    jobs: &[Arc<Job>],
    status: &mut CronJobStatus,
    notes: &mut Vec<Note>,
) -> Result<Option<Duration>, Error> {
    // 2.
    let (seen, missing) = reconcile_active(status, jobs);
    notes.extend(seen);
    let namespace = cj.metadata.namespace.clone().unwrap_or_default();
    let job_client: ResourceClient<Job> =
        ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
    for r in missing {
        let name = r.name.clone().unwrap_or_default();
        match job_client.get(&name).await {
            Err(e) if e.is_not_found() => {
                notes.push((
                    EventType::Normal,
                    "MissingJob",
                    format!("Active job went missing: {name}"),
                ));
                remove_active(status, r.uid.as_deref());
            }
            Err(e) => return Err(e),
            Ok(_) => {}
        }
    }
    // 3.
    if cj.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    let spec = cj.spec.opt().cloned().unwrap_or_default();
    if let Some(zone) = spec.time_zone.as_deref()
        && let Err(err) = load_zone(zone)
    {
        notes.push((
            EventType::Warning,
            "UnknownTimeZone",
            format!("invalid timeZone: {zone:?}: {err}"),
        ));
        return Ok(None);
    }
    if spec.suspend == Some(true) {
        return Ok(None);
    }
    if spec.schedule.contains("TZ") {
        notes.push((
            EventType::Warning,
            "UnsupportedSchedule",
            format!(
                "CRON_TZ or TZ used in schedule {:?} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
                spec.schedule
            ),
        ));
    }
    let schedule = match Schedule::parse(&spec.schedule, spec.time_zone.as_deref()) {
        Ok(schedule) => schedule,
        Err(err) => {
            tracing::debug!(cronjob = ?cj.metadata.name, %err, "unparseable schedule");
            notes.push((
                EventType::Warning,
                "UnparseableSchedule",
                format!("unparseable schedule: {:?} : {err}", spec.schedule),
            ));
            return Ok(None);
        }
    };
    // With the status as it is now (for `lastScheduleTime`).
    let mut current = cj.clone();
    current.status = Some(status.clone());
    let now = crate::clock::now();
    // 4.
    let scheduled = match next_schedule_time(&current, now, &schedule) {
        Err(err) => {
            notes.push((
                EventType::Warning,
                "InvalidSchedule",
                format!("invalid schedule: {} : {err}", spec.schedule),
            ));
            return Ok(None);
        }
        Ok((None, _)) => return Ok(Some(requeue_after(&current, now, &schedule))),
        Ok((Some(t), many_missed)) => {
            if many_missed {
                notes.push((
                    EventType::Warning,
                    "TooManyMissedTimes",
                    "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew".into(),
                ));
            }
            t
        }
    };
    // 5.
    let too_late = spec.starting_deadline_seconds.is_some_and(|s| {
        scheduled
            .checked_add(SignedDuration::from_secs(s))
            .is_ok_and(|deadline| deadline < now)
    });
    if too_late {
        notes.push((
            EventType::Warning,
            "MissSchedule",
            format!(
                "Missed scheduled time to start a job: {}",
                scheduled.strftime("%a, %d %b %Y %H:%M:%S +0000")
            ),
        ));
        return Ok(Some(requeue_after(&current, now, &schedule)));
    }
    let name = job_name(cj.metadata.name.as_deref().unwrap_or_default(), scheduled);
    let already = status
        .active
        .iter()
        .flatten()
        .any(|r| r.name.as_deref() == Some(name.as_str()))
        || status.last_schedule_time.as_ref().map(|t| t.0) == Some(scheduled);
    if already {
        return Ok(Some(requeue_after(&current, now, &schedule)));
    }
    // 6.
    let policy = spec.concurrency_policy.as_deref().unwrap_or("Allow");
    let active = status.active.clone().unwrap_or_default();
    if policy == "Forbid" && !active.is_empty() {
        notes.push((
            EventType::Normal,
            "JobAlreadyActive",
            "Not starting job because prior execution is running and concurrency policy is Forbid"
                .into(),
        ));
        return Ok(Some(requeue_after(&current, now, &schedule)));
    }
    if policy == "Replace" {
        for r in &active {
            let old = r.name.clone().unwrap_or_default();
            match cx
                .jobs
                .delete(Some(&namespace), &old, &DeleteParams::background())
                .await
            {
                Ok(_) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => {
                    notes.push((
                        EventType::Warning,
                        "FailedDelete",
                        format!("Deleted job: {e}"),
                    ));
                    return Err(e);
                }
            }
            remove_active(status, r.uid.as_deref());
            notes.push((
                EventType::Normal,
                "SuccessfulDelete",
                format!("Deleted job {old}"),
            ));
        }
    }
    // 7.
    let job = job_from_template(cj, scheduled, schedule.zone());
    let created = match cx.jobs.create(&PostParams::default(), &job).await {
        Ok(created) => {
            notes.push((
                EventType::Normal,
                "SuccessfulCreate",
                format!("Created job {name}"),
            ));
            created
        }
        Err(e) if e.is_already_exists() => {
            let existing = job_client.get(&name).await?;
            if !pods::is_controlled_by(
                &existing.metadata,
                cj.metadata.uid.as_deref().unwrap_or_default(),
            ) || in_active(status, existing.metadata.uid.as_deref())
            {
                return Ok(None);
            }
            existing
        }
        Err(e) => {
            notes.push((
                EventType::Warning,
                "FailedCreate",
                format!("Error creating job: {e}"),
            ));
            return Err(e);
        }
    };
    status
        .active
        .get_or_insert_with(Vec::new)
        .push(job_reference(&created));
    status.last_schedule_time = Some(Time(scheduled));
    current.status = Some(status.clone());
    Ok(Some(requeue_after(&current, now, &schedule)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn cronjob(schedule: &str, created: &str, extra: serde_json::Value) -> CronJob {
        let mut v = json!({
            "metadata": {"name": "tick", "namespace": "default", "uid": "c",
                "creationTimestamp": created},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": {}}}},
        });
        json_patch::merge(&mut v, &extra);
        serde_json::from_value(v).unwrap_or_default()
    }

    fn parse(s: &str) -> Schedule {
        match Schedule::parse(s, None) {
            Ok(schedule) => schedule,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    /// robfig/cron `ParseStandard` semantics: five fields, macros, strictly after.
    #[test]
    fn next_schedule_times_follow_standard_cron() {
        let every_ten = parse("*/10 * * * *");
        assert_eq!(
            every_ten.next(at("2026-01-01T00:00:00Z")),
            Some(at("2026-01-01T00:10:00Z"))
        );
        assert_eq!(
            every_ten.next(at("2026-01-01T00:09:59.5Z")),
            Some(at("2026-01-01T00:10:00Z"))
        );
        assert_eq!(
            parse("@hourly").next(at("2026-01-01T00:30:00Z")),
            Some(at("2026-01-01T01:00:00Z"))
        );
        assert_eq!(
            parse("@daily").next(at("2026-01-01T00:30:00Z")),
            Some(at("2026-01-02T00:00:00Z"))
        );
        assert_eq!(
            parse("@midnight").next(at("2026-01-01T00:30:00Z")),
            Some(at("2026-01-02T00:00:00Z"))
        );
        assert_eq!(
            parse("@every 90s").next(at("2026-01-01T00:00:00.5Z")),
            Some(at("2026-01-01T00:01:30Z"))
        );
        // 2026-01-05 is a Monday; day-of-week 1.
        assert_eq!(
            parse("30 6 * * 1").next(at("2026-01-01T00:00:00Z")),
            Some(at("2026-01-05T06:30:00Z"))
        );
        assert!(Schedule::parse("not a schedule", None).is_err());
        assert!(
            Schedule::parse("* * * * * *", None).is_err(),
            "no seconds field"
        );
        assert!(Schedule::parse("61 * * * *", None).is_err());
    }

    /// `spec.timeZone` and `CRON_TZ=`: the schedule is matched on the zone's wall clock.
    #[test]
    fn time_zones_shift_schedule_times() {
        let berlin =
            Schedule::parse("0 9 * * *", Some("Europe/Berlin")).unwrap_or_else(|e| panic!("{e}"));
        // 09:00 in Berlin in January is 08:00 UTC.
        assert_eq!(
            berlin.next(at("2026-01-01T00:00:00Z")),
            Some(at("2026-01-01T08:00:00Z"))
        );
        let prefixed = parse("CRON_TZ=America/New_York 0 9 * * *");
        assert_eq!(
            prefixed.next(at("2026-07-01T00:00:00Z")),
            Some(at("2026-07-01T13:00:00Z"))
        );
        assert_eq!(
            Schedule::parse("0 9 * * *", Some("Mars/Olympus")).err(),
            Some(ScheduleError::UnknownTimeZone("Mars/Olympus".into()))
        );
        assert_eq!(
            rfc3339_in(at("2026-01-01T08:00:00Z"), berlin.zone()),
            "2026-01-01T09:00:00+01:00"
        );
        assert_eq!(
            rfc3339_in(at("2026-01-01T08:00:00Z"), &TimeZone::UTC),
            "2026-01-01T08:00:00Z"
        );
    }

    /// `utils.go` `mostRecentScheduleTime`: only the latest missed time runs; more than 100
    /// missed are flagged; `startingDeadlineSeconds` moves the window.
    #[test]
    fn missed_schedules_run_once_for_the_latest_time() {
        let every_minute = parse("* * * * *");
        let cj = cronjob("* * * * *", "2026-01-01T00:00:00Z", json!({}));
        let (t, many) =
            next_schedule_time(&cj, at("2026-01-01T00:00:30Z"), &every_minute).unwrap_or_default();
        assert_eq!((t, many), (None, false));
        let (t, many) =
            next_schedule_time(&cj, at("2026-01-01T00:05:30Z"), &every_minute).unwrap_or_default();
        assert_eq!((t, many), (Some(at("2026-01-01T00:05:00Z")), false));
        let (t, many) =
            next_schedule_time(&cj, at("2026-01-01T03:00:10Z"), &every_minute).unwrap_or_default();
        assert_eq!((t, many), (Some(at("2026-01-01T03:00:00Z")), true));
        let bounded = cronjob(
            "* * * * *",
            "2026-01-01T00:00:00Z",
            json!({"spec": {"startingDeadlineSeconds": 200}}),
        );
        let (t, many) = next_schedule_time(&bounded, at("2026-01-01T03:00:10Z"), &every_minute)
            .unwrap_or_default();
        assert_eq!((t, many), (Some(at("2026-01-01T03:00:00Z")), false));
        let done = cronjob(
            "* * * * *",
            "2026-01-01T00:00:00Z",
            json!({"status": {"lastScheduleTime": "2026-01-01T00:05:00Z"}}),
        );
        let (t, _) = next_schedule_time(&done, at("2026-01-01T00:05:30Z"), &every_minute)
            .unwrap_or_default();
        assert_eq!(t, None, "the last schedule time is not run twice");
        let wait = requeue_after(&done, at("2026-01-01T00:05:30Z"), &every_minute);
        assert_eq!(wait, Duration::from_secs(30) + NEXT_SCHEDULE_DELTA);
    }

    /// `getJobFromTemplate2` and `getJobName`.
    #[test]
    fn jobs_are_named_by_their_minute_and_carry_the_template() {
        let cj = cronjob(
            "*/10 * * * *",
            "2026-01-01T00:00:00Z",
            json!({"spec": {"jobTemplate": {"metadata": {"labels": {"app": "tick"},
                "annotations": {"note": "x"}}}}}),
        );
        let job = job_from_template(&cj, at("2026-01-01T00:10:00Z"), &TimeZone::UTC);
        assert_eq!(job.metadata.name.as_deref(), Some("tick-29453770"));
        let annotations = job.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(
            annotations.get(SCHEDULED_TIMESTAMP).map(String::as_str),
            Some("2026-01-01T00:10:00Z")
        );
        assert_eq!(annotations.get("note").map(String::as_str), Some("x"));
        let labels = job.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.get("app").map(String::as_str), Some("tick"));
        let owner = job.metadata.owner_references.unwrap_or_default();
        assert_eq!(
            (owner[0].kind.as_str(), owner[0].controller),
            ("CronJob", Some(true))
        );
    }

    /// `cleanupFinishedJobs`: the earliest started finished Jobs beyond each limit go;
    /// active ones never.
    #[test]
    fn history_limits_prune_the_oldest_finished_jobs() {
        let job = |name: &str, start: &str, condition: Option<&str>| -> Job {
            let conditions =
                condition.map_or(json!([]), |c| json!([{"type": c, "status": "True"}]));
            serde_json::from_value(json!({"metadata": {"name": name},
                "status": {"startTime": start, "conditions": conditions}}))
            .unwrap_or_default()
        };
        let jobs = [
            job("s3", "2026-01-01T00:30:00Z", Some("Complete")),
            job("s1", "2026-01-01T00:10:00Z", Some("Complete")),
            job("f1", "2026-01-01T00:05:00Z", Some("Failed")),
            job("s2", "2026-01-01T00:20:00Z", Some("Complete")),
            job("f2", "2026-01-01T00:25:00Z", Some("Failed")),
            job("a", "2026-01-01T00:00:00Z", None),
        ];
        let refs: Vec<&Job> = jobs.iter().collect();
        assert_eq!(jobs_to_prune(&refs, Some(1), Some(1)), vec![1, 3, 2]);
        assert_eq!(jobs_to_prune(&refs, Some(3), Some(0)), vec![2, 4]);
        assert!(jobs_to_prune(&refs, None, None).is_empty());
    }
}
