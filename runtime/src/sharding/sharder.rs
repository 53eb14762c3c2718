//! [`Sharder`]: assigns the objects of a ring's kinds to its live members and moves them
//! with the drain handover; runs on the replica elected on the ring's sharder Lease.
//!
//! # One leadership term, `lead`
//!
//! 1. Watch, from a factory of its own (every object, metadata only), each kind of the
//!    ring, and the ring's member Leases (by the ring label). Every change queues the
//!    object; every Lease change and every retry period queue a membership check.
//! 2. Wait for the caches. Observe the Leases ([`Liveness`]: a Lease first seen counts as
//!    just renewed) and queue every object.
//! 3. A membership check observes every Lease again; when the live set changed, every
//!    object is queued again (rendezvous hashing moves about 1/n of them).
//! 4. An object of a primary kind: the [`decision::primary`] rule for its labels, the live
//!    members and its rendezvous pick; an owned object: [`decision::owned`], following its
//!    controller owner's assignment. `Assign` and `Drain` are merge patches carrying the
//!    resourceVersion the decision was made from: a stale decision fails with 409 Conflict
//!    and is made again when the informer delivers the newer object. After a primary
//!    object, its owned objects are queued.
//! 5. Every retry period, count the ring ([`RingStatus`], metrics).
//! 6. When the term ends (the token fires: lease lost or stop), the queue shuts down,
//!    workers finish the object in hand, informers stop. A new term starts from nothing:
//!    fresh caches, fresh Lease observations.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::Mutex;
use serde_json::json;
use tokio::{task::JoinSet, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{
    RingStatus, ShardRing,
    decision::{self, Decision},
    kinds::{KindCache, Role, api_group, hash_key},
    liveness::Liveness,
    rendezvous,
};
use crate::{
    cache::{
        CacheSynced, Dispatch, HandlerOptions, ListWatch, ResourceEventHandlerFuncs,
        SharedIndexInformer, wait_for_cache_sync,
    },
    client::ResourceClient,
    leaderelection::{Callbacks, LeaderElectionConfig, LeaderElector, LeaseLock},
    workqueue::{QueueConfig, RateLimitingQueue},
};

/// How many objects the sharder labels at once.
const WORKERS: usize = 4;

/// What the sharder's queue holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Item {
    /// Look at the member Leases again.
    Members,
    /// The object `key` of the ring's kind at this index.
    Object(usize, String),
}

/// The ring's sharder; see the module docs. It stands for election on the ring's
/// [`sharder_lease_name`](ShardRing::sharder_lease_name) and shards while it leads.
#[derive(Debug, Clone)]
pub struct Sharder {
    ring: ShardRing,
}

impl Sharder {
    /// The sharder of `ring`.
    pub fn new(ring: ShardRing) -> Self {
        Self { ring }
    }

    /// Stands for election on the ring's sharder Lease until `stop` fires, sharding while
    /// elected; after a lost term it stands again.
    pub async fn run(self, stop: CancellationToken) {
        let ring = &self.ring;
        while !stop.is_cancelled() {
            let term: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>> = Arc::default();
            let callbacks = Callbacks::new().on_started_leading({
                let (ring, term) = (ring.clone(), term.clone());
                move |leading: CancellationToken| {
                    tracing::info!(ring = %ring.labels().ring(), identity = %ring.identity(), "elected sharder");
                    *term.lock() = Some(tokio::spawn(lead(ring.clone(), leading)));
                }
            });
            let config = LeaderElectionConfig {
                callbacks,
                name: format!("shard ring {} sharder", ring.labels().ring()),
                ..ring.config().clone()
            };
            let lock = LeaseLock::new(
                ring.client().clone(),
                ring.namespace(),
                ring.sharder_lease_name(),
                ring.identity(),
            );
            let elector = match LeaderElector::new(lock, config) {
                Ok(elector) => elector,
                Err(error) => {
                    tracing::error!(%error, "the sharder's election settings are invalid");
                    return;
                }
            };
            elector.run(stop.clone()).await;
            let task = term.lock().take();
            if let Some(task) = task
                && let Err(error) = task.await
            {
                tracing::error!(%error, "the sharder's term failed");
            }
        }
    }
}

/// One kind of the ring as a term watches it.
struct WatchedKind {
    role: Role,
    group_kind: (String, String),
    cache: Arc<dyn KindCache>,
}

/// What the workers of one term share.
struct Term {
    ring: ShardRing,
    caches: Vec<WatchedKind>,
    leases: SharedIndexInformer<Lease>,
    queue: RateLimitingQueue<Item>,
    state: Mutex<TermState>,
}

#[derive(Default)]
struct TermState {
    liveness: Liveness,
    live: BTreeSet<String>,
    moves: u64,
    moves_recorded: u64,
}

/// One leadership term; see the module docs.
async fn lead(ring: ShardRing, leading: CancellationToken) {
    // 1. Caches of every object of the ring's kinds (only what the sharder reads of each:
    //    `view.rs`), and of the member Leases.
    let caches: Vec<_> = ring
        .kinds()
        .into_iter()
        .map(|(role, kind)| WatchedKind {
            role,
            group_kind: kind.group_kind(),
            cache: kind.watch(ring.client(), ring.watch_namespace()),
        })
        .collect();
    let selector = ring.labels().lease_selector();
    let leases = SharedIndexInformer::builder(
        ListWatch::new(ResourceClient::<Lease>::namespaced(
            ring.client().clone(),
            ring.namespace(),
        ))
        .tweak(Arc::new(move |params| {
            params.label_selector = Some(selector.clone());
        })),
    )
    .build();
    let queue = RateLimitingQueue::with_config(
        QueueConfig::new().name(format!("sharder-{}", ring.labels().ring())),
    );
    for (index, watched) in caches.iter().enumerate() {
        let queue = queue.clone();
        watched
            .cache
            .on_change(Arc::new(move |key| queue.add(Item::Object(index, key))));
    }
    {
        let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
        let handler = ResourceEventHandlerFuncs::<Lease>::new()
            .add_func(move |_, _| on_add.add(Item::Members))
            .update_func(move |_, _| on_update.add(Item::Members))
            .delete_func(move |_| on_delete.add(Item::Members));
        // On a task, as the kinds' handlers: it only queues (no thread per term, and under a
        // paused clock the sharder sees a Lease change at the virtual time it happened).
        if let Err(error) = leases
            .add_event_handler_with_options(handler, HandlerOptions::new().dispatch(Dispatch::Task))
        {
            tracing::error!(%error, "the sharder's Lease informer refused its handler");
        }
    }
    let (leases, leases_run) = leases.spawn(leading.child_token());
    let caches_run: Vec<_> = caches
        .iter()
        .filter_map(|w| w.cache.spawn(leading.child_token()))
        .collect();
    let term = Arc::new(Term {
        ring: ring.clone(),
        caches,
        leases,
        queue: queue.clone(),
        state: Mutex::new(TermState::default()),
    });

    // 2. Caches synced: observe the Leases, then every object.
    let synced = {
        let mut all: Vec<&dyn CacheSynced> = vec![&term.leases];
        all.extend(term.caches.iter().map(|w| w.cache.synced()));
        wait_for_cache_sync(&leading, &all).await
    };
    let mut tasks = JoinSet::new();
    if synced {
        term.check_members(true);
        term.count();
        for _ in 0..WORKERS {
            let term = term.clone();
            tasks.spawn(async move {
                while let Some(item) = term.queue.get().await {
                    term.process(&item).await;
                    term.queue.done(&item);
                }
            });
        }
        // 3 and 5. Membership checks and counts every retry period.
        let tick = term
            .ring
            .config()
            .retry_period
            .max(Duration::from_millis(100));
        let ticker = {
            let (term, leading) = (term.clone(), leading.clone());
            async move {
                loop {
                    tokio::select! {
                        biased;
                        () = leading.cancelled() => return,
                        () = tokio::time::sleep(tick) => {}
                    }
                    term.queue.add(Item::Members);
                    term.count();
                }
            }
        };
        tasks.spawn(ticker);
    }

    // 6. The term ends.
    leading.cancelled().await;
    queue.shut_down();
    while tasks.join_next().await.is_some() {}
    for run in caches_run {
        let _ = run.await;
    }
    let _ = leases_run.await;
    term.ring.status_cell().lock().sharding = false;
    if let Some(metrics) = term.ring.metrics() {
        metrics.record(term.ring.labels().ring(), &term.ring.status(), 0);
    }
    tracing::info!(ring = %term.ring.labels().ring(), "sharder term ended");
}

impl Term {
    async fn process(&self, item: &Item) {
        match item {
            Item::Members => self.check_members(false),
            Item::Object(index, key) => self.process_object(*index, key).await,
        }
    }

    /// 3. Observes every member Lease; queues every object when the live set changed.
    fn check_members(&self, first: bool) {
        let now = Instant::now();
        let leases = self.leases.indexer().list();
        let live = {
            let mut state = self.state.lock();
            let seen: BTreeSet<String> = leases
                .iter()
                .filter_map(|lease| {
                    let name = lease.metadata.name.clone()?;
                    let spec = lease.spec.clone().unwrap_or_default();
                    let duration = Duration::from_secs(
                        u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0),
                    );
                    state.liveness.observe(
                        &name,
                        spec.holder_identity.as_deref().unwrap_or_default(),
                        duration,
                        lease
                            .metadata
                            .resource_version
                            .as_deref()
                            .unwrap_or_default(),
                        now,
                    );
                    Some(name)
                })
                .collect();
            let gone: Vec<String> = state
                .liveness
                .names()
                .filter(|name| !seen.contains(*name))
                .cloned()
                .collect();
            for name in gone {
                state.liveness.forget(&name);
            }
            let live = state.liveness.live(now);
            if live == state.live && !first {
                return;
            }
            state.live = live.clone();
            live
        };
        tracing::info!(ring = %self.ring.labels().ring(), members = ?live, "ring members");
        self.ring.status_cell().lock().members = live.into_iter().collect();
        for (index, watched) in self.caches.iter().enumerate() {
            for key in watched.cache.keys() {
                self.queue.add(Item::Object(index, key));
            }
        }
    }

    /// 4. Decides and writes one object's assignment.
    async fn process_object(&self, index: usize, key: &str) {
        let Some(WatchedKind {
            role,
            group_kind,
            cache,
        }) = self.caches.get(index)
        else {
            return;
        };
        let Some(placement) = cache.get(key) else {
            return;
        };
        let labels = self.ring.labels();
        let assigned = placement.assigned(labels).map(str::to_owned);
        let draining = placement.draining(labels);
        let meta = &placement.metadata;
        let decision = match role {
            Role::Primary => {
                let live = self.state.lock().live.clone();
                let pick =
                    rendezvous::pick(&hash_key(group_kind, key), live.iter().map(String::as_str));
                decision::primary(assigned.as_deref(), draining, &live, pick)
            }
            Role::Owned => {
                let owner = self.owner_assignment(meta);
                match owner {
                    Some(owner) => decision::owned(assigned.as_deref(), draining, owner.as_deref()),
                    None => Decision::Keep,
                }
            }
        };
        let rv = meta.resource_version.clone().unwrap_or_default();
        let body = match &decision {
            Decision::Keep => None,
            Decision::Assign(member) => Some(json!({"metadata": {
                "resourceVersion": rv,
                "labels": { labels.shard_key(): member, labels.drain_key(): null },
            }})),
            Decision::Drain => Some(json!({"metadata": {
                "resourceVersion": rv,
                "labels": { labels.drain_key(): "true" },
            }})),
        };
        if let Some(body) = body {
            match cache.patch(key, body).await {
                Ok(()) => {
                    tracing::debug!(ring = %labels.ring(), %key, from = ?assigned, ?decision, "sharded");
                    self.queue.forget(&Item::Object(index, key.to_owned()));
                    if *role == Role::Primary
                        && matches!(decision, Decision::Assign(_))
                        && assigned.is_some()
                    {
                        self.state.lock().moves += 1;
                    }
                }
                // A newer version is on its way through the informer, or the object is gone.
                Err(error) if error.is_conflict() || error.is_not_found() => {
                    tracing::debug!(%key, %error, "assignment out of date");
                }
                Err(error) => {
                    tracing::warn!(ring = %labels.ring(), %key, %error, "writing the assignment failed; retrying");
                    self.queue
                        .add_rate_limited(Item::Object(index, key.to_owned()));
                }
            }
        }
        if *role == Role::Primary
            && let Some(uid) = &meta.uid
        {
            for (owned_index, owned) in self.caches.iter().enumerate() {
                if owned.role == Role::Owned {
                    for owned_key in owned.cache.owned_by(uid) {
                        self.queue.add(Item::Object(owned_index, owned_key));
                    }
                }
            }
        }
    }

    /// The assignment of an owned object's controller owner: `None` when the owner is no
    /// object of the ring's primary kinds (the object is not the ring's), `Some(None)`
    /// when it is but is assigned to nobody now.
    fn owner_assignment(&self, meta: &kube_core::ObjectMeta) -> Option<Option<String>> {
        let owner = meta
            .owner_references
            .iter()
            .flatten()
            .find(|r| r.controller == Some(true))?;
        let group = api_group(&owner.api_version);
        let cache = &self
            .caches
            .iter()
            .find(|w| {
                w.role == Role::Primary && w.group_kind.0 == group && w.group_kind.1 == owner.kind
            })?
            .cache;
        let key = match &meta.namespace {
            Some(ns) => format!("{ns}/{}", owner.name),
            None => owner.name.clone(),
        };
        let owner_meta = cache
            .get(&key)
            .or_else(|| cache.get(&owner.name))
            .filter(|m| m.metadata.uid.as_deref() == Some(owner.uid.as_str()));
        Some(owner_meta.and_then(|m| m.assigned(self.ring.labels()).map(str::to_owned)))
    }

    /// 5. Counts the ring into its status and metrics.
    fn count(&self) {
        let labels = self.ring.labels();
        let mut status = RingStatus {
            sharding: true,
            members: self.state.lock().live.iter().cloned().collect(),
            ..RingStatus::default()
        };
        for watched in &self.caches {
            if watched.role != Role::Primary {
                continue;
            }
            watched.cache.for_each(&mut |placement| {
                match placement.assigned(labels) {
                    Some(member) => *status.objects.entry(member.to_owned()).or_default() += 1,
                    None => status.unassigned += 1,
                }
                if placement.draining(labels) {
                    status.drains_in_flight += 1;
                }
            });
        }
        let new_moves = {
            let mut state = self.state.lock();
            status.moves = state.moves;
            let new = state.moves - state.moves_recorded;
            state.moves_recorded = state.moves;
            new
        };
        if let Some(metrics) = self.ring.metrics() {
            metrics.record(labels.ring(), &status, new_moves);
        }
        *self.ring.status_cell().lock() = status;
    }
}
