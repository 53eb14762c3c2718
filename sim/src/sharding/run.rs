//! Runs one sharding schedule against the in-process test server on a current-thread tokio
//! runtime with a paused clock: performs the steps, restarts replicas whose partition
//! healed after they lost their membership, waits for quiescence and checks the
//! invariants ([`super::invariants`]).

use std::{
    collections::BTreeMap,
    fmt,
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::{
    coordination::v1::{Lease, LeaseSpec},
    core::v1::{ConfigMap, Secret},
};
use kube_core::{
    ObjectMeta,
    params::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use kubegen::{
    cache::SharedIndexInformer,
    client::{Client, ResourceClient},
    manager::ManagerError,
    sharding::{RingLabels, member_lease_name},
};
use kubegen_testserver::InProcess;
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{
    LEASE_NAMESPACE, NAMESPACE, RING,
    invariants::{self, LiveCache, ServerConfigMap, ServerSecret, ServerState},
    journal::{Journal, Reconcile},
    net::{LeaseGrid, Link, Membership, ReplicaTransport, Wire},
    replica::{self, Incarnation, OWNED_SUFFIX},
    schedule::{LabelEdit, MAX_REPLICAS, MAX_RUNNING, ShardSchedule, ShardStep},
};
use crate::{mirror, run::Divergence};

/// Virtual time every response of the server takes.
const REQUEST_LATENCY: Duration = Duration::from_millis(1);
/// Virtual time after every step.
const STEP_GAP: Duration = Duration::from_millis(100);
/// Virtual time between two quiescence checks.
const POLL: Duration = Duration::from_millis(250);
/// How long (virtual) the ring may take to settle once the schedule is over and every
/// partition healed: a sharder takeover (a lease duration and a grid period), a ghost's
/// lease running out, drains, backoffs.
const CONVERGE_WITHIN: Duration = Duration::from_secs(60);
/// The period of the sharder Lease's grid ([`LeaseGrid`]).
const GRID: Duration = Duration::from_millis(500);

/// What a passing run saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardReport {
    /// The ConfigMaps the server ended with: key → (`v`, assigned member).
    pub configmaps: BTreeMap<String, (Option<u32>, Option<String>)>,
    /// Reconciles recorded.
    pub reconciles: usize,
    /// Incarnations started.
    pub incarnations: u32,
    /// Virtual time the run took.
    pub virtual_time: Duration,
    /// Reconciles that overlapped right after their object's shard label was moved off a
    /// member by hand (see [`invariants::Overlaps::after_hand_moves`]); a divergence
    /// under [`Strictness::hand_moves`].
    pub after_hand_moves: Vec<String>,
    /// What happened, in order: every step and membership event with its virtual time,
    /// every reconcile (incarnation, object, value, start, end, outcome), then the
    /// server's final ConfigMaps. A seed's replay repeats it line for line.
    pub trace: Vec<String>,
}

impl ShardReport {
    /// How `other` (a replay of the same schedule) differs from this run, if it does.
    pub fn replay_difference(&self, other: &ShardReport) -> Option<String> {
        if self == other {
            return None;
        }
        let line = self
            .trace
            .iter()
            .zip(&other.trace)
            .position(|(a, b)| a != b)
            .unwrap_or(self.trace.len().min(other.trace.len()));
        Some(format!(
            "first difference at trace line {line}: {:?} / {:?} ({} / {} lines, virtual time {:?} / {:?}, reconciles {} / {})",
            self.trace.get(line),
            other.trace.get(line),
            self.trace.len(),
            other.trace.len(),
            self.virtual_time,
            other.virtual_time,
            self.reconciles,
            other.reconciles
        ))
    }
}

/// Which invariants break a run beyond the ones that always do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Strictness {
    /// Two reconciles of one object overlapping right after its shard label was moved off
    /// a member by hand ([`invariants::Overlaps::after_hand_moves`]) break the run (off by
    /// default: the ring cannot prevent it yet, see the scenario's docs).
    pub hand_moves: bool,
}

/// Runs `schedule` on a fresh current-thread runtime with a paused clock.
pub fn run(schedule: &ShardSchedule) -> Result<ShardReport, Divergence> {
    run_with(schedule, Strictness::default())
}

/// [`run`], with `strictness`.
pub fn run_with(
    schedule: &ShardSchedule,
    strictness: Strictness,
) -> Result<ShardReport, Divergence> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .map_err(|e| Divergence {
            problems: vec![format!("no runtime: {e}")],
        })?;
    runtime.block_on(run_async(schedule, strictness))
}

/// Where a replica is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// An incarnation runs.
    Running,
    /// Its incarnation lost the membership in a partition; the next starts at the heal.
    Waiting,
    /// Asked to stop (left or crashed); its incarnation winds down.
    Stopping,
    /// Stopped.
    Down,
}

/// The running incarnation of a replica, as the harness holds it.
#[derive(Debug)]
struct Current {
    number: u32,
    stop: CancellationToken,
    wire: Wire,
    cache: SharedIndexInformer<ConfigMap>,
}

/// One replica (one identity, one node): its incarnations come and go.
#[derive(Debug)]
struct Slot {
    identity: String,
    rank: u32,
    link: Arc<Link>,
    state: State,
    wants_down: bool,
    current: Option<Current>,
    cut_until: Option<Instant>,
}

/// The world under simulation.
struct World {
    server: InProcess,
    oracle: Client,
    journal: Arc<Journal>,
    grid: Arc<LeaseGrid>,
    slots: Mutex<Vec<Slot>>,
    incarnations: AtomicU32,
    ghosts: AtomicU32,
    problems: Mutex<Vec<String>>,
}

impl World {
    /// Starts the next incarnation of replica `slot` (state `Running`), or marks it down.
    fn launch(&self, slot: usize) -> Option<Incarnation> {
        let (identity, rank, link) = {
            let slots = self.slots.lock();
            let s = slots.get(slot)?;
            (s.identity.clone(), s.rank, s.link.clone())
        };
        let number = self.incarnations.fetch_add(1, Ordering::Relaxed) + 1;
        let wire = Wire {
            link,
            dead: CancellationToken::new(),
            stop: CancellationToken::new(),
            leaving: CancellationToken::new(),
            membership: Membership::new(
                replica::election().retry_period,
                replica::election().renew_deadline,
            ),
            grid_failed_at: Arc::default(),
        };
        let transport = ReplicaTransport {
            server: self.server.clone(),
            wire: wire.clone(),
            grid: self.grid.clone(),
            rank,
            member_path: format!(
                "/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{}",
                member_lease_name(RING, &identity)
            ),
            log: std::env::var_os("KUBEGEN_SIM_WIRE_LOG")
                .map(|_| (self.journal.clone(), format!("{identity}#{number}"))),
        };
        let started = replica::start(&identity, number, transport, self.journal.clone());
        let mut slots = self.slots.lock();
        let s = slots.get_mut(slot)?;
        match started {
            Ok(inc) => {
                self.journal.event(format!("{identity}#{number} starts"));
                s.state = State::Running;
                s.current = Some(Current {
                    number,
                    stop: inc.stop.clone(),
                    wire: inc.wire.clone(),
                    cache: inc.cache.clone(),
                });
                Some(inc)
            }
            Err(e) => {
                self.problems
                    .lock()
                    .push(format!("{identity}: the manager would not build: {e}"));
                s.state = State::Down;
                None
            }
        }
    }

    /// Indexes of the replicas in `state`.
    fn in_state(&self, state: State) -> Vec<usize> {
        self.slots
            .lock()
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state == state)
            .map(|(i, _)| i)
            .collect()
    }

    fn running(&self) -> usize {
        self.in_state(State::Running).len() + self.in_state(State::Waiting).len()
    }
}

/// Watches one replica's incarnations (the first one `first`, or, without it, one started
/// once the replica's link is up): when one lost its membership (a partition), starts the
/// next once the partition heals; ends when the replica is asked down.
async fn supervise(world: Arc<World>, slot: usize, first: Option<Incarnation>) {
    let mut next = first;
    loop {
        let mut inc = match next.take() {
            Some(inc) => inc,
            None => {
                let link = match world.slots.lock().get(slot) {
                    Some(s) => s.link.clone(),
                    None => return,
                };
                link.wait_up().await;
                {
                    let mut slots = world.slots.lock();
                    let Some(s) = slots.get_mut(slot) else { return };
                    if s.wants_down {
                        s.state = State::Down;
                        return;
                    }
                }
                match world.launch(slot) {
                    Some(inc) => inc,
                    None => return,
                }
            }
        };
        let ended = (&mut inc.task).await;
        let lost = matches!(ended, Ok(Err(ManagerError::ShardMembershipLost)));
        let how = match &ended {
            Ok(Ok(())) => "stopped".to_owned(),
            Ok(Err(e)) => e.to_string(),
            Err(e) => format!("panicked: {e}"),
        };
        let (identity, restart) = {
            let mut slots = world.slots.lock();
            let Some(s) = slots.get_mut(slot) else { return };
            s.current = None;
            let restart = if s.wants_down {
                s.state = State::Down;
                false
            } else if lost {
                s.state = State::Waiting;
                true
            } else {
                s.state = State::Down;
                world.problems.lock().push(format!(
                    "{}#{} ended on its own: {how}",
                    s.identity, inc.number
                ));
                false
            };
            (s.identity.clone(), restart)
        };
        world
            .journal
            .event(format!("{identity}#{} ended: {how}", inc.number));
        if !restart {
            return;
        }
    }
}

fn configmap(name: &str, value: u32) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(NAMESPACE.to_owned()),
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), value.to_string())])),
        ..ConfigMap::default()
    }
}

async fn run_async(
    schedule: &ShardSchedule,
    strictness: Strictness,
) -> Result<ShardReport, Divergence> {
    let started = Instant::now();
    let server = InProcess::new();
    server.shared().faults.set_delay(Some(REQUEST_LATENCY));
    let oracle = Client::builder(server.clone()).rate_limit(-1.0, 0).build();
    let grid = LeaseGrid::new(
        format!("/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{RING}-sharder"),
        GRID,
    );
    let end = CancellationToken::new();
    tokio::spawn(grid.clone().run(end.clone()));
    let world = Arc::new(World {
        server,
        oracle,
        journal: Arc::new(Journal::default()),
        grid,
        slots: Mutex::new(Vec::new()),
        incarnations: AtomicU32::new(0),
        ghosts: AtomicU32::new(0),
        problems: Mutex::new(Vec::new()),
    });

    for (i, step) in schedule.steps.iter().enumerate() {
        let at = world.journal.now();
        let what = perform(&world, step).await;
        world
            .journal
            .event_at(at, format!("step {i}: {step}: {what}"));
        tokio::time::sleep(STEP_GAP).await;
    }

    // Every partition heals; replicas that lost their membership come back.
    let last_heal = world.slots.lock().iter().filter_map(|s| s.cut_until).max();
    if let Some(at) = last_heal {
        tokio::time::sleep_until(at + STEP_GAP).await;
    }
    // Someone must be left to reconcile.
    if world.running() == 0 {
        let what = match world.in_state(State::Down).first() {
            Some(&slot) => {
                let identity = world.slots.lock()[slot].identity.clone();
                restart(&world, slot);
                format!("{identity} restarts")
            }
            None => join(&world),
        };
        world
            .journal
            .event(format!("end of schedule, nobody runs: {what}"));
    }

    let deadline = Instant::now() + CONVERGE_WITHIN;
    let (state, problems) = loop {
        tokio::time::sleep(POLL).await;
        let state = server_state(&world.oracle).await;
        let problems = match &state {
            Some(state) => {
                let waiting = !world.in_state(State::Waiting).is_empty()
                    || !world.in_state(State::Stopping).is_empty();
                let mut p = invariants::quiescence(
                    state,
                    &live_caches(&world),
                    &world.journal.reconciles(),
                );
                if waiting {
                    p.push("a replica is still restarting or stopping".to_owned());
                }
                p
            }
            None => vec!["the server did not answer the final list".to_owned()],
        };
        if problems.is_empty() || Instant::now() >= deadline {
            break (state, problems);
        }
    };
    let mut problems = problems;
    let now = world.journal.now();
    let reconciles = world.journal.reconciles();
    let overlaps = invariants::overlaps(&reconciles, &world.journal.hand_moves(), now);
    problems.extend(overlaps.unexplained);
    if strictness.hand_moves {
        problems.extend(overlaps.after_hand_moves.iter().cloned());
    }
    problems.extend(invariants::shares(&reconciles));
    problems.extend(world.problems.lock().iter().cloned());
    end.cancel();
    let mut trace = trace(&world.journal, &reconciles, state.as_ref());
    trace.extend(
        overlaps
            .after_hand_moves
            .iter()
            .map(|line| format!("after a hand move: {line}")),
    );
    if let Some(path) = std::env::var_os("KUBEGEN_SIM_DUMP") {
        let _ = std::fs::write(path, trace.join("\n"));
    }
    if !problems.is_empty() {
        let mut events = world.journal.events();
        let skip = events.len().saturating_sub(12);
        events.drain(..skip);
        problems.push(format!(
            "(the run's last events:\n      {})",
            events.join("\n      ")
        ));
        return Err(Divergence { problems });
    }
    let state = state.unwrap_or_default();
    Ok(ShardReport {
        configmaps: state
            .configmaps
            .iter()
            .map(|(k, cm)| (k.clone(), (cm.value, cm.assigned.clone())))
            .collect(),
        reconciles: reconciles.len(),
        incarnations: world.incarnations.load(Ordering::Relaxed),
        virtual_time: started.elapsed(),
        after_hand_moves: overlaps.after_hand_moves,
        trace,
    })
}

/// The trace of a run: its events, every reconcile, the server's final ConfigMaps.
fn trace(journal: &Journal, reconciles: &[Reconcile], state: Option<&ServerState>) -> Vec<String> {
    let mut trace = journal.events();
    trace.extend(reconciles.iter().map(|r| {
        format!(
            "{:>8.3}s {}#{} reconciles {} v={:?} until {:?} ({:?})",
            r.start.as_secs_f64(),
            r.replica,
            r.incarnation,
            r.key,
            r.value,
            r.end,
            r.outcome
        )
    }));
    trace.extend(state.iter().flat_map(|s| &s.configmaps).map(|(key, cm)| {
        format!(
            "server {key} v={:?} rv {} assigned to {:?}",
            cm.value, cm.resource_version, cm.assigned
        )
    }));
    trace
}

/// The running incarnations' ConfigMap caches.
fn live_caches(world: &World) -> Vec<LiveCache> {
    world
        .slots
        .lock()
        .iter()
        .filter(|s| s.state == State::Running)
        .filter_map(|s| {
            let current = s.current.as_ref()?;
            Some(LiveCache {
                identity: s.identity.clone(),
                incarnation: current.number,
                configmaps: current
                    .cache
                    .indexer()
                    .list()
                    .iter()
                    .map(|cm| {
                        (
                            format!(
                                "{}/{}",
                                cm.metadata.namespace.as_deref().unwrap_or_default(),
                                cm.metadata.name.as_deref().unwrap_or_default()
                            ),
                            cm.metadata.resource_version.clone().unwrap_or_default(),
                        )
                    })
                    .collect(),
            })
        })
        .collect()
}

/// The server's ConfigMaps and owned Secrets, read by the oracle.
async fn server_state(oracle: &Client) -> Option<ServerState> {
    let labels = RingLabels::new(RING);
    let lp = ListParams::default();
    let cms = ResourceClient::<ConfigMap>::namespaced(oracle.clone(), NAMESPACE)
        .list_all(&lp)
        .await
        .ok()?;
    let secrets = ResourceClient::<Secret>::namespaced(oracle.clone(), NAMESPACE)
        .list_all(&lp)
        .await
        .ok()?;
    let mut state = ServerState::default();
    for cm in &cms.items {
        let key = format!(
            "{NAMESPACE}/{}",
            cm.metadata.name.as_deref().unwrap_or_default()
        );
        state.configmaps.insert(
            key,
            ServerConfigMap {
                uid: cm.metadata.uid.clone().unwrap_or_default(),
                resource_version: cm.metadata.resource_version.clone().unwrap_or_default(),
                value: replica::value_of(cm),
                assigned: labels.assigned(&cm.metadata).map(str::to_owned),
                draining: labels.draining(&cm.metadata),
            },
        );
    }
    for s in &secrets.items {
        let name = s.metadata.name.as_deref().unwrap_or_default();
        if !name.ends_with(OWNED_SUFFIX) {
            continue;
        }
        state.owned.insert(
            format!("{NAMESPACE}/{name}"),
            ServerSecret {
                value: mirror::secret_value(s),
                owner_uid: mirror::owner_uid(s).map(str::to_owned),
                assigned: labels.assigned(&s.metadata).map(str::to_owned),
            },
        );
    }
    Some(state)
}

/// The `index`-th of `slots` (modulo their number).
fn pick(slots: &[usize], index: u8) -> Option<usize> {
    (!slots.is_empty()).then(|| slots[usize::from(index) % slots.len()])
}

fn join(world: &Arc<World>) -> String {
    let slot = {
        let mut slots = world.slots.lock();
        if slots.len() >= MAX_REPLICAS {
            return "no: as many replicas as a run has".to_owned();
        }
        let index = slots.len();
        slots.push(Slot {
            identity: format!("r{index}"),
            rank: u32::try_from(index).unwrap_or(u32::MAX),
            link: Arc::new(Link::default()),
            state: State::Down,
            wants_down: false,
            current: None,
            cut_until: None,
        });
        index
    };
    restart(world, slot);
    format!("r{slot}")
}

/// Starts replica `slot` again: now, or (a replica still cut off) when its link heals.
fn restart(world: &Arc<World>, slot: usize) {
    let cut = {
        let mut slots = world.slots.lock();
        let Some(s) = slots.get_mut(slot) else { return };
        s.wants_down = false;
        let cut = !s.link.is_up();
        if cut {
            s.state = State::Waiting;
        }
        cut
    };
    if cut {
        tokio::spawn(supervise(world.clone(), slot, None));
    } else if let Some(inc) = world.launch(slot) {
        tokio::spawn(supervise(world.clone(), slot, Some(inc)));
    }
}

/// Asks the running replica `slot` down; a crash kills its wire and reconciles first.
fn stop(world: &World, slot: usize, crash: bool) -> String {
    let mut slots = world.slots.lock();
    let Some(s) = slots.get_mut(slot) else {
        return "no such replica".to_owned();
    };
    s.wants_down = true;
    s.state = State::Stopping;
    match &s.current {
        Some(current) => {
            if crash {
                current.wire.dead.cancel();
            }
            // A crashed incarnation's tasks are reaped: nothing it does reaches the
            // server any more, and its release fails.
            current.stop.cancel();
            format!("{}#{}", s.identity, current.number)
        }
        None => s.identity.clone(),
    }
}

fn partition(world: &Arc<World>, slot: usize, millis: u64) -> String {
    let until = Instant::now() + Duration::from_millis(millis);
    let (link, identity) = {
        let mut slots = world.slots.lock();
        let Some(s) = slots.get_mut(slot) else {
            return "no such replica".to_owned();
        };
        s.cut_until = Some(s.cut_until.map_or(until, |u| u.max(until)));
        (s.link.clone(), s.identity.clone())
    };
    link.set_up(false);
    let (world, who) = (world.clone(), identity.clone());
    tokio::spawn(async move {
        tokio::time::sleep_until(until).await;
        let heal = {
            let mut slots = world.slots.lock();
            match slots.get_mut(slot) {
                Some(s) if s.cut_until.is_some_and(|u| u <= Instant::now()) => {
                    s.cut_until = None;
                    true
                }
                _ => false,
            }
        };
        if heal {
            world.journal.event(format!("{who}: partition heals"));
            link.set_up(true);
        }
    });
    identity
}

/// Performs one step; what it did, for the trace.
async fn perform(world: &Arc<World>, step: &ShardStep) -> String {
    let labels = RingLabels::new(RING);
    let cms = ResourceClient::<ConfigMap>::namespaced(world.oracle.clone(), NAMESPACE);
    let pp = PostParams::default();
    match step {
        ShardStep::Write { name, value } => {
            let name = format!("cm{name}");
            match cms.create(&pp, &configmap(&name, *value)).await {
                Ok(_) => "created".to_owned(),
                Err(e) if e.is_already_exists() => {
                    let body = serde_json::json!({"data": {"v": value.to_string()}});
                    match cms
                        .patch(&name, &PatchParams::default(), &Patch::Merge(&body))
                        .await
                    {
                        Ok(_) => "updated".to_owned(),
                        Err(e) => format!("update failed: {e}"),
                    }
                }
                Err(e) => format!("create failed: {e}"),
            }
        }
        ShardStep::Delete { name } => match cms
            .delete(&format!("cm{name}"), &DeleteParams::default())
            .await
        {
            Ok(_) => "deleted".to_owned(),
            Err(e) => format!("not deleted: {e}"),
        },
        ShardStep::Join => {
            if world.running() >= MAX_RUNNING {
                return "no: as many replicas run as may".to_owned();
            }
            join(world)
        }
        ShardStep::Restart { replica } => {
            if world.running() >= MAX_RUNNING {
                return "no: as many replicas run as may".to_owned();
            }
            match pick(&world.in_state(State::Down), *replica) {
                Some(slot) => {
                    restart(world, slot);
                    world.slots.lock()[slot].identity.clone()
                }
                None => "no replica is down".to_owned(),
            }
        }
        ShardStep::Leave { replica } => match pick(&world.in_state(State::Running), *replica) {
            Some(slot) => stop(world, slot, false),
            None => "no replica runs".to_owned(),
        },
        ShardStep::Crash { replica } => match pick(&world.in_state(State::Running), *replica) {
            Some(slot) => stop(world, slot, true),
            None => "no replica runs".to_owned(),
        },
        ShardStep::Partition { replica, millis } => {
            match pick(&world.in_state(State::Running), *replica) {
                Some(slot) => partition(world, slot, *millis),
                None => "no replica runs".to_owned(),
            }
        }
        ShardStep::PartitionSharder { millis } => {
            let leases = ResourceClient::<Lease>::namespaced(world.oracle.clone(), LEASE_NAMESPACE);
            let holder = match leases.get(&format!("{RING}-sharder")).await {
                Ok(lease) => lease.spec.and_then(|s| s.holder_identity),
                Err(_) => None,
            };
            let slot = holder.and_then(|h| {
                world
                    .slots
                    .lock()
                    .iter()
                    .position(|s| s.identity == h && s.state == State::Running)
            });
            match slot {
                Some(slot) => partition(world, slot, *millis),
                None => "no running sharder".to_owned(),
            }
        }
        ShardStep::Ghost => {
            let n = world.ghosts.fetch_add(1, Ordering::Relaxed);
            let ghost = format!("ghost{n}");
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(member_lease_name(RING, &ghost)),
                    namespace: Some(LEASE_NAMESPACE.to_owned()),
                    labels: Some(labels.lease_labels()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(ghost.clone()),
                    lease_duration_seconds: Some(2),
                    ..LeaseSpec::default()
                }),
            };
            match ResourceClient::<Lease>::namespaced(world.oracle.clone(), LEASE_NAMESPACE)
                .create(&pp, &lease)
                .await
            {
                Ok(_) => ghost,
                Err(e) => format!("not created: {e}"),
            }
        }
        ShardStep::EditLabel { name, edit } => {
            let name = format!("cm{name}");
            let Ok(mut cm) = cms.get(&name).await else {
                return "no such object".to_owned();
            };
            let before = labels.assigned(&cm.metadata).map(str::to_owned);
            let map = cm.metadata.labels.get_or_insert_with(BTreeMap::new);
            match edit {
                LabelEdit::Stranger => {
                    map.insert(labels.shard_key().to_owned(), "stranger".to_owned());
                }
                LabelEdit::Drain => {
                    map.insert(labels.drain_key().to_owned(), "true".to_owned());
                }
                LabelEdit::Unlabel => {
                    map.remove(labels.shard_key());
                    map.remove(labels.drain_key());
                }
            }
            match cms.update(&pp, &cm).await {
                Ok(_) => {
                    if let (Some(from), LabelEdit::Stranger | LabelEdit::Unlabel) = (&before, edit)
                    {
                        world
                            .journal
                            .hand_move(&format!("{NAMESPACE}/{name}"), from);
                    }
                    format!("was assigned to {before:?}")
                }
                Err(e) => format!("not edited: {e}"),
            }
        }
        ShardStep::Sleep { millis } => {
            tokio::time::sleep(Duration::from_millis(*millis)).await;
            String::new()
        }
    }
}

impl fmt::Display for ShardReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} configmaps, {} reconciles, {} incarnations, {:?} virtual",
            self.configmaps.len(),
            self.reconciles,
            self.incarnations,
            self.virtual_time
        )?;
        for line in &self.after_hand_moves {
            write!(f, "\n  (after a hand move) {line}")?;
        }
        Ok(())
    }
}
