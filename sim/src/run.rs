//! Runs one schedule against the in-process test server on a current-thread tokio runtime
//! with a paused clock, waits for quiescence and checks the invariants.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
    sync::Arc,
    time::Duration,
};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube_core::{
    ObjectMeta,
    params::{DeleteParams, ListParams, PostParams},
};
use kubegen::{
    cache::{
        BackoffConfig, Dispatch, HandlerOptions, HandlerRegistration, NAMESPACE_INDEX, QueueKind,
        ReflectorConfig, SharedIndexInformer,
    },
    client::{Client, ResourceClient},
    controller::{CachedClient, Controller},
    informers::SharedInformerFactory,
};
use kubegen_testserver::InProcess;
use kubegen_testserver::{FailRule, Verb};
use tokio_util::sync::CancellationToken;

use crate::{
    mirror::{self, Mirror, OWNED_SUFFIX},
    recorder::{Gate, Recorder, Seen, key_of},
    schedule::{Kind, NAMESPACES, Schedule, Step},
};

/// Virtual time every response of the server takes (an API call in a cluster costs about
/// this much): work that makes work (a reconcile whose write wakes it again) moves the
/// clock on, as it does in a cluster, instead of spinning at one instant.
const REQUEST_LATENCY: Duration = Duration::from_millis(1);
/// Virtual time after every step.
const STEP_GAP: Duration = Duration::from_millis(50);
/// Virtual time between two quiescence checks.
const POLL: Duration = Duration::from_millis(250);
/// How long (virtual) everything may take to converge once the faults are over: longer
/// than the longest backoff (5 s), watch (2 s) plus idle margin and stall.
const CONVERGE_WITHIN: Duration = Duration::from_secs(120);

/// What a schedule broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// Every invariant that did not hold, one line each.
    pub problems: Vec<String>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}

/// What a passing run saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The ConfigMaps the server ended with: key → `v`.
    pub configmaps: BTreeMap<String, String>,
    /// The Secrets the server ended with: key → `v`.
    pub secrets: BTreeMap<String, String>,
    /// Notifications the recording handlers handled.
    pub events: usize,
    /// Tombstones they were given.
    pub tombstones: usize,
    /// Virtual time the run took.
    pub virtual_time: Duration,
    /// Reconciles the controller ran.
    pub reconciles: usize,
    /// What happened, in order: every handler's notifications (`<handler>: add ns/name
    /// rv`, …), then the server's final objects with their resourceVersions. A seed's
    /// replay repeats it line for line.
    pub trace: Vec<String>,
}

impl Report {
    /// How `other` (a replay of the same schedule) differs from this run, if it does: the
    /// first differing trace line, or the virtual time or reconcile count.
    pub fn replay_difference(&self, other: &Report) -> Option<String> {
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

/// The reflector settings of the simulation: 1 s watches (the timeout drawn from
/// `[1, 2)` s is always 1 s) and a 1 s idle margin, pages of 3 (relists go through continue
/// tokens, which compaction expires), and a backoff without jitter (800 ms doubling to
/// 5 s): nothing random, so a seed replays.
pub fn reflector_config() -> ReflectorConfig {
    ReflectorConfig {
        min_watch_timeout: Duration::from_secs(1),
        watch_idle_margin: Duration::from_secs(1),
        page_size: 3,
        backoff: BackoffConfig {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(5),
            factor: 2.0,
            jitter: 0.0,
            reset_after: Duration::from_secs(60),
        },
        ..ReflectorConfig::default()
    }
}

/// Runs `schedule` on a fresh current-thread runtime with a paused clock.
pub fn run(schedule: &Schedule) -> Result<Report, Divergence> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .map_err(|e| Divergence {
            problems: vec![format!("no runtime: {e}")],
        })?;
    runtime.block_on(run_async(schedule))
}

fn configmap(namespace: &str, name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(namespace.to_owned()),
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

/// The world under simulation.
struct World {
    server: InProcess,
    client: Client,
    configmaps: SharedIndexInformer<ConfigMap>,
    secrets: SharedIndexInformer<Secret>,
    steady: Recorder,
    slow: Recorder,
    gate: Arc<Gate>,
    secret_view: Recorder,
    late: Recorder,
    late_added: bool,
    /// The slow handler's registration: what it has yet to handle.
    slow_registration: Option<HandlerRegistration>,
}

fn on_task() -> HandlerOptions {
    HandlerOptions::new().dispatch(Dispatch::Task)
}

async fn run_async(schedule: &Schedule) -> Result<Report, Divergence> {
    let started = tokio::time::Instant::now();
    let server = InProcess::new();
    server.shared().faults.set_delay(Some(REQUEST_LATENCY));
    let client = Client::builder(server.clone()).rate_limit(-1.0, 0).build();
    let factory = SharedInformerFactory::builder(client.clone())
        .resync_for::<Secret>(Duration::from_secs(5))
        .build();
    let configmaps = factory.informer_for_with::<ConfigMap>(|b| b.reflector(reflector_config()));
    let secrets = factory.informer_for_with::<Secret>(|b| {
        b.reflector(reflector_config()).queue(QueueKind::DeltaFifo)
    });
    let gate = Arc::new(Gate::default());
    let mut world = World {
        server: server.clone(),
        client: client.clone(),
        configmaps: configmaps.clone(),
        secrets: secrets.clone(),
        steady: Recorder::new("configmap handler", None),
        slow: Recorder::new("slow configmap handler", Some(gate.clone())),
        gate,
        secret_view: Recorder::new("secret handler", None),
        late: Recorder::new("late configmap handler", None),
        late_added: false,
        slow_registration: None,
    };
    // Every handler but the slow one runs on a task of this runtime, on its schedule; the
    // slow one blocks at its gate, so it has a thread, which `settle` waits for.
    let registered = configmaps
        .add_event_handler_with_options(world.steady.clone(), on_task())
        .and_then(|_| configmaps.add_event_handler(world.slow.clone()))
        .and_then(|slow| {
            secrets
                .add_event_handler_with_options(world.secret_view.clone(), on_task())
                .map(|_| slow)
        });
    world.slow_registration = match registered {
        Ok(slow) => Some(slow),
        Err(e) => {
            return Err(Divergence {
                problems: vec![format!("could not add a handler: {e}")],
            });
        }
    };
    let controller = Controller::<ConfigMap>::builder(&factory)
        .named("mirror")
        .owns::<Secret>()
        .build();
    let secrets_client = match CachedClient::<Secret>::new(client.clone(), &factory) {
        Ok(c) => c,
        Err(e) => {
            return Err(Divergence {
                problems: vec![format!("no cached client: {e}")],
            });
        }
    };
    let mirror = Arc::new(Mirror::new(client.clone(), secrets_client, secrets.clone()));
    let stop = CancellationToken::new();
    let running = tokio::spawn(controller.run(mirror::reconcile, mirror.clone(), stop.clone()));
    factory.start();
    let synced = factory.wait_for_cache_sync(&stop).await;
    if !synced.values().all(|ok| *ok) {
        return Err(Divergence {
            problems: vec![format!("caches never synced: {synced:?}")],
        });
    }

    let mut slow_until: Option<usize> = None;
    for (i, step) in schedule.steps.iter().enumerate() {
        if slow_until.is_some_and(|end| i >= end) {
            world.gate.set_closed(false);
            slow_until = None;
        }
        if let Step::SlowHandler { steps } = step {
            world.gate.set_closed(true);
            slow_until = Some(i + usize::from(*steps));
        }
        perform(&mut world, step).await;
        world.settle().await;
        tokio::time::sleep(STEP_GAP).await;
    }
    world.gate.set_closed(false);
    world.server.shared().faults.clear();
    world
        .server
        .shared()
        .faults
        .set_delay(Some(REQUEST_LATENCY));

    let mut problems = Vec::new();
    let deadline = tokio::time::Instant::now() + CONVERGE_WITHIN;
    loop {
        world.settle().await;
        tokio::time::sleep(POLL).await;
        let state = server_state(&world.client).await;
        // What reached the slow handler while the server answered: handled before the
        // views are compared, whatever the thread's real-time pace.
        world.wait_for_thread();
        let now_problems = match &state {
            Some(state) => check(&world, state),
            None => vec!["the server did not answer the final list".to_owned()],
        };
        if now_problems.is_empty() || tokio::time::Instant::now() >= deadline {
            problems = now_problems;
            break;
        }
        let _ = &problems;
    }
    for r in world.recorders() {
        problems.extend(r.violations());
    }
    problems.extend(mirror.violations());
    let state = server_state(&world.client).await;
    if let Some(state) = &state {
        problems.extend(check_tombstones(&world, state));
    }
    // The slow handler's buffer is handled before shutdown drops what is left of it.
    world.wait_for_thread();
    stop.cancel();
    let _ = running.await;
    factory.shutdown().await;
    if !problems.is_empty() {
        return Err(Divergence { problems });
    }
    let state = state.unwrap_or_default();
    let mut trace = Vec::new();
    for r in world.recorders() {
        trace.extend(
            r.trace()
                .into_iter()
                .map(|line| format!("{}: {line}", r.name())),
        );
    }
    for (what, objects) in [("configmap", &state.configmaps), ("secret", &state.secrets)] {
        for (key, seen) in objects {
            trace.push(format!("server {what} {key} {}", seen.resource_version));
        }
    }
    Ok(Report {
        reconciles: mirror.reconciles(),
        trace,
        configmaps: state.configmap_values,
        secrets: state.secret_values,
        events: world.recorders().iter().map(|r| r.events()).sum(),
        tombstones: world.recorders().iter().map(|r| r.tombstones().len()).sum(),
        virtual_time: started.elapsed(),
    })
}

/// Real time the harness waits for the slow handler's thread at a time.
const THREAD_WAIT: Duration = Duration::from_micros(50);

impl World {
    /// Lets the tasks a step woke run, and the slow handler's thread (the one handler
    /// outside the runtime) catch up unless its gate holds it, before virtual time moves
    /// on: the thread works in real time, and the clock must not jump ahead of it. It
    /// only records, so while it waits at its gate nothing else depends on it.
    async fn settle(&self) {
        tokio::task::yield_now().await;
        self.wait_for_thread();
    }

    /// Blocks the runtime (so nothing new reaches the handlers) until the slow handler's
    /// thread has handled what it was given, unless its gate holds it.
    fn wait_for_thread(&self) {
        while !self.gate.is_closed()
            && self
                .slow_registration
                .as_ref()
                .is_some_and(|r| r.pending() > 0)
        {
            std::thread::sleep(THREAD_WAIT);
        }
    }

    fn recorders(&self) -> Vec<&Recorder> {
        let mut all = vec![&self.steady, &self.slow, &self.secret_view];
        if self.late_added {
            all.push(&self.late);
        }
        all
    }
}

async fn perform(world: &mut World, step: &Step) {
    let faults = &world.server.shared().faults;
    let store = world.server.engine().store();
    match step {
        Step::Write {
            kind,
            namespace,
            name,
            value,
        } => {
            let ns = NAMESPACES.get(*namespace).copied().unwrap_or("default");
            let value = value.to_string();
            match kind {
                Kind::ConfigMap => {
                    let api = ResourceClient::<ConfigMap>::namespaced(world.client.clone(), ns);
                    let obj = configmap(ns, &format!("cm{name}"), &value);
                    write(&api, obj, |o, n| o.data = n.data).await;
                }
                Kind::Secret => {
                    let api = ResourceClient::<Secret>::namespaced(world.client.clone(), ns);
                    let obj = mirror::secret(ns, &format!("s{name}"), &value);
                    write(&api, obj, |o, n| o.data = n.data).await;
                }
            }
        }
        Step::Delete {
            kind,
            namespace,
            name,
        } => {
            let ns = NAMESPACES.get(*namespace).copied().unwrap_or("default");
            let dp = DeleteParams::default();
            // An absent object is not an error of the system under test.
            let _ = match kind {
                Kind::ConfigMap => {
                    ResourceClient::<ConfigMap>::namespaced(world.client.clone(), ns)
                        .delete(&format!("cm{name}"), &dp)
                        .await
                        .map(|_| ())
                }
                Kind::Secret => ResourceClient::<Secret>::namespaced(world.client.clone(), ns)
                    .delete(&format!("s{name}"), &dp)
                    .await
                    .map(|_| ()),
            };
        }
        Step::DropWatches => store.drop_watchers(),
        Step::Compact => store.compact(),
        Step::WatchErrors { count } => {
            faults.fail(FailRule::on(Verb::Watch).code(500).times(*count))
        }
        Step::ListThrottled { count } => {
            faults.fail(
                FailRule::on(Verb::List)
                    .code(429)
                    .times(*count)
                    .retry_after(1),
            );
        }
        Step::Restart => {
            store.drop_watchers();
            faults.fail(FailRule::on(Verb::List).code(503));
            faults.fail(FailRule::on(Verb::Watch).code(503));
        }
        Step::StallWatches { millis } => {
            faults.stall_watches(Some(Duration::from_millis(*millis)));
        }
        Step::DeliveryDelay { millis } => {
            faults.set_watch_delivery_delay(millis.map(Duration::from_millis));
        }
        // The harness closes the gate (see `run_async`).
        Step::SlowHandler { .. } => {}
        Step::AddLateHandler => {
            if !world.late_added
                && world
                    .configmaps
                    .add_event_handler_with_options(world.late.clone(), on_task())
                    .is_ok()
            {
                world.late_added = true;
            }
        }
        Step::Sleep { millis } => tokio::time::sleep(Duration::from_millis(*millis)).await,
    }
}

/// Creates `obj`, or updates the existing object with `obj`'s data (`merge`); errors
/// (injected ones included) leave the server as it is, which is what is compared.
async fn write<K: kubegen::Object>(api: &ResourceClient<K>, obj: K, merge: impl Fn(&mut K, K)) {
    let pp = PostParams::default();
    if api.create(&pp, &obj).await.is_ok() {
        return;
    }
    let name = obj.meta().name.clone().unwrap_or_default();
    if let Ok(mut existing) = api.get(&name).await {
        merge(&mut existing, obj);
        let _ = api.update(&pp, &existing).await;
    }
}

/// The server's objects.
#[derive(Debug, Default)]
struct ServerState {
    configmaps: BTreeMap<String, Seen>,
    secrets: BTreeMap<String, Seen>,
    configmap_values: BTreeMap<String, String>,
    secret_values: BTreeMap<String, String>,
    /// Owned Secrets: key → (value, owner uid).
    owned: BTreeMap<String, (String, String)>,
    /// Every live uid.
    uids: BTreeSet<String>,
}

async fn server_state(client: &Client) -> Option<ServerState> {
    let lp = ListParams::default();
    let cms = ResourceClient::<ConfigMap>::all(client.clone())
        .list_all(&lp)
        .await
        .ok()?;
    let secrets = ResourceClient::<Secret>::all(client.clone())
        .list_all(&lp)
        .await
        .ok()?;
    let mut state = ServerState::default();
    for cm in &cms.items {
        let key = key_of(cm);
        state.uids.insert(Seen::of(cm).uid);
        state.configmaps.insert(key.clone(), Seen::of(cm));
        state
            .configmap_values
            .insert(key, mirror::configmap_value(cm).unwrap_or_default());
    }
    for s in &secrets.items {
        let key = key_of(s);
        state.uids.insert(Seen::of(s).uid);
        state.secrets.insert(key.clone(), Seen::of(s));
        let value = mirror::secret_value(s).unwrap_or_default();
        if key.ends_with(OWNED_SUFFIX) {
            let owner = mirror::owner_uid(s).unwrap_or_default().to_owned();
            state.owned.insert(key.clone(), (value.clone(), owner));
        }
        state.secret_values.insert(key, value);
    }
    Some(state)
}

fn cache_of<K: kubegen::Object>(informer: &SharedIndexInformer<K>) -> BTreeMap<String, Seen> {
    informer
        .indexer()
        .list()
        .iter()
        .map(|o| (key_of(o.as_ref()), Seen::of(o.as_ref())))
        .collect()
}

/// Differences between `what` and the server, as lines.
fn diff(what: &str, got: &BTreeMap<String, Seen>, want: &BTreeMap<String, Seen>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, w) in want {
        match got.get(k) {
            None => out.push(format!(
                "{what}: lacks {k} (server rv {})",
                w.resource_version
            )),
            Some(g) if g != w => out.push(format!(
                "{what}: {k} at rv {} (uid {}), server rv {} (uid {})",
                g.resource_version, g.uid, w.resource_version, w.uid
            )),
            Some(_) => {}
        }
    }
    for (k, g) in got {
        if !want.contains_key(k) {
            out.push(format!(
                "{what}: has {k} (rv {}) the server deleted",
                g.resource_version
            ));
        }
    }
    out
}

/// The index `NAMESPACE_INDEX` agrees with the cache: each namespace's index keys are
/// exactly the cached keys in that namespace (client-go `thread_safe_store.go`).
fn index_problems<K: kubegen::Object>(
    what: &str,
    informer: &SharedIndexInformer<K>,
) -> Vec<String> {
    let indexer = informer.indexer();
    let mut by_ns: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for obj in indexer.list() {
        by_ns
            .entry(obj.meta().namespace.clone().unwrap_or_default())
            .or_default()
            .insert(key_of(obj.as_ref()));
    }
    let mut values: BTreeSet<String> = by_ns.keys().cloned().collect();
    values.extend(indexer.list_index_func_values(NAMESPACE_INDEX));
    let mut out = Vec::new();
    for ns in values {
        let indexed: BTreeSet<String> = match indexer.index_keys(NAMESPACE_INDEX, &ns) {
            Ok(keys) => keys.into_iter().collect(),
            Err(e) => {
                out.push(format!("{what}: namespace index: {e}"));
                continue;
            }
        };
        let cached = by_ns.remove(&ns).unwrap_or_default();
        if indexed != cached {
            let stale: Vec<_> = indexed.difference(&cached).collect();
            let missing: Vec<_> = cached.difference(&indexed).collect();
            out.push(format!(
                "{what}: namespace index of {ns:?} has stale keys {stale:?} and lacks {missing:?}"
            ));
        }
    }
    out
}

/// The invariants that must hold once everything is quiet.
fn check(world: &World, state: &ServerState) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(diff(
        "configmap cache",
        &cache_of(&world.configmaps),
        &state.configmaps,
    ));
    out.extend(diff(
        "secret cache",
        &cache_of(&world.secrets),
        &state.secrets,
    ));
    out.extend(index_problems("configmap cache", &world.configmaps));
    out.extend(index_problems("secret cache", &world.secrets));
    for r in world.recorders() {
        let want = if r.name().starts_with("secret") {
            &state.secrets
        } else {
            &state.configmaps
        };
        out.extend(diff(r.name(), &r.objects(), want));
    }
    // The controller converged: one owned Secret per ConfigMap, with its value and uid.
    for (key, cm) in &state.configmaps {
        let owned = format!("{key}{OWNED_SUFFIX}");
        let value = state.configmap_values.get(key).cloned().unwrap_or_default();
        match state.owned.get(&owned) {
            None => out.push(format!("controller: no {owned} for {key}")),
            Some((v, uid)) if *v != value || *uid != cm.uid => out.push(format!(
                "controller: {owned} holds {v:?} owned by {uid}, {key} is {value:?} uid {}",
                cm.uid
            )),
            Some(_) => {}
        }
    }
    for owned in state.owned.keys() {
        let primary = owned.trim_end_matches(OWNED_SUFFIX);
        if !state.configmaps.contains_key(primary) {
            out.push(format!("controller: {owned} outlived {primary}"));
        }
    }
    out
}

/// Every tombstone stands for a real delete: its object's uid is gone from the server.
fn check_tombstones(world: &World, state: &ServerState) -> Vec<String> {
    let mut out = Vec::new();
    for r in world.recorders() {
        for (key, uid) in r.tombstones() {
            if !uid.is_empty() && state.uids.contains(&uid) {
                out.push(format!(
                    "{}: tombstone for {key} (uid {uid}) the server never deleted",
                    r.name()
                ));
            }
        }
    }
    out
}
