//! The Foo operator: what it reconciles and how (the same outcome as
//! `examples/sample-controller`'s hand-wired `controller.rs` and `runner.rs`).
//!
//! Its permissions (`kubegen-codegen rbac` writes them to `config/rbac/role.yaml`); the
//! finalizer is added and removed by updating the Foo, the status by a merge patch:
//!
//! +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos,verbs=get;list;watch;update;patch
//! +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
//! +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kubegen::client::params::{Patch, PatchParams};
use kubegen::client::{Client, ResourceClient};
use kubegen::controller::finalizer::{FinalizerError, FinalizerEvent, finalizer};
use kubegen::controller::{Action, CachedClient};
use kubegen::controllerutil::{
    CONDITION_FALSE, CONDITION_TRUE, CreateOrUpdateError, OperationResult, OwnerError,
    create_or_update, is_controlled_by, set_condition, set_controller_reference,
};
use kubegen::leaderelection::LeaderElectionConfig;
use kubegen::manager::{LeaderElectionOptions, Manager, ManagerError, ShardRingOptions};
use kubegen::record::{EventRecorder, EventType};
use kubegen::sharding::ShardRing;
use serde_json::json;

use crate::Foo;

/// The operator's name: event source, field manager, controller name.
pub const NAME: &str = "foo-operator";
/// The finalizer the operator puts on every Foo.
pub const FINALIZER: &str = "samplecontroller.k8s.io/cleanup";
/// Event reason when a Deployment of the Foo's name belongs to something else.
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// The condition the operator reports.
pub const READY: &str = "Ready";

/// Why a reconcile failed (retried with backoff, unless terminal).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Deployment of the Foo's name exists and is controlled by something else.
    #[error("Deployment {0:?} already exists and is not managed by Foo")]
    NotOwned(String),
    /// Writing the Deployment failed.
    #[error("writing the Deployment: {0}")]
    Deployment(#[from] CreateOrUpdateError<OwnerError>),
    /// An API call failed.
    #[error(transparent)]
    Api(#[from] kubegen::client::Error),
    /// The finalizer flow failed.
    #[error(transparent)]
    Finalizer(#[from] Box<FinalizerError<Error>>),
}

/// What every reconcile shares: clients that read from the cache and wait for their own
/// writes (so no reconcile acts on a cache older than the operator's last write).
pub struct Context {
    client: Client,
    foos: CachedClient<Foo>,
    deployments: CachedClient<Deployment>,
    recorder: EventRecorder,
    /// The shard ring (`--shards`): the Deployment carries its Foo's assignment.
    ring: Option<ShardRing>,
}

/// Reconciles one Foo: its finalizer first, then `apply` or `cleanup`.
pub async fn reconcile(foo: Arc<Foo>, ctx: Arc<Context>) -> Result<Action, Error> {
    let namespace = foo.metadata.namespace.clone().unwrap_or_default();
    let foos = ResourceClient::<Foo>::namespaced(ctx.client.clone(), &namespace);
    finalizer(&foos, FINALIZER, foo, |event| async {
        match event {
            FinalizerEvent::Apply(foo) => apply(&foo, &ctx).await,
            FinalizerEvent::Cleanup(foo) => cleanup(&foo, &ctx),
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

/// Brings the Foo's Deployment in line with its spec and reports what it sees.
async fn apply(foo: &Foo, ctx: &Context) -> Result<Action, Error> {
    let namespace = foo.metadata.namespace.as_deref().unwrap_or_default();
    let name = &foo.spec.deployment_name;
    let existing = ctx.deployments.get(Some(namespace), name).await.ok();
    if existing.is_some_and(|d| !is_controlled_by(d.as_ref(), foo)) {
        let message = format!("Resource {name:?} already exists and is not managed by Foo");
        let recorder = &ctx.recorder;
        recorder.event(foo, EventType::Warning, ERR_RESOURCE_EXISTS, &message);
        let refused = ready(foo, false, ERR_RESOURCE_EXISTS, &message);
        write_status(foo, ctx, 0, refused).await?;
        return Err(Error::NotOwned(name.clone()));
    }
    let deployments = ResourceClient::<Deployment>::namespaced(ctx.client.clone(), namespace);
    let mut skeleton = Deployment::default();
    skeleton.metadata.name = Some(name.clone());
    skeleton.metadata.namespace = Some(namespace.to_owned());
    let (deployment, result) = create_or_update(&deployments, skeleton, |d| {
        desired_spec(foo, d, ctx.ring.as_ref())
    })
    .await?;
    ctx.deployments.record_write(&deployment);
    if result != OperationResult::Unchanged {
        let message = format!("Deployment {name:?} {}", result.as_str());
        ctx.recorder
            .event(foo, EventType::Normal, "Synced", message);
    }
    let available = deployment.status.and_then(|s| s.available_replicas);
    let (available, wanted) = (available.unwrap_or(0), foo.spec.replicas.unwrap_or(1));
    let condition = if available >= wanted {
        ready(foo, true, "DeploymentAvailable", "all replicas available")
    } else {
        let message = format!("{available} of {wanted} replicas available");
        ready(foo, false, "DeploymentProgressing", &message)
    };
    write_status(foo, ctx, available, condition).await?;
    Ok(Action::done())
}

/// The Deployment's spec (`replicas` nginx pods labelled for the Foo), and its owner. In a
/// shard ring the Deployment also carries its Foo's shard label, so that it lands in the
/// cache of the replica that reconciles the Foo (the ring's sharder would move it there
/// too, a moment later).
fn desired_spec(
    foo: &Foo,
    deployment: &mut Deployment,
    ring: Option<&ShardRing>,
) -> Result<(), OwnerError> {
    if let Some(ring) = ring {
        let shard = ring.owner_labels(&foo.metadata);
        if !shard.is_empty() {
            deployment
                .metadata
                .labels
                .get_or_insert_default()
                .extend(shard);
        }
    }
    let name = foo.metadata.name.clone().unwrap_or_default();
    let labels = BTreeMap::from([("app".into(), "nginx".into()), ("controller".into(), name)]);
    let image = Some("nginx:latest".into());
    let container = Container {
        name: "nginx".into(),
        image,
        ..Default::default()
    };
    let spec = &mut deployment.spec;
    spec.replicas = foo.spec.replicas;
    spec.selector.match_labels = Some(labels.clone());
    spec.template.metadata = Some(ObjectMeta {
        labels: Some(labels),
        ..Default::default()
    });
    spec.template.spec = Some(PodSpec {
        containers: vec![container],
        ..Default::default()
    });
    set_controller_reference(foo, deployment)
}

/// The `Ready` condition (its transition time is set by `set_condition`).
fn ready(foo: &Foo, ok: bool, reason: &str, message: &str) -> Condition {
    Condition {
        type_: READY.into(),
        status: if ok { CONDITION_TRUE } else { CONDITION_FALSE }.into(),
        reason: reason.into(),
        message: message.into(),
        observed_generation: foo.metadata.generation,
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
    }
}

/// Writes the status when it changed (a merge patch of the status subresource: no
/// read-modify-write, so no conflict with the finalizer's own writes).
async fn write_status(
    foo: &Foo,
    ctx: &Context,
    available: i32,
    condition: Condition,
) -> Result<(), Error> {
    let mut status = foo.status.clone().unwrap_or_default();
    status.available_replicas = available;
    let changed = set_condition(&mut status.conditions, condition);
    if !changed && foo.status.as_ref() == Some(&status) {
        return Ok(());
    }
    let namespace = foo.metadata.namespace.as_deref().unwrap_or_default();
    let name = foo.metadata.name.as_deref().unwrap_or_default();
    let patch = Patch::Merge(json!({ "status": status }));
    let params = PatchParams::default();
    ctx.foos
        .patch_status(Some(namespace), name, &params, &patch)
        .await?;
    Ok(())
}

/// The Foo is being deleted: its Deployment goes with it (garbage collection, through the
/// owner reference); the operator only says so before letting the Foo go.
fn cleanup(foo: &Foo, ctx: &Context) -> Result<Action, Error> {
    let message = format!(
        "Deployment {:?} is left to garbage collection",
        foo.spec.deployment_name
    );
    ctx.recorder
        .event(foo, EventType::Normal, "CleanedUp", message);
    Ok(Action::done())
}

/// How the operator runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Concurrent reconciles.
    pub workers: usize,
    /// `/healthz` and `/readyz` (port 0: any free port).
    pub probe_addr: SocketAddr,
    /// `/metrics` (the probe address shares the probes' server).
    pub metrics_addr: SocketAddr,
    /// This replica's identity in the leader election (or in the shard ring).
    pub identity: String,
    /// Where the Lease `foo-operator` lives (or the shard ring's Leases).
    pub lease_namespace: String,
    /// `Some(ring)`: shard the Foos over every replica of the ring `ring` instead of
    /// electing one leader (see [`kubegen::sharding`]).
    pub shards: Option<String>,
    /// The Lease timings: lease duration, renew deadline and retry period (the
    /// callbacks are the manager's; the Lease is always released on a clean stop).
    pub election: LeaderElectionConfig,
}

/// The operator: a manager running the Foo controller while this replica holds the Lease
/// `foo-operator`, or, with [`Options::shards`], on every replica of the ring, each on
/// the Foos the ring assigns to it.
pub fn manager(client: Client, options: &Options) -> Result<Manager, ManagerError> {
    let config = LeaderElectionConfig {
        release_on_cancel: true,
        ..options.election.clone()
    };
    let builder = Manager::builder(client.clone()).default_resync(Duration::from_secs(30));
    let builder = match &options.shards {
        Some(ring) => builder.shard_ring(ShardRingOptions {
            namespace: options.lease_namespace.clone(),
            ring: ring.clone(),
            identity: options.identity.clone(),
            config,
        }),
        None => builder.leader_election(LeaderElectionOptions {
            namespace: options.lease_namespace.clone(),
            name: NAME.into(),
            identity: options.identity.clone(),
            config,
        }),
    };
    let mut manager = builder
        .probe_address(options.probe_addr)
        .metrics_address(options.metrics_addr)
        .build()?;
    let recorder = manager.event_recorder(NAME);
    let foos = CachedClient::new(client.clone(), manager.factory())?;
    let deployments = CachedClient::new(client.clone(), manager.factory())?;
    let controller = manager
        .controller::<Foo>()
        .read_your_writes(&foos)
        .named(NAME)
        .owns::<Deployment>()
        .max_concurrent_reconciles(options.workers)
        .recorder(recorder.clone())
        .build();
    let ctx = Context {
        client,
        foos,
        deployments,
        recorder,
        ring: manager.shard_ring().cloned(),
    };
    manager.add_controller(controller, reconcile, Arc::new(ctx));
    Ok(manager)
}
