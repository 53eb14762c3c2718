//! kube-controller-manager's Deployment controller (kubernetes
//! `pkg/controller/deployment/deployment_controller.go`, `sync.go`, `rolling.go`,
//! `recreate.go`, `progress.go`, `rollback.go` and `util/deployment_util.go`), as a
//! kubegen [`Controller`] over the cluster's shared informers.
//!
//! # The sync loop
//!
//! Every change to a Deployment, to a ReplicaSet it controls, or to an orphan ReplicaSet
//! its selector matches, queues the Deployment; a progress deadline queues it again later.
//! One reconcile:
//!
//! 1. **Waits for its own writes.** Before reading ReplicaSets from the cache it waits
//!    until the cache holds every ReplicaSet this controller wrote
//!    (`ConsistencyStore::ensure_all_ready`, KEP-5647, in place of kube-controller-manager's
//!    expectations): a ReplicaSet created by the previous reconcile but not yet seen would
//!    otherwise be created again. If the cache does not catch up in time, the Deployment
//!    is requeued. Reconciles of the Deployment itself wait for this controller's writes of
//!    it the same way (the builder's `read_your_writes`).
//! 2. **Claims ReplicaSets** ([`claim`]): those in the namespace whose controller
//!    ownerReference is this Deployment and that its selector still matches; orphans the
//!    selector matches are adopted (an ownerReference patched in, after checking with the
//!    API server that the Deployment is still the same object and not being deleted);
//!    owned ones it no longer matches are released.
//! 3. **Plans** ([`sync::plan`], pure): a Deployment with an empty selector only records
//!    its generation; one being deleted only has its status synced; a paused one gets its
//!    `Progressing` condition set to `DeploymentPaused` and is only scaled
//!    ([`scale`]); a change of `spec.replicas` (a ReplicaSet's `desired-replicas`
//!    annotation differs) is only scaled; otherwise the strategy rolls out — `RollingUpdate`
//!    ([`rolling`]) or `Recreate` ([`recreate`]). Along the way the new ReplicaSet is found
//!    or built ([`replicasets`], its name from [`hash`]), revisions are numbered, old
//!    history beyond `revisionHistoryLimit` goes ([`history`]), and the status and its
//!    conditions are computed ([`status`]).
//! 4. **Writes** the plan: the new ReplicaSet first (a name taken by another template
//!    raises `status.collisionCount` and retries), then ReplicaSet updates (each
//!    conditional on the cached resourceVersion), deletes (preconditioned on uid and
//!    resourceVersion), the Deployment's `deployment.kubernetes.io/revision` annotation (a
//!    merge patch), and last the status (`update_status`, conditional too). A conflict
//!    ends the reconcile quietly: the newer object's own event brings the Deployment back
//!    to a fresher cache (kube-controller-manager logs conflicts only at high verbosity).
//! 5. **Requeues** after `lastUpdateTime + progressDeadlineSeconds` (plus a second) while a
//!    rollout is under way, so a stuck rollout turns `ProgressDeadlineExceeded` without
//!    any event. `minReadySeconds` needs no requeue here: the ReplicaSet controller
//!    requeues itself until pods become available, and its status update wakes the
//!    Deployment.
//!
//! `kubectl rollout undo` (client side: it copies an old ReplicaSet's template into the
//! Deployment) and `rollout restart` (a template annotation) are ordinary template changes
//! to this controller; `rollout history` reads the revision annotations. `rollback.go`'s
//! `spec.rollbackTo` exists only in `extensions/v1beta1` and is not served.
//!
//! Time comes from [`status::now`], once per reconcile; the planning code takes it as a
//! parameter.

mod claim;
mod error;
pub(super) mod hash;
mod history;
mod recreate;
mod replicasets;
mod rolling;
mod scale;
mod spec;
mod status;
mod sync;

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kubegen::{
    cache::{InformerError, Lister, Selector},
    client::{
        Client, ResourceClient,
        params::{DeleteParams, Patch, PatchParams, PostParams, Preconditions},
    },
    controller::{
        Action, CachedClient, Controller, ControllerError, DEFAULT_CONSISTENCY_WAIT, Request,
    },
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use self::{claim::Claim, error::DeploymentError, sync::Plan};
use super::config::Cluster;
use crate::controllers::compat::Opt;

/// The controller's name (kube-controller-manager's `--controllers` spelling).
const NAME: &str = "deployment";

/// How soon a reconcile that found its cache behind its own writes looks again.
const STALE_RETRY: Duration = Duration::from_millis(100);

/// What every reconcile shares.
struct Context {
    /// The cluster's client, for fresh reads.
    client: Client,
    /// Writes of ReplicaSets, remembered until the cache has them.
    replica_sets: CachedClient<ReplicaSet>,
    /// Writes of Deployments, remembered until the cache has them.
    deployments: CachedClient<Deployment>,
}

/// Runs the Deployment controller over `cluster` until `stop` fires.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let informer_error = |source: InformerError| ControllerError::Informer {
        controller: NAME.to_owned(),
        source,
    };
    let replica_sets = CachedClient::<ReplicaSet>::new(cluster.client.clone(), &cluster.factory)
        .map_err(informer_error)?;
    let deployments = CachedClient::<Deployment>::new(cluster.client.clone(), &cluster.factory)
        .map_err(informer_error)?;
    let deployment_lister = cluster.factory.lister_for::<Deployment>();
    let controller = Controller::<Deployment>::builder(&cluster.factory)
        .named(NAME)
        .owns::<ReplicaSet>()
        .watches::<ReplicaSet>(move |r| orphan_requests(&deployment_lister, r))
        .read_your_writes(&deployments)
        .build();
    let ctx = Arc::new(Context {
        client: cluster.client.clone(),
        replica_sets,
        deployments,
    });
    controller.run(reconcile, ctx, stop).await.map(|_report| ())
}

/// The Deployments an orphan ReplicaSet could be adopted by (those in its namespace whose
/// selector matches it), as `addReplicaSet` / `updateReplicaSet` look them up. Owned
/// ReplicaSets are routed by `owns`.
fn orphan_requests(deployments: &Lister<Deployment>, r: &ReplicaSet) -> Vec<Request> {
    if replicasets::controller_of(&r.metadata).is_some() {
        return Vec::new();
    }
    let Some(namespace) = r.metadata.namespace.as_deref() else {
        return Vec::new();
    };
    deployments
        .namespaced(namespace)
        .list(&Selector::default())
        .into_iter()
        .filter(|d| {
            d.spec.opt().is_some_and(|s| {
                !claim::is_empty(&s.selector)
                    && claim::matches(&s.selector, r.metadata.labels.as_ref())
            })
        })
        .filter_map(|d| {
            d.metadata
                .name
                .as_deref()
                .map(|name| Request::new(Some(namespace), name))
        })
        .collect()
}

/// One sync of one Deployment; see the module docs.
async fn reconcile(d: Arc<Deployment>, ctx: Arc<Context>) -> Result<Action, DeploymentError> {
    if let Some(store) = ctx.replica_sets.consistency()
        && !store.ensure_all_ready(DEFAULT_CONSISTENCY_WAIT).await
    {
        tracing::debug!(
            deployment = ?d.metadata.name,
            "ReplicaSet cache behind our own writes; requeueing"
        );
        return Ok(Action::requeue_after(STALE_RETRY));
    }
    let synced = async {
        let owned = claim_replica_sets(&d, &ctx).await?;
        let now = status::now();
        let plan = sync::plan(&d, owned, now)?;
        execute(&d, plan, &ctx).await
    };
    match synced.await {
        // A write met a newer object: the cache is behind, and the newer object's own
        // event brings this Deployment back (as kube-controller-manager, which logs
        // conflicts only at high verbosity).
        Err(DeploymentError::Api { source, .. }) if source.is_conflict() => {
            tracing::debug!(deployment = ?d.metadata.name, %source, "conflict; waiting for the newer object");
            Ok(Action::done())
        }
        other => other,
    }
}

/// `namespace` and `name` of an object's metadata ("" when missing).
fn key_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// `getReplicaSetsForDeployment`: the ReplicaSets `d` owns after adopting and releasing.
async fn claim_replica_sets(
    d: &Deployment,
    ctx: &Context,
) -> Result<Vec<ReplicaSet>, DeploymentError> {
    let (namespace, _) = key_of(&d.metadata);
    let candidates = ctx
        .replica_sets
        .lister()
        .namespaced(&namespace)
        .list(&Selector::default());
    let mut owned = Vec::new();
    let mut can_adopt = None;
    for r in candidates {
        match claim::claim(d, &r) {
            Claim::Owned => owned.push((*r).clone()),
            Claim::Adopt => {
                if can_adopt.is_none() {
                    can_adopt = Some(still_adoptable(d, ctx).await?);
                }
                if can_adopt == Some(true)
                    && let Some(adopted) = adopt(d, &r, ctx).await?
                {
                    owned.push(adopted);
                }
            }
            Claim::Release => release(d, &r, ctx).await?,
            Claim::Ignore => {}
        }
    }
    Ok(owned)
}

/// `RecheckDeletionTimestamp`: whether the Deployment, read fresh from the API server, is
/// still the same object and not being deleted (the cache may be behind a delete and
/// re-create).
async fn still_adoptable(d: &Deployment, ctx: &Context) -> Result<bool, DeploymentError> {
    let (namespace, name) = key_of(&d.metadata);
    match ResourceClient::<Deployment>::namespaced(ctx.client.clone(), &namespace)
        .get(&name)
        .await
    {
        Ok(fresh) => {
            Ok(fresh.metadata.uid == d.metadata.uid && fresh.metadata.deletion_timestamp.is_none())
        }
        Err(err) if err.is_not_found() => Ok(false),
        Err(err) => Err(DeploymentError::api(
            "reading Deployment",
            &namespace,
            &name,
            err,
        )),
    }
}

/// A merge patch setting a ReplicaSet's ownerReferences, conditional on its uid and
/// resourceVersion.
fn owner_patch(
    r: &ReplicaSet,
    owners: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference],
) -> serde_json::Value {
    json!({
        "metadata": {
            "uid": r.metadata.uid,
            "resourceVersion": r.metadata.resource_version,
            "ownerReferences": owners,
        }
    })
}

/// Adopts an orphan: patches a controller ownerReference to `d` in. `None` if it is gone.
async fn adopt(
    d: &Deployment,
    r: &ReplicaSet,
    ctx: &Context,
) -> Result<Option<ReplicaSet>, DeploymentError> {
    let (namespace, name) = key_of(&r.metadata);
    let mut owners = r.metadata.owner_references.clone().unwrap_or_default();
    owners.push(replicasets::controller_ref(d));
    let patch = owner_patch(r, &owners);
    match ctx
        .replica_sets
        .patch(
            Some(namespace.as_str()),
            &name,
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(adopted) => Ok(Some(adopted)),
        Err(err) if err.is_not_found() || err.is_conflict() => Ok(None),
        Err(err) => Err(DeploymentError::api(
            "adopting ReplicaSet",
            &namespace,
            &name,
            err,
        )),
    }
}

/// Releases a ReplicaSet the selector no longer matches: removes `d`'s ownerReference.
async fn release(d: &Deployment, r: &ReplicaSet, ctx: &Context) -> Result<(), DeploymentError> {
    let (namespace, name) = key_of(&r.metadata);
    let owners: Vec<_> = r
        .metadata
        .owner_references
        .iter()
        .flatten()
        .filter(|o| Some(&o.uid) != d.metadata.uid.as_ref())
        .cloned()
        .collect();
    let patch = owner_patch(r, &owners);
    match ctx
        .replica_sets
        .patch(
            Some(namespace.as_str()),
            &name,
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(err) if err.is_not_found() || err.is_conflict() => Ok(()),
        Err(err) => Err(DeploymentError::api(
            "releasing ReplicaSet",
            &namespace,
            &name,
            err,
        )),
    }
}

/// Performs `plan`'s writes in order; see the module docs.
async fn execute(d: &Deployment, plan: Plan, ctx: &Context) -> Result<Action, DeploymentError> {
    let (namespace, name) = key_of(&d.metadata);
    if let Some(new) = &plan.create
        && let Err(err) = ctx.replica_sets.create(&PostParams::default(), new).await
    {
        return create_failed(d, new, err, ctx).await;
    }
    for r in &plan.updates {
        if let Err(err) = ctx.replica_sets.update(&PostParams::default(), r).await {
            let (ns, rs_name) = key_of(&r.metadata);
            return Err(DeploymentError::api(
                "updating ReplicaSet",
                &ns,
                &rs_name,
                err,
            ));
        }
    }
    for r in &plan.deletes {
        let (ns, rs_name) = key_of(&r.metadata);
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: r.metadata.uid.clone(),
                resource_version: r.metadata.resource_version.clone(),
            }),
            ..DeleteParams::default()
        };
        match ctx
            .replica_sets
            .delete(Some(ns.as_str()), &rs_name, &params)
            .await
        {
            Ok(_) => {}
            // Gone already, or changed since the cache saw it: the next sync decides again.
            Err(err) if err.is_not_found() || err.is_conflict() => {}
            Err(err) => {
                return Err(DeploymentError::api(
                    "deleting ReplicaSet",
                    &ns,
                    &rs_name,
                    err,
                ));
            }
        }
    }
    let mut latest = None;
    if let Some(revision) = &plan.revision {
        let patch = json!({ "metadata": { "annotations": { (replicasets::REVISION): revision } } });
        let patched = ctx
            .deployments
            .patch(
                Some(namespace.as_str()),
                &name,
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(|err| DeploymentError::api("annotating Deployment", &namespace, &name, err))?;
        latest = Some(patched);
    }
    if let Some(status) = plan.status {
        let mut object = latest.unwrap_or_else(|| d.clone());
        object.status = Some(status);
        ctx.deployments
            .update_status(&PostParams::default(), &object)
            .await
            .map_err(|err| {
                DeploymentError::api("updating status of Deployment", &namespace, &name, err)
            })?;
    }
    Ok(plan
        .requeue_after
        .map_or_else(Action::done, Action::requeue_after))
}

/// The new ReplicaSet could not be created (`getNewReplicaSet`'s error handling): a name
/// taken by our own ReplicaSet with the same template means the cache is behind (look
/// again); taken by another, a hash collision (raise `collisionCount`); any other error is
/// recorded as `Progressing` False `ReplicaSetCreateError`.
async fn create_failed(
    d: &Deployment,
    new: &ReplicaSet,
    err: kubegen::client::Error,
    ctx: &Context,
) -> Result<Action, DeploymentError> {
    let (namespace, _) = key_of(&d.metadata);
    let (_, new_name) = key_of(&new.metadata);
    let mut new_status = spec::status(d);
    if err.is_already_exists() {
        let existing = ResourceClient::<ReplicaSet>::namespaced(ctx.client.clone(), &namespace)
            .get(&new_name)
            .await
            .map_err(|e| DeploymentError::api("reading ReplicaSet", &namespace, &new_name, e))?;
        let ours = replicasets::controller_of(&existing.metadata)
            .is_some_and(|o| Some(&o.uid) == d.metadata.uid.as_ref());
        let same = existing
            .spec
            .opt()
            .and_then(|s| s.template.as_ref())
            .is_some_and(|t| {
                replicasets::equal_ignore_hash(t, &replicasets::deployment_template(d))
            });
        if ours && same {
            return Ok(Action::requeue_after(STALE_RETRY));
        }
        let count = new_status.collision_count.unwrap_or(0).saturating_add(1);
        new_status.collision_count = Some(count);
        write_status(d, new_status, ctx).await?;
        return Err(DeploymentError::HashCollision {
            name: new_name,
            count,
        });
    }
    if spec::progress_deadline(d).is_some() {
        let message = format!("Failed to create new replica set {new_name:?}: {err}");
        status::set_condition(
            &mut new_status,
            status::condition(
                status::PROGRESSING,
                "False",
                status::FAILED_RS_CREATE,
                message,
                status::now(),
            ),
        );
        if let Err(status_err) = write_status(d, new_status, ctx).await {
            tracing::warn!(err = %status_err, "recording the ReplicaSet create failure");
        }
    }
    Err(DeploymentError::api(
        "creating ReplicaSet",
        &namespace,
        &new_name,
        err,
    ))
}

/// Writes `status` as `d`'s status.
async fn write_status(
    d: &Deployment,
    status: k8s_openapi::api::apps::v1::DeploymentStatus,
    ctx: &Context,
) -> Result<(), DeploymentError> {
    let (namespace, name) = key_of(&d.metadata);
    let mut object = d.clone();
    object.status = Some(status);
    ctx.deployments
        .update_status(&PostParams::default(), &object)
        .await
        .map(|_| ())
        .map_err(|err| {
            DeploymentError::api("updating status of Deployment", &namespace, &name, err)
        })
}

#[cfg(test)]
mod tests {
    use kubegen::{client::params::ListParams, informers::SharedInformerFactory};

    use super::*;
    use crate::{InProcess, controllers::config::ClusterConfig};

    /// Plays the ReplicaSet controller: every ReplicaSet's pods exist and are available
    /// at once.
    async fn settle(replica_sets: &ResourceClient<ReplicaSet>) {
        let Ok(list) = replica_sets.list(&ListParams::default()).await else {
            return;
        };
        for mut r in list.items {
            let wanted = replicasets::spec_replicas(&r);
            let generation = r.metadata.generation;
            let status = r.status.get_or_insert_with(Default::default);
            if status.replicas == wanted
                && status.available_replicas == Some(wanted)
                && status.observed_generation == generation
            {
                continue;
            }
            status.replicas = wanted;
            status.ready_replicas = Some(wanted);
            status.available_replicas = Some(wanted);
            status.observed_generation = generation;
            // A conflict is retried on the next round.
            let _ = replica_sets.update_status(&PostParams::default(), &r).await;
        }
    }

    /// Whether `d` is rolled out at `revision`, by `kubectl rollout status`'s rules.
    fn rolled_out(d: &Deployment, revision: &str) -> bool {
        let status = spec::status(d);
        let replicas = Some(spec::replicas(d));
        let annotations = d.metadata.annotations.clone().unwrap_or_default();
        status.observed_generation >= d.metadata.generation
            && status.updated_replicas == replicas
            && status.replicas == replicas
            && status.available_replicas == replicas
            && status::get_condition(&status, status::PROGRESSING).and_then(|c| c.reason.as_deref())
                == Some(status::NEW_RS_AVAILABLE)
            && annotations.get(replicasets::REVISION).map(String::as_str) == Some(revision)
    }

    /// Settles ReplicaSets until `web` is rolled out at `revision`.
    async fn wait_rolled_out(
        deployments: &ResourceClient<Deployment>,
        replica_sets: &ResourceClient<ReplicaSet>,
        revision: &str,
    ) -> Deployment {
        let mut last = None;
        for _ in 0..500 {
            settle(replica_sets).await;
            if let Ok(d) = deployments.get("web").await {
                if rolled_out(&d, revision) {
                    return d;
                }
                last = Some(d);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("not rolled out at revision {revision}: {last:#?}");
    }

    /// The running controller.
    type ControllerTask = tokio::task::JoinHandle<Result<(), ControllerError>>;

    /// A client pair over a fresh server running only the Deployment controller; the
    /// token stops it.
    fn start() -> (
        ResourceClient<Deployment>,
        ResourceClient<ReplicaSet>,
        CancellationToken,
        ControllerTask,
    ) {
        let server = InProcess::new();
        let client = Client::new(server);
        let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
        let cluster = Arc::new(Cluster {
            client: client.clone(),
            factory,
            config: ClusterConfig::none(),
        });
        let stop = CancellationToken::new();
        let controller = tokio::spawn(run(cluster, stop.clone()));
        (
            ResourceClient::namespaced(client.clone(), "default"),
            ResourceClient::namespaced(client, "default"),
            stop,
            controller,
        )
    }

    /// The `web` Deployment with `replicas` pods of `nginx:1`, strategy `strategy`.
    fn web(replicas: i32, strategy: &str) -> Deployment {
        serde_json::from_value(json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "strategy": {"type": strategy},
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}
                }
            }
        }))
        .expect("a Deployment")
    }

    #[tokio::test]
    async fn recreate_and_scaling_go_through_the_api() {
        let (deployments, replica_sets, stop, controller) = start();
        deployments
            .create(&PostParams::default(), &web(2, "Recreate"))
            .await
            .expect("created");
        wait_rolled_out(&deployments, &replica_sets, "1").await;
        let scale = json!({"spec": {"replicas": 4}});
        deployments
            .patch("web", &PatchParams::default(), &Patch::Merge(&scale))
            .await
            .expect("scaled");
        let d = wait_rolled_out(&deployments, &replica_sets, "1").await;
        assert_eq!(spec::status(&d).replicas, Some(4));
        let image = json!({"spec": {"template": {"spec": {
            "containers": [{"name": "web", "image": "nginx:2"}]
        }}}});
        deployments
            .patch("web", &PatchParams::default(), &Patch::Merge(&image))
            .await
            .expect("patched");
        wait_rolled_out(&deployments, &replica_sets, "2").await;
        let sets = replica_sets
            .list(&ListParams::default())
            .await
            .expect("listed")
            .items;
        let sizes: Vec<(Option<i64>, i32)> = sets
            .iter()
            .map(|r| (replicasets::revision(r), replicasets::spec_replicas(r)))
            .collect();
        assert_eq!(sizes.len(), 2);
        assert!(sizes.contains(&(Some(1), 0)) && sizes.contains(&(Some(2), 4)));
        stop.cancel();
        let _ = controller.await;
    }

    #[tokio::test]
    async fn a_deployment_rolls_out_and_updates_through_the_api() {
        let (deployments, replica_sets, stop, controller) = start();
        let d = web(3, "RollingUpdate");
        deployments
            .create(&PostParams::default(), &d)
            .await
            .expect("created");
        wait_rolled_out(&deployments, &replica_sets, "1").await;

        let image = json!({"spec": {"template": {"spec": {
            "containers": [{"name": "web", "image": "nginx:2"}]
        }}}});
        deployments
            .patch("web", &PatchParams::default(), &Patch::Merge(&image))
            .await
            .expect("patched");
        let d = wait_rolled_out(&deployments, &replica_sets, "2").await;
        let available = status::get_condition(&spec::status(&d), status::AVAILABLE)
            .and_then(|c| c.reason.clone());
        assert_eq!(
            available.as_deref(),
            Some(status::MINIMUM_REPLICAS_AVAILABLE)
        );

        let sets = replica_sets
            .list(&ListParams::default())
            .await
            .expect("listed")
            .items;
        assert_eq!(sets.len(), 2, "exactly one ReplicaSet per template");
        for r in &sets {
            let owner = replicasets::controller_of(&r.metadata)
                .cloned()
                .unwrap_or_default();
            assert_eq!(Some(owner.uid), d.metadata.uid);
            match replicasets::revision(r) {
                Some(2) => assert_eq!(replicasets::spec_replicas(r), 3),
                Some(1) => assert_eq!(replicasets::spec_replicas(r), 0),
                other => panic!("unexpected revision {other:?}"),
            }
        }
        stop.cancel();
        let _ = controller.await;
    }
}
