//! kube-apiserver's coordinated leader election controller (KEP-4355, the
//! `CoordinatedLeaderElection` feature, beta in Kubernetes 1.33:
//! `pkg/controlplane/controller/leaderelection/leaderelection_controller.go`, its election
//! rules in `election.go`). Components declare themselves candidates for a Lease with a
//! `coordination.k8s.io/v1beta1` LeaseCandidate (their binary and emulation versions, the
//! strategy they want); this controller picks the holder, so that during a mixed-version
//! rollout the oldest compatible component leads. A coordinated candidate never takes a
//! Lease itself (client-go's `tryCoordinatedRenew`): it leads once the Lease names it, and
//! steps down when the Lease names another `preferredHolder`.
//!
//! The sync loop, one Lease (`namespace/name`) at a time: a LeaseCandidate's change queues
//! the Lease its `spec.leaseName` names (unless the change is a ping still waiting for its
//! answer), a Lease's change queues that Lease, and a step queues it again 5 s later
//! (`defaultRequeueInterval`), so an expiring Lease is noticed — except a step that found
//! no candidate or waits for an answer (a candidate's change brings it back).
//!
//! 1. **Candidates** (`listAdmissableCandidates`): the LeaseCandidates of the namespace
//!    whose `spec.leaseName` is the Lease's name, without those that have not renewed for
//!    30 minutes (`leaseCandidateValidDuration`). None: nothing to do, no requeue.
//! 2. **Is an election needed?** (`electionNeeded`) Yes when the Lease does not exist,
//!    has expired (`renewTime + leaseDurationSeconds` before now) or has no holder, or
//!    when a candidate has not renewed for 15 minutes (a refresh of every candidate). No
//!    when the strategy (step 6) cannot be decided or is not `OldestEmulationVersion`, or
//!    when the best candidate (step 7) already holds it. Otherwise yes.
//! 3. **Pings** (the first loop of `reconcileElectionStep`): a candidate pinged less than
//!    5 s ago (`electionDuration`) that has not answered yet holds the vote back; one that
//!    renewed in the last 5 s is fine; any other is pinged (`spec.pingTime` = now) if it
//!    was never pinged or answered its last ping, which also holds the vote back. A
//!    candidate that did not answer its ping within 5 s is not pinged again: it has
//!    dropped out. Vote held back: requeue.
//! 4. **Waiting**: a candidate pinged less than 5 s ago that has not answered ends the
//!    step without a requeue (its answer queues the Lease).
//! 5. **Acked candidates**: those that renewed in the last 5 s (`renewTime` at or after a
//!    ping counts as its answer). None: an error.
//! 6. **Strategy** (`pickBestStrategy`): the one the candidate with the highest binary
//!    version asks for; two candidates of that binary version asking for different
//!    strategies is an error, and no Lease is touched.
//! 7. **Electee** (`pickBestLeaderOldestEmulationVersion`), under `OldestEmulationVersion`
//!    only: among candidates whose emulation and binary versions parse as (tolerant)
//!    semantic versions, the lowest emulation version, then the lowest binary version,
//!    then the oldest `creationTimestamp` (`compare`). Another strategy leaves the holder
//!    to someone else.
//! 8. **Lease**: created holding the electee (`strategy`, `leaseDurationSeconds` 5,
//!    `renewTime` now). If it exists: its `strategy` is corrected; a Lease without holder,
//!    or expired, gets the electee as holder (`preferredHolder` cleared, `renewTime` now,
//!    5 s, no `acquireTime`); a valid Lease held by another candidate gets the electee as
//!    `preferredHolder`, and its holder steps down. Unchanged: nothing written.
//!
//! Two departures from the Go source, both about liveness: an answer stamped at the same
//! instant as its ping counts as an answer (a paused clock stamps both alike; later Go
//! sources compare the same way), and an expired Lease whose holder is still the best
//! candidate is reset too, so the holder's elector sees a fresh Lease and renews it (Go
//! leaves it expired). A failed step is retried with the queue's backoff. The LeaseCandidate
//! garbage collector (`leasecandidategc_controller.go`, which deletes candidates 30
//! minutes stale) is not run: stale candidates are skipped by step 1.

use std::{cmp::Ordering, sync::Arc, time::Duration};

use k8s_openapi::{
    api::coordination::{
        v1::{Lease, LeaseSpec},
        v1beta1::{LeaseCandidate, LeaseCandidateSpec},
    },
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
};
use kube_core::Selector;
use kubegen::{
    cache::{CacheSynced, Dispatch, HandlerOptions, Lister, ResourceEventHandlerFuncs},
    client::{Client, Error as ClientError, ResourceClient, params::PostParams},
    controller::ControllerError,
    workqueue::RateLimitingQueue,
};
use tokio_util::sync::CancellationToken;

use super::config::Cluster;

/// The controller's name (`controllerName`).
const NAME: &str = "leader-election-controller";

/// How soon a Lease is looked at again (`defaultRequeueInterval`).
const REQUEUE: Duration = Duration::from_secs(5);

/// The duration of a Lease the controller writes (`defaultLeaseDurationSeconds`).
const LEASE_DURATION_SECONDS: i32 = 5;

/// How long a ping waits for its answer, and how recent a renewal counts as one
/// (`electionDuration`).
const ELECTION_DURATION: Duration = Duration::from_secs(5);

/// How long a candidate counts without renewing (`leaseCandidateValidDuration`); half of
/// it without renewing forces an election, which pings it.
const CANDIDATE_VALID: Duration = Duration::from_secs(30 * 60);

/// The one strategy this controller elects by (`coordinationv1.OldestEmulationVersion`).
pub(crate) const OLDEST_EMULATION_VERSION: &str = "OldestEmulationVersion";

/// A Lease: its namespace and name.
type Key = (String, String);

/// Why an election step could not finish.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ElectionError {
    /// Two candidates of the highest binary version want different strategies.
    #[error(
        "candidates {first:?} and {second:?} are at the same binary version but ask for different strategies {first_strategy:?} and {second_strategy:?}"
    )]
    ConflictingStrategies {
        /// The candidate whose strategy was chosen so far.
        first: String,
        /// The candidate that disagrees.
        second: String,
        /// The first one's strategy.
        first_strategy: String,
        /// The second one's strategy.
        second_strategy: String,
    },
    /// No candidate answered in time (step 5).
    #[error("no available candidates")]
    NoAvailableCandidates,
    /// A read or write of a Lease or a LeaseCandidate failed.
    #[error(transparent)]
    Api(#[from] ClientError),
}

/// What the sync loop reads and writes through.
struct Context {
    leases: Lister<Lease>,
    candidates: Lister<LeaseCandidate>,
    client: Client,
}

/// Runs the controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let informer_error = |source| ControllerError::Informer {
        controller: NAME.into(),
        source,
    };
    let lease_informer = cluster.factory.informer_for::<Lease>();
    let candidate_informer = cluster.factory.informer_for::<LeaseCandidate>();
    let queue: Arc<RateLimitingQueue<Key>> = Arc::new(RateLimitingQueue::default());
    let options = HandlerOptions::new().dispatch(Dispatch::Task);
    let on_lease = |queue: Arc<RateLimitingQueue<Key>>| {
        move |lease: &Lease| {
            if let (Some(ns), Some(name)) = (&lease.metadata.namespace, &lease.metadata.name) {
                queue.add((ns.clone(), name.clone()));
            }
        }
    };
    let (add, update, delete) = (
        on_lease(queue.clone()),
        on_lease(queue.clone()),
        on_lease(queue.clone()),
    );
    let lease_registration = lease_informer
        .add_event_handler_with_options(
            ResourceEventHandlerFuncs::new()
                .add_func(move |l: &Arc<Lease>, _| add(l))
                .update_func(move |_, l: &Arc<Lease>| update(l))
                .delete_func(move |d| {
                    if let Some(l) = d.object() {
                        delete(l);
                    }
                }),
            options,
        )
        .map_err(informer_error)?;
    let (add, update, delete) = (queue.clone(), queue.clone(), queue.clone());
    let candidate_registration = candidate_informer
        .add_event_handler_with_options(
            ResourceEventHandlerFuncs::new()
                .add_func(move |c: &Arc<LeaseCandidate>, _| enqueue_candidate(&add, c, false))
                .update_func(move |_, c: &Arc<LeaseCandidate>| enqueue_candidate(&update, c, false))
                .delete_func(move |d| {
                    if let Some(c) = d.object() {
                        enqueue_candidate(&delete, c, true);
                    }
                }),
            options,
        )
        .map_err(informer_error)?;
    cluster.factory.start();
    let synced: [&dyn CacheSynced; 2] = [&lease_registration, &candidate_registration];
    if !kubegen::cache::wait_for_cache_sync(&stop, &synced).await {
        queue.shut_down();
        return Err(ControllerError::CacheSyncStopped(NAME.into()));
    }
    let cx = Context {
        leases: lease_informer.lister(),
        candidates: candidate_informer.lister(),
        client: cluster.client.clone(),
    };
    loop {
        let key = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            key = queue.get() => match key {
                Some(key) => key,
                None => break,
            },
        };
        match reconcile(&cx, &key).await {
            Ok(requeue) => {
                queue.forget(&key);
                if let Some(after) = requeue {
                    queue.add_after(key.clone(), after);
                }
            }
            Err(err) => {
                tracing::warn!(controller = NAME, lease = %format!("{}/{}", key.0, key.1), %err, "election step failed; retrying");
                queue.add_rate_limited(key.clone());
            }
        }
        queue.done(&key);
    }
    queue.shut_down();
    let _ = lease_informer
        .remove_event_handler(&lease_registration)
        .await;
    let _ = candidate_informer
        .remove_event_handler(&candidate_registration)
        .await;
    Ok(())
}

k8s_openapi::k8s_if_le_1_35! {
    /// The spec of `candidate` (optional in the API of Kubernetes 1.35 and earlier).
    fn spec_of(candidate: &LeaseCandidate) -> Option<&LeaseCandidateSpec> {
        candidate.spec.as_ref()
    }

    /// The spec of `candidate`, to change.
    fn spec_mut(candidate: &mut LeaseCandidate) -> &mut LeaseCandidateSpec {
        candidate.spec.get_or_insert_with(LeaseCandidateSpec::default)
    }
}

k8s_openapi::k8s_if_ge_1_36! {
    /// The spec of `candidate` (required from Kubernetes 1.36's API on).
    #[allow(clippy::unnecessary_wraps)]
    fn spec_of(candidate: &LeaseCandidate) -> Option<&LeaseCandidateSpec> {
        Some(&candidate.spec)
    }

    /// The spec of `candidate`, to change.
    fn spec_mut(candidate: &mut LeaseCandidate) -> &mut LeaseCandidateSpec {
        &mut candidate.spec
    }
}

/// Queues the Lease `candidate` names, unless the change is a ping it has not answered
/// yet (`enqueueCandidate`: its answer will queue it).
fn enqueue_candidate(queue: &RateLimitingQueue<Key>, candidate: &LeaseCandidate, deleted: bool) {
    let Some(spec) = spec_of(candidate) else {
        return;
    };
    if !deleted && awaiting_answer(spec.ping_time.as_ref(), spec.renew_time.as_ref()) {
        return;
    }
    if let Some(ns) = &candidate.metadata.namespace {
        queue.add((ns.clone(), spec.lease_name.clone()));
    }
}

/// One step of the election for the Lease `key` (the module's steps 1 to 8); when to look
/// again.
async fn reconcile(cx: &Context, key: &Key) -> Result<Option<Duration>, ElectionError> {
    let (namespace, name) = key;
    let now = crate::clock::now();
    // 1.
    let candidates = admissible(
        &cx.candidates
            .namespaced(namespace)
            .list(&Selector::default()),
        name,
        now,
    );
    if candidates.is_empty() {
        return Ok(None);
    }
    // 2.
    let lease = cx.leases.namespaced(namespace).get(name).ok();
    match election_needed(&candidates, lease.as_deref(), now) {
        Ok(true) => {}
        Ok(false) => return Ok(Some(REQUEUE)),
        Err(err) => {
            tracing::debug!(controller = NAME, lease = %format!("{namespace}/{name}"), %err, "no election");
            return Ok(Some(REQUEUE));
        }
    }
    // 3.
    let pings = plan_pings(&candidates, now);
    let candidate_client =
        ResourceClient::<LeaseCandidate>::namespaced(cx.client.clone(), namespace);
    for candidate in &pings.ping {
        let mut pinged = LeaseCandidate::clone(candidate);
        spec_mut(&mut pinged).ping_time = Some(MicroTime(now));
        candidate_client
            .update(&PostParams::default(), &pinged)
            .await?;
        tracing::debug!(
            controller = NAME,
            candidate = pinged.metadata.name.as_deref().unwrap_or_default(),
            "pinged"
        );
    }
    if !pings.can_vote {
        return Ok(Some(REQUEUE));
    }
    // 4.
    if still_waiting(&candidates, now) {
        return Ok(None);
    }
    // 5.
    let acked = acked(&candidates, now);
    if acked.is_empty() {
        return Err(ElectionError::NoAvailableCandidates);
    }
    // 6. and 7.
    let strategy = pick_best_strategy(&acked)?;
    let holder = (strategy == OLDEST_EMULATION_VERSION)
        .then(|| pick_best_leader(&acked))
        .flatten()
        .and_then(|c| c.metadata.name.clone());
    // 8.
    let created = Lease {
        metadata: ObjectMeta {
            namespace: Some(namespace.clone()),
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: holder.clone(),
            strategy: Some(strategy.clone()),
            lease_duration_seconds: Some(LEASE_DURATION_SECONDS),
            renew_time: Some(MicroTime(now)),
            ..LeaseSpec::default()
        }),
    };
    let leases = ResourceClient::<Lease>::namespaced(cx.client.clone(), namespace);
    match leases.create(&PostParams::default(), &created).await {
        Ok(_) => {
            tracing::info!(controller = NAME, lease = %format!("{namespace}/{name}"), holder = holder.as_deref().unwrap_or_default(), "created the lease");
            return Ok(Some(REQUEUE));
        }
        Err(err) if err.is_already_exists() => {}
        Err(err) => return Err(err.into()),
    }
    let existing = leases.get(name).await?;
    let Some(updated) = updated_lease(&existing, holder.as_deref(), &strategy, now) else {
        return Ok(Some(REQUEUE));
    };
    leases.update(&PostParams::default(), &updated).await?;
    let spec = updated.spec.unwrap_or_default();
    tracing::info!(
        controller = NAME,
        lease = %format!("{namespace}/{name}"),
        holder = spec.holder_identity.as_deref().unwrap_or_default(),
        preferred_holder = spec.preferred_holder.as_deref().unwrap_or_default(),
        "updated the lease"
    );
    Ok(Some(REQUEUE))
}

/// `t + d`, saturating.
fn plus(t: jiff::Timestamp, d: Duration) -> jiff::Timestamp {
    t.checked_add(d).unwrap_or(jiff::Timestamp::MAX)
}

/// Whether a ping at `ping` still waits for its answer: the renewal is older than it.
fn awaiting_answer(ping: Option<&MicroTime>, renew: Option<&MicroTime>) -> bool {
    match (ping, renew) {
        (Some(ping), Some(renew)) => renew.0 < ping.0,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// Step 1: the candidates for the Lease `lease_name` that renewed within
/// [`CANDIDATE_VALID`] (`listAdmissableCandidates`, `isLeaseCandidateExpired`).
fn admissible(
    all: &[Arc<LeaseCandidate>],
    lease_name: &str,
    now: jiff::Timestamp,
) -> Vec<Arc<LeaseCandidate>> {
    all.iter()
        .filter(|c| {
            spec_of(c).is_some_and(|s| {
                s.lease_name == lease_name
                    && s.renew_time
                        .as_ref()
                        .is_some_and(|r| plus(r.0, CANDIDATE_VALID) >= now)
            })
        })
        .cloned()
        .collect()
}

/// Whether `lease` has expired at `now` (`isLeaseExpired`): no renewal or duration, or
/// `renewTime + leaseDurationSeconds` before now.
fn lease_expired(lease: &Lease, now: jiff::Timestamp) -> bool {
    let Some(spec) = &lease.spec else { return true };
    match (&spec.renew_time, spec.lease_duration_seconds) {
        (Some(renew), Some(seconds)) => {
            let duration = Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
            plus(renew.0, duration) < now
        }
        _ => true,
    }
}

fn holder_of(lease: &Lease) -> &str {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .unwrap_or_default()
}

fn renew_time(c: &LeaseCandidate) -> Option<jiff::Timestamp> {
    spec_of(c)?.renew_time.as_ref().map(|t| t.0)
}

fn ping_time(c: &LeaseCandidate) -> Option<jiff::Timestamp> {
    spec_of(c)?.ping_time.as_ref().map(|t| t.0)
}

/// Step 2 (`electionNeeded`), on the cached Lease (`None`: it does not exist).
fn election_needed(
    candidates: &[Arc<LeaseCandidate>],
    lease: Option<&Lease>,
    now: jiff::Timestamp,
) -> Result<bool, ElectionError> {
    let Some(lease) = lease else { return Ok(true) };
    let holder = holder_of(lease);
    if lease_expired(lease, now) || holder.is_empty() {
        return Ok(true);
    }
    if candidates
        .iter()
        .filter_map(|c| renew_time(c))
        .any(|r| plus(r, CANDIDATE_VALID / 2) < now)
    {
        return Ok(true);
    }
    if pick_best_strategy(candidates)? != OLDEST_EMULATION_VERSION {
        return Ok(false);
    }
    Ok(match pick_best_leader(candidates) {
        None => false,
        Some(best) => best.metadata.name.as_deref() != Some(holder),
    })
}

/// What step 3 decided: whom to ping, and whether the vote may go on.
#[derive(Debug)]
struct Pings {
    ping: Vec<Arc<LeaseCandidate>>,
    can_vote: bool,
}

/// Step 3: the candidates to ping now, and whether the vote may go on.
fn plan_pings(candidates: &[Arc<LeaseCandidate>], now: jiff::Timestamp) -> Pings {
    let mut pings = Pings {
        ping: Vec::new(),
        can_vote: true,
    };
    for candidate in candidates {
        let (ping, renew) = (ping_time(candidate), renew_time(candidate));
        let unanswered = match (ping, renew) {
            (Some(p), Some(r)) => r < p,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if unanswered && ping.is_some_and(|p| plus(p, ELECTION_DURATION) > now) {
            pings.can_vote = false;
            continue;
        }
        if renew.is_some_and(|r| plus(r, ELECTION_DURATION) > now) {
            continue;
        }
        let answered_last = ping.is_some_and(|p| plus(p, ELECTION_DURATION) < now) && !unanswered;
        if ping.is_none() || answered_last {
            pings.ping.push(candidate.clone());
            pings.can_vote = false;
        }
    }
    pings
}

/// Step 4: whether a ping of the last [`ELECTION_DURATION`] still waits for its answer.
fn still_waiting(candidates: &[Arc<LeaseCandidate>], now: jiff::Timestamp) -> bool {
    candidates.iter().any(|c| {
        let Some(ping) = ping_time(c) else {
            return false;
        };
        let answered = renew_time(c).is_some_and(|r| r >= ping);
        !answered && plus(ping, ELECTION_DURATION) > now
    })
}

/// Step 5: the candidates that renewed within the last [`ELECTION_DURATION`].
fn acked(candidates: &[Arc<LeaseCandidate>], now: jiff::Timestamp) -> Vec<Arc<LeaseCandidate>> {
    candidates
        .iter()
        .filter(|c| renew_time(c).is_some_and(|r| plus(r, ELECTION_DURATION) > now))
        .cloned()
        .collect()
}

/// Step 6 (`pickBestStrategy`): the strategy of the candidate with the highest binary
/// version (an unparseable one counts as 0.0.0).
fn pick_best_strategy(candidates: &[Arc<LeaseCandidate>]) -> Result<String, ElectionError> {
    let Some((first, rest)) = candidates.split_first() else {
        return Err(ElectionError::NoAvailableCandidates);
    };
    let strategy_of =
        |c: &LeaseCandidate| spec_of(c).map(|s| s.strategy.clone()).unwrap_or_default();
    let name_of = |c: &LeaseCandidate| c.metadata.name.clone().unwrap_or_default();
    let mut chosen = (name_of(first), strategy_of(first), binary_version(first));
    for candidate in rest {
        let version = binary_version(candidate);
        let strategy = strategy_of(candidate);
        match chosen.2.cmp(&version) {
            Ordering::Less => chosen = (name_of(candidate), strategy, version),
            Ordering::Equal if strategy != chosen.1 => {
                return Err(ElectionError::ConflictingStrategies {
                    first: chosen.0,
                    second: name_of(candidate),
                    first_strategy: chosen.1,
                    second_strategy: strategy,
                });
            }
            _ => {}
        }
    }
    Ok(chosen.1)
}

/// Step 7 (`pickBestLeaderOldestEmulationVersion`): the best of the candidates whose
/// versions parse (`validLeaseCandidateForOldestEmulationVersion`), by [`compare`].
fn pick_best_leader(candidates: &[Arc<LeaseCandidate>]) -> Option<&Arc<LeaseCandidate>> {
    let mut electee: Option<&Arc<LeaseCandidate>> = None;
    for candidate in candidates.iter().filter(|c| valid_versions(c)) {
        if electee.is_none_or(|e| compare(e, candidate) == Ordering::Greater) {
            electee = Some(candidate);
        }
    }
    electee
}

/// Both versions of `c` parse.
fn valid_versions(c: &LeaseCandidate) -> bool {
    let Some(spec) = spec_of(c) else {
        return false;
    };
    Version::parse_tolerant(spec.emulation_version.as_deref().unwrap_or_default()).is_some()
        && Version::parse_tolerant(&spec.binary_version).is_some()
}

fn emulation_version(c: &LeaseCandidate) -> Version {
    spec_of(c)
        .and_then(|s| s.emulation_version.as_deref())
        .and_then(Version::parse_tolerant)
        .unwrap_or_default()
}

fn binary_version(c: &LeaseCandidate) -> Version {
    spec_of(c)
        .and_then(|s| Version::parse_tolerant(&s.binary_version))
        .unwrap_or_default()
}

/// `compare` of `election.go`: `Less` when `lhs` is the better leader, `Greater` when
/// `rhs` is. Lower emulation version, then lower binary version, then the older
/// `creationTimestamp`; on a full tie `lhs` wins.
fn compare(lhs: &LeaseCandidate, rhs: &LeaseCandidate) -> Ordering {
    let by_versions = emulation_version(lhs)
        .cmp(&emulation_version(rhs))
        .then_with(|| binary_version(lhs).cmp(&binary_version(rhs)));
    if by_versions != Ordering::Equal {
        return by_versions;
    }
    let created = |c: &LeaseCandidate| c.metadata.creation_timestamp.as_ref().map(|t| t.0);
    if created(lhs) > created(rhs) {
        Ordering::Greater
    } else {
        Ordering::Less
    }
}

/// Step 8 on an existing Lease: the Lease with `holder` elected under `strategy` at
/// `now`, or `None` when nothing changes.
fn updated_lease(
    existing: &Lease,
    holder: Option<&str>,
    strategy: &str,
    now: jiff::Timestamp,
) -> Option<Lease> {
    let mut lease = existing.clone();
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    let current = spec.holder_identity.clone().unwrap_or_default();
    let expired = lease_expired(existing, now);
    if spec.strategy.as_deref() != Some(strategy) {
        spec.strategy = Some(strategy.to_owned());
    }
    let no_holder = current.is_empty();
    match holder {
        Some(holder) if no_holder || expired => {
            spec.preferred_holder = None;
            spec.holder_identity = Some(holder.to_owned());
            spec.renew_time = Some(MicroTime(now));
            spec.lease_duration_seconds = Some(LEASE_DURATION_SECONDS);
            spec.acquire_time = None;
        }
        Some(holder) if holder != current => {
            spec.preferred_holder = Some(holder.to_owned());
        }
        _ => {}
    }
    (lease != *existing).then_some(lease)
}

/// A semantic version as blang/semver's `ParseTolerant` reads it: an optional `v`,
/// missing minor and patch as 0, leading zeros dropped, a pre-release after `-` (build
/// metadata after `+` is ignored when comparing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<PreRelease>,
}

/// One dot-separated pre-release identifier: numeric ones sort before alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum PreRelease {
    Numeric(u64),
    Alphanumeric(String),
}

impl Version {
    /// `s` tolerantly parsed; `None` when it is not a version.
    fn parse_tolerant(s: &str) -> Option<Version> {
        let s = s.trim();
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts: Vec<&str> = s.splitn(3, '.').collect();
        if parts.len() < 3 && parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return None;
        }
        while parts.len() < 3 {
            parts.push("0");
        }
        let (patch, rest) = match parts[2].find(['-', '+']) {
            Some(i) => parts[2].split_at(i),
            None => (parts[2], ""),
        };
        let number = |p: &str| -> Option<u64> {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            p.parse().ok()
        };
        let rest = rest.split('+').next().unwrap_or_default();
        let pre = match rest.strip_prefix('-') {
            None => Vec::new(),
            Some(pre) => pre
                .split('.')
                .map(|id| {
                    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    {
                        None
                    } else if let Some(n) = number(id) {
                        Some(PreRelease::Numeric(n))
                    } else {
                        Some(PreRelease::Alphanumeric(id.to_owned()))
                    }
                })
                .collect::<Option<Vec<_>>>()?,
        };
        Some(Version {
            major: number(parts[0])?,
            minor: number(parts[1])?,
            patch: number(patch)?,
            pre,
        })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&other.pre),
            })
    }
}

#[cfg(test)]
mod tests {
    //! One test per rule of `election.go` and `leaderelection_controller.go`
    //! (`pkg/controlplane/controller/leaderelection/`).

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn t(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_700_000_000 + seconds).expect("in range")
    }

    fn candidate(name: &str, emulation: &str, binary: &str) -> Arc<LeaseCandidate> {
        let mut c = LeaseCandidate {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                creation_timestamp: Some(Time(t(0))),
                ..ObjectMeta::default()
            },
            ..LeaseCandidate::default()
        };
        *spec_mut(&mut c) = LeaseCandidateSpec {
            lease_name: "component".into(),
            emulation_version: Some(emulation.into()),
            binary_version: binary.into(),
            strategy: OLDEST_EMULATION_VERSION.into(),
            renew_time: Some(MicroTime(t(0))),
            ping_time: None,
        };
        Arc::new(c)
    }

    fn with(c: &Arc<LeaseCandidate>, f: impl FnOnce(&mut LeaseCandidate)) -> Arc<LeaseCandidate> {
        let mut c = LeaseCandidate::clone(c);
        f(&mut c);
        Arc::new(c)
    }

    fn times(c: &Arc<LeaseCandidate>, renew: i64, ping: Option<i64>) -> Arc<LeaseCandidate> {
        with(c, |c| {
            let spec = spec_mut(c);
            spec.renew_time = Some(MicroTime(t(renew)));
            spec.ping_time = ping.map(|p| MicroTime(t(p)));
        })
    }

    fn lease(holder: Option<&str>, renewed: i64, seconds: i32) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some("component".into()),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: holder.map(Into::into),
                renew_time: Some(MicroTime(t(renewed))),
                lease_duration_seconds: Some(seconds),
                strategy: Some(OLDEST_EMULATION_VERSION.into()),
                ..LeaseSpec::default()
            }),
        }
    }

    fn best(candidates: &[Arc<LeaseCandidate>]) -> Option<String> {
        pick_best_leader(candidates).and_then(|c| c.metadata.name.clone())
    }

    /// `election_test.go` `TestPickBestLeaderOldestEmulationVersion`: the lowest emulation
    /// version wins, whatever the binary versions.
    #[test]
    fn the_lowest_emulation_version_wins() {
        let candidates = [
            candidate("a", "1.34.0", "1.34.0"),
            candidate("b", "1.33.0", "1.33.0"),
            candidate("c", "1.34.0", "1.35.0"),
        ];
        assert_eq!(best(&candidates).as_deref(), Some("b"));
    }

    /// `compare`: at the same emulation version, the lowest binary version wins.
    #[test]
    fn then_the_lowest_binary_version() {
        let candidates = [
            candidate("a", "1.33.0", "1.35.0"),
            candidate("b", "1.33.0", "1.34.0"),
        ];
        assert_eq!(best(&candidates).as_deref(), Some("b"));
    }

    /// `compare`: at the same versions, the candidate created first wins; on the same
    /// creation time the one seen first.
    #[test]
    fn then_the_oldest_candidate() {
        let older = with(&candidate("older", "1.33", "1.33"), |c| {
            c.metadata.creation_timestamp = Some(Time(t(-10)));
        });
        let candidates = [candidate("newer", "1.33", "1.33"), older];
        assert_eq!(best(&candidates).as_deref(), Some("older"));
        let twins = [
            candidate("x", "1.33", "1.33"),
            candidate("y", "1.33", "1.33"),
        ];
        assert_eq!(best(&twins).as_deref(), Some("x"));
    }

    /// `validLeaseCandidateForOldestEmulationVersion`: a candidate whose emulation or binary
    /// version does not parse is never elected.
    #[test]
    fn candidates_with_unparseable_versions_are_skipped() {
        let candidates = [
            candidate("bad-emulation", "one.two", "1.30"),
            with(&candidate("no-emulation", "1.30", "1.30"), |c| {
                spec_mut(c).emulation_version = None;
            }),
            candidate("bad-binary", "1.30", "1.30-"),
            candidate("good", "1.34", "1.34"),
        ];
        assert_eq!(best(&candidates).as_deref(), Some("good"));
        assert_eq!(best(&candidates[..3]), None);
    }

    /// blang/semver `ParseTolerant` and `Compare`: `v` prefix, short forms, leading zeros,
    /// pre-releases before their release, numeric identifiers before alphanumeric ones,
    /// build metadata ignored.
    #[test]
    fn versions_parse_tolerantly_and_compare_as_semver() {
        let v = |s| Version::parse_tolerant(s).unwrap_or_else(|| panic!("{s}"));
        assert_eq!(v("v1.33"), v("1.33.0"));
        assert_eq!(v(" 1.033.00 "), v("1.33.0"));
        assert_eq!(v("1.33.0+build.7"), v("1.33.0"));
        assert!(v("1.33.0-alpha.1") < v("1.33.0"));
        assert!(v("1.33.0-alpha.2") < v("1.33.0-alpha.10"));
        assert!(v("1.33.0-1") < v("1.33.0-alpha"));
        assert!(v("1.33.0-alpha") < v("1.33.0-alpha.1"));
        assert!(v("1.9") < v("1.10"));
        for bad in ["", "1.33-rc.1", "1.x", "1.2.3.4", "1.2.3-", "1.2.3-a..b"] {
            assert_eq!(Version::parse_tolerant(bad), None, "{bad:?}");
        }
    }

    /// `pickBestStrategy`: the strategy of the highest binary version; a tie at that
    /// version with different strategies is a conflict.
    #[test]
    fn the_strategy_comes_from_the_highest_binary_version() {
        let other = |c: &Arc<LeaseCandidate>| with(c, |c| spec_mut(c).strategy = "Other".into());
        let candidates = [
            candidate("a", "1.33", "1.33"),
            other(&candidate("b", "1.33", "1.35")),
            candidate("c", "1.33", "1.34"),
        ];
        assert_eq!(pick_best_strategy(&candidates).expect("chosen"), "Other");
        let conflict = [
            candidate("a", "1.33", "1.35"),
            other(&candidate("b", "1.33", "1.35")),
        ];
        assert!(matches!(
            pick_best_strategy(&conflict),
            Err(ElectionError::ConflictingStrategies { .. })
        ));
    }

    /// `listAdmissableCandidates`: only the candidates for this Lease, and not those that
    /// have not renewed for 30 minutes.
    #[test]
    fn stale_candidates_and_other_leases_are_not_admissible() {
        let other_lease = with(&candidate("other", "1.33", "1.33"), |c| {
            spec_mut(c).lease_name = "other".into();
        });
        let stale = times(&candidate("stale", "1.33", "1.33"), -1801, None);
        let fresh = times(&candidate("fresh", "1.33", "1.33"), -1799, None);
        let admitted = admissible(&[other_lease, stale, fresh], "component", t(0));
        let names: Vec<_> = admitted
            .iter()
            .filter_map(|c| c.metadata.name.as_deref())
            .collect();
        assert_eq!(names, ["fresh"]);
    }

    /// `electionNeeded`: no Lease, an expired one, one without holder, a candidate 15
    /// minutes stale, or a better candidate than the holder; not when the holder is the
    /// best or the strategy is not this controller's.
    #[test]
    fn when_an_election_is_needed() {
        let a = candidate("a", "1.33", "1.33");
        let b = candidate("b", "1.34", "1.34");
        let both = [a.clone(), b.clone()];
        let now = t(10);
        assert!(election_needed(&both, None, now).expect("decided"));
        assert!(election_needed(&both, Some(&lease(Some("a"), 0, 5)), now).expect("expired"));
        assert!(election_needed(&both, Some(&lease(None, 10, 5)), now).expect("no holder"));
        assert!(election_needed(&both, Some(&lease(Some("b"), 10, 5)), now).expect("better"));
        assert!(!election_needed(&both, Some(&lease(Some("a"), 10, 5)), now).expect("best"));
        let refresh = [times(&a, -901, None), b.clone()];
        assert!(election_needed(&refresh, Some(&lease(Some("a"), 10, 5)), now).expect("stale"));
        let other = [with(&a, |c| {
            spec_mut(c).strategy = "Other".into();
        })];
        assert!(!election_needed(&other, Some(&lease(Some("b"), 10, 5)), now).expect("other"));
    }

    /// The first loop of `reconcileElectionStep`: a recent renewal needs no ping, an old one
    /// is pinged, an unanswered ping of the last 5 s holds the vote, and a ping left
    /// unanswered for longer is not repeated.
    #[test]
    fn who_is_pinged_and_when_the_vote_goes_on() {
        let now = t(100);
        let fresh = times(&candidate("fresh", "1.33", "1.33"), 97, None);
        let old = times(&candidate("old", "1.33", "1.33"), 10, None);
        let answered = times(&candidate("answered", "1.33", "1.33"), 20, Some(20));
        let waiting = times(&candidate("waiting", "1.33", "1.33"), 10, Some(98));
        let dropped = times(&candidate("dropped", "1.33", "1.33"), 10, Some(90));
        let names = |p: &Pings| -> Vec<String> {
            p.ping
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .collect()
        };
        let p = plan_pings(std::slice::from_ref(&fresh), now);
        assert!(p.can_vote && p.ping.is_empty());
        let p = plan_pings(&[fresh.clone(), old, answered], now);
        assert!(!p.can_vote);
        assert_eq!(names(&p), ["old", "answered"]);
        let p = plan_pings(&[fresh.clone(), waiting.clone()], now);
        assert!(!p.can_vote && p.ping.is_empty());
        let p = plan_pings(&[fresh.clone(), dropped.clone()], now);
        assert!(p.can_vote && p.ping.is_empty(), "{p:?}");
        assert!(!still_waiting(&[fresh.clone(), dropped.clone()], now));
        assert!(still_waiting(&[waiting], now));
        let voters = acked(&[fresh, dropped], now);
        assert_eq!(voters.len(), 1, "the silent candidate is skipped");
    }

    /// An answer stamped at its ping's instant counts (a paused clock stamps both alike).
    #[test]
    fn an_answer_at_the_pings_instant_counts() {
        let now = t(3);
        let same = times(&candidate("same", "1.33", "1.33"), 3, Some(3));
        assert!(!awaiting_answer(
            spec_of(&same).and_then(|s| s.ping_time.as_ref()),
            spec_of(&same).and_then(|s| s.renew_time.as_ref()),
        ));
        assert!(!still_waiting(std::slice::from_ref(&same), now));
        assert!(plan_pings(std::slice::from_ref(&same), now).can_vote);
        assert_eq!(acked(&[same], now).len(), 1);
    }

    /// `isLeaseExpired`: `renewTime + leaseDurationSeconds` before now; missing fields
    /// count as expired.
    #[test]
    fn lease_expiry() {
        assert!(!lease_expired(&lease(Some("a"), 0, 5), t(5)));
        assert!(lease_expired(&lease(Some("a"), 0, 5), t(6)));
        let mut no_renewal = lease(Some("a"), 0, 5);
        no_renewal.spec.as_mut().expect("spec").renew_time = None;
        assert!(lease_expired(&no_renewal, t(0)));
    }

    /// Step 8: a Lease without holder, or expired, gets the electee (preferred holder
    /// cleared, 5 s from now); a valid Lease held by another gets it as preferred holder;
    /// the strategy is corrected; nothing else is written.
    #[test]
    fn how_an_existing_lease_is_updated() {
        let now = t(100);
        let set = updated_lease(&lease(None, 0, 1), Some("a"), OLDEST_EMULATION_VERSION, now)
            .and_then(|l| l.spec)
            .expect("holder set");
        assert_eq!(set.holder_identity.as_deref(), Some("a"));
        assert_eq!(set.renew_time, Some(MicroTime(now)));
        assert_eq!(set.lease_duration_seconds, Some(LEASE_DURATION_SECONDS));
        assert_eq!(set.acquire_time, None);

        let mut expired = lease(Some("b"), 0, 5);
        expired.spec.as_mut().expect("spec").preferred_holder = Some("a".into());
        let reset = updated_lease(&expired, Some("a"), OLDEST_EMULATION_VERSION, now)
            .and_then(|l| l.spec)
            .expect("reset");
        assert_eq!(reset.holder_identity.as_deref(), Some("a"));
        assert_eq!(reset.preferred_holder, None);

        let held = lease(Some("b"), 99, 5);
        let preferred = updated_lease(&held, Some("a"), OLDEST_EMULATION_VERSION, now)
            .and_then(|l| l.spec)
            .expect("preferred holder");
        assert_eq!(preferred.holder_identity.as_deref(), Some("b"));
        assert_eq!(preferred.preferred_holder.as_deref(), Some("a"));

        let optimal = lease(Some("a"), 99, 5);
        assert_eq!(
            updated_lease(&optimal, Some("a"), OLDEST_EMULATION_VERSION, now),
            None
        );
        let restrategised = updated_lease(&optimal, Some("a"), "Other", now)
            .and_then(|l| l.spec)
            .expect("strategy");
        assert_eq!(restrategised.strategy.as_deref(), Some("Other"));

        let stuck = lease(Some("a"), 0, 5);
        let refreshed = updated_lease(&stuck, Some("a"), OLDEST_EMULATION_VERSION, now)
            .and_then(|l| l.spec)
            .expect("an expired lease of the best holder is reset");
        assert_eq!(refreshed.renew_time, Some(MicroTime(now)));
    }
}
