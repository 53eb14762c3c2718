//! One incarnation of a replica: a `Manager` in ring mode (`ManagerBuilder::shard_ring`)
//! on its own [`ReplicaTransport`], running a ConfigMap controller that keeps an owned
//! Secret per ConfigMap holding its `v`, and records every reconcile in the
//! [`Journal`].
//!
//! The reconcile takes [`WORK`] of virtual time before it writes, and asks to run again
//! every [`PERIOD`], so that at any moment some objects are being reconciled: a handover
//! that does not wait for the holder overlaps one of them. A crash ends a reconcile in the
//! middle (the future is dropped), as a process's death does.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::core::v1::{ConfigMap, Secret},
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kube_core::{Resource, params::PostParams};
use kubegen::{
    cache::SharedIndexInformer,
    client::{Client, Error as ClientError, ResourceClient},
    controller::Action,
    leaderelection::LeaderElectionConfig,
    manager::{Manager, ManagerError, ShardRingOptions},
    sharding::ShardRing,
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{
    LEASE_NAMESPACE, NAMESPACE, RING,
    journal::{Journal, Outcome, Reconcile},
    net::{ReplicaTransport, Wire},
};
use crate::{mirror, run::reflector_config};

/// Virtual time a reconcile works before it writes.
pub const WORK: Duration = Duration::from_millis(100);
/// A reconciled object is reconciled again this much later.
pub const PERIOD: Duration = Duration::from_secs(1);
/// The suffix of the Secrets the controller owns.
pub const OWNED_SUFFIX: &str = "-owned";

/// The ring's Lease timings: a 2 s lease, a 1.5 s renew deadline, a 200 ms retry period
/// (the sharder's ticker runs at the retry period).
pub fn election() -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1500),
        retry_period: Duration::from_millis(200),
        ..LeaderElectionConfig::default()
    }
}

/// What a reconcile of one incarnation needs.
#[derive(Debug)]
pub struct Ctx {
    /// The replica's identity.
    pub identity: String,
    /// The incarnation's number.
    pub incarnation: u32,
    /// The incarnation's client.
    pub client: Client,
    /// The ring (for the owner labels of owned Secrets).
    pub ring: ShardRing,
    /// Where reconciles are recorded.
    pub journal: Arc<Journal>,
    /// Fired when the incarnation crashes.
    pub dead: CancellationToken,
}

/// A running incarnation.
#[derive(Debug)]
pub struct Incarnation {
    /// Its number (across the run).
    pub number: u32,
    /// Cancelled for a clean stop (or to reap a crashed incarnation).
    pub stop: CancellationToken,
    /// Its wire.
    pub wire: Wire,
    /// Its ConfigMap cache (only its share, by label selector).
    pub cache: SharedIndexInformer<ConfigMap>,
    /// `Manager::run`.
    pub task: JoinHandle<Result<(), ManagerError>>,
}

/// Starts incarnation `number` of replica `identity` over `transport`.
pub fn start(
    identity: &str,
    number: u32,
    transport: ReplicaTransport,
    journal: Arc<Journal>,
) -> Result<Incarnation, ManagerError> {
    let wire = transport.wire.clone();
    let client = Client::builder(transport).rate_limit(-1.0, 0).build();
    let mut manager = Manager::builder(client.clone())
        .shard_ring(ShardRingOptions {
            namespace: LEASE_NAMESPACE.to_owned(),
            ring: RING.to_owned(),
            identity: identity.to_owned(),
            config: election(),
        })
        .graceful_shutdown_timeout(Duration::from_secs(5))
        .build()?;
    // The informers the controller will ask for, with the simulation's reflector
    // settings (no jitter: a seed replays); the manager's share selector still applies.
    let cache = manager
        .factory()
        .informer_for_with::<ConfigMap>(|b| b.reflector(reflector_config()));
    manager
        .factory()
        .informer_for_with::<Secret>(|b| b.reflector(reflector_config()));
    let controller = manager
        .controller::<ConfigMap>()
        .named("shard-mirror")
        .owns::<Secret>()
        .max_concurrent_reconciles(2)
        .build();
    let ring = manager
        .shard_ring()
        .cloned()
        .ok_or(ManagerError::ShardMembershipLost)?;
    let ctx = Arc::new(Ctx {
        identity: identity.to_owned(),
        incarnation: number,
        client,
        ring,
        journal,
        dead: wire.dead.clone(),
    });
    manager.add_controller(controller, reconcile, ctx);
    let stop = wire.stop.clone();
    tokio::spawn(
        wire.membership
            .clone()
            .watch(wire.leaving.clone(), stop.clone()),
    );
    let task = tokio::spawn(manager.run(stop.clone()));
    Ok(Incarnation {
        number,
        stop,
        wire,
        cache,
        task,
    })
}

/// The ConfigMap's `v` as a number.
pub fn value_of(cm: &ConfigMap) -> Option<u32> {
    mirror::configmap_value(cm).and_then(|v| v.parse().ok())
}

/// Records the reconcile and does its work, unless the incarnation crashes first.
pub async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, ClientError> {
    if ctx.dead.is_cancelled() {
        // A dead process reconciles nothing (its worker is reaped with its stop token).
        return Ok(Action::done());
    }
    let labels = ctx.ring.labels();
    let started = ctx.journal.start(Reconcile {
        incarnation: ctx.incarnation,
        replica: ctx.identity.clone(),
        key: format!(
            "{}/{}",
            cm.metadata.namespace.as_deref().unwrap_or_default(),
            cm.metadata.name.as_deref().unwrap_or_default()
        ),
        value: value_of(&cm),
        assigned: labels.assigned(&cm.metadata).map(str::to_owned),
        draining: labels.draining(&cm.metadata),
        start: Duration::ZERO,
        end: None,
        outcome: Outcome::Running,
    });
    let worked = tokio::select! {
        biased;
        () = ctx.dead.cancelled() => None,
        worked = work(&cm, &ctx) => Some(worked),
    };
    match worked {
        None => {
            ctx.journal.end(started, Outcome::Aborted);
            Ok(Action::done())
        }
        Some(Ok(())) => {
            ctx.journal.end(started, Outcome::Done);
            Ok(Action::requeue_after(PERIOD))
        }
        Some(Err(error)) => {
            ctx.journal.end(started, Outcome::Failed);
            Err(error)
        }
    }
}

/// Makes the owned Secret hold the ConfigMap's value and name it as controller owner
/// (created with the owner's shard label, so it lands in the same member's cache).
async fn work(cm: &ConfigMap, ctx: &Ctx) -> Result<(), ClientError> {
    tokio::time::sleep(WORK).await;
    let name = format!(
        "{}{OWNED_SUFFIX}",
        cm.metadata.name.as_deref().unwrap_or_default()
    );
    let value = mirror::configmap_value(cm).unwrap_or_default();
    let secrets = ResourceClient::<Secret>::namespaced(ctx.client.clone(), NAMESPACE);
    let pp = PostParams::default();
    let uid = cm.metadata.uid.as_deref().unwrap_or_default();
    match secrets.get(&name).await {
        Ok(existing) => {
            if mirror::secret_value(&existing).as_deref() == Some(value.as_str())
                && mirror::owner_uid(&existing) == Some(uid)
            {
                return Ok(());
            }
            let mut changed = existing;
            changed.data = mirror::secret(NAMESPACE, &name, &value).data;
            changed.metadata.owner_references = Some(vec![owner(cm)]);
            secrets.update(&pp, &changed).await.map(drop)
        }
        Err(e) if e.is_not_found() => {
            let mut new = mirror::secret(NAMESPACE, &name, &value);
            new.metadata.labels = Some(ctx.ring.owner_labels(cm.meta()));
            new.metadata.owner_references = Some(vec![owner(cm)]);
            secrets.create(&pp, &new).await.map(drop)
        }
        Err(e) => Err(e),
    }
}

/// `cm` as the controller owner of its Secret.
fn owner(cm: &ConfigMap) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: cm.metadata.name.clone().unwrap_or_default(),
        uid: cm.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}
