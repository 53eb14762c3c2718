//! kube-controller-manager's StatefulSet controller (`pkg/controller/statefulset`:
//! `stateful_set.go` `syncStatefulSet`, `stateful_set_control.go` `UpdateStatefulSet`,
//! `stateful_pod_control.go`, `stateful_set_utils.go`): pods with a stable identity
//! (`<set>-<ordinal>`, hostname and subdomain from `serviceName`), a claim per volume claim
//! template that outlives its pod, ordered or parallel creation and deletion, and updates
//! by ordinal through ControllerRevisions.
//!
//! The sync loop, one StatefulSet at a time:
//!
//! 1. Wait until the pod, claim and revision caches hold every object this controller
//!    wrote (KEP-5647's `ConsistencyStore`, in place of the controller's expectations).
//! 2. A selector that does not parse: nothing (kube records an event and gives up).
//! 3. Claim pods (`ClaimPods` with `isMemberOf`): the pods it controls whose name is
//!    `<set>-<n>` and that its selector matches; orphans that qualify are adopted, pods it
//!    controls that no longer do are released.
//! 4. Revisions (`getStatefulSetRevisions`, `revision.rs`): the revisions it controls,
//!    sorted; the update revision is the newest if it holds the set's template, an older
//!    one that holds it renumbered as the newest (a rollback), or a new one
//!    (`<set>-<hash>`, the collision count bumped while a name is taken by other data). The
//!    current revision is `status.currentRevision`'s, or the update revision at first.
//! 5. Plan (`plan.rs`): which pods and claims to create, which pods to fix or delete, in
//!    order, by `podManagementPolicy` and `updateStrategy`, and which claims need other
//!    owner references under `persistentVolumeClaimRetentionPolicy` (`whenDeleted: Delete`:
//!    the set owns them; `whenScaled: Delete`: a scaled-down pod owns its claims, so the
//!    garbage collector removes them with it); the status (`replicas`,
//!    `readyReplicas`, `availableReplicas`, `currentReplicas`, `updatedReplicas`, the
//!    revisions, `collisionCount`, `observedGeneration`).
//! 6. Carry the steps out in order, stopping at the first that fails (a pod's claims are
//!    created before the pod; events `SuccessfulCreate`, `SuccessfulDelete`, `FailedCreate`
//!    as kube words them).
//! 7. Write the status if it changed.
//! 8. Truncate the history (`truncateHistory`): beyond `revisionHistoryLimit`, delete the
//!    oldest revisions no pod and neither status revision uses.
//! 9. Requeue for `minReadySeconds` while a ready pod is not yet available, or shortly
//!    while a claim a pod needs is being deleted.

mod identity;
mod plan;
mod revision;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::Duration,
};

use k8s_openapi::api::{
    apps::v1::{ControllerRevision, StatefulSet, StatefulSetStatus},
    core::v1::{PersistentVolumeClaim, Pod},
};
use kube_core::Selector;
use kubegen::{
    cache::Lister,
    client::{
        Error, ResourceClient,
        params::{DeleteParams, Patch, PatchParams, PostParams},
    },
    controller::{Action, CachedClient, Controller, ControllerError},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use self::{
    plan::{Input, Revision, Step},
    revision::UpdateRevision,
};
use super::{
    compat::Opt,
    config::Cluster,
    events::{EventType, Recorder},
    history, pods,
};

/// How long a sync waits for the caches to show the controller's own writes.
const CONSISTENCY_WAIT: Duration = Duration::from_secs(5);

struct Context {
    cluster: Arc<Cluster>,
    pods: CachedClient<Pod>,
    claims: CachedClient<PersistentVolumeClaim>,
    revisions: CachedClient<ControllerRevision>,
    pod_lister: Lister<Pod>,
    claim_lister: Lister<PersistentVolumeClaim>,
    revision_lister: Lister<ControllerRevision>,
    events: Recorder,
}

/// Runs the StatefulSet controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let informer = |source| ControllerError::Informer {
        controller: "statefulset".into(),
        source,
    };
    let pods =
        CachedClient::<Pod>::new(cluster.client.clone(), &cluster.factory).map_err(informer)?;
    let claims =
        CachedClient::<PersistentVolumeClaim>::new(cluster.client.clone(), &cluster.factory)
            .map_err(informer)?;
    let revisions =
        CachedClient::<ControllerRevision>::new(cluster.client.clone(), &cluster.factory)
            .map_err(informer)?;
    let controller = Controller::<StatefulSet>::builder(&cluster.factory)
        .named("statefulset")
        .owns::<Pod>()
        .owns::<ControllerRevision>()
        .build();
    let events = cluster.recorder("statefulset-controller");
    let cx = Arc::new(Context {
        pod_lister: cluster.factory.lister_for::<Pod>(),
        claim_lister: cluster.factory.lister_for::<PersistentVolumeClaim>(),
        revision_lister: cluster.factory.lister_for::<ControllerRevision>(),
        cluster,
        pods,
        claims,
        revisions,
        events,
    });
    controller.run(reconcile, cx, stop).await.map(|_| ())
}

/// Whether `client`'s cache shows the controller's own writes (within the wait).
async fn caught_up<K: kubegen::Object>(client: &CachedClient<K>) -> bool {
    match client.consistency() {
        Some(consistency) => consistency.ensure_all_ready(CONSISTENCY_WAIT).await,
        None => true,
    }
}

async fn reconcile(set: Arc<StatefulSet>, cx: Arc<Context>) -> Result<Action, Error> {
    // 1.
    if !caught_up(&cx.pods).await || !caught_up(&cx.claims).await || !caught_up(&cx.revisions).await
    {
        return Ok(Action::requeue_after(Duration::from_millis(100)));
    }
    let namespace = set.metadata.namespace.clone().unwrap_or_default();
    let uid = set.metadata.uid.clone().unwrap_or_default();
    let selector = set
        .spec
        .opt()
        .map(|s| s.selector.clone())
        .unwrap_or_default();
    // 2.
    if Selector::try_from(selector.clone()).is_err() {
        tracing::warn!(
            statefulset = set.metadata.name.as_deref().unwrap_or_default(),
            "selector does not parse"
        );
        return Ok(Action::done());
    }
    // 3.
    let mut owned = Vec::new();
    for pod in cx
        .pod_lister
        .namespaced(&namespace)
        .list(&Selector::default())
    {
        let qualifies = identity::is_member(&set, &pod)
            && pods::selects(&selector, pod.metadata.labels.as_ref());
        match pods::controller_of(&pod.metadata) {
            Some(r) if r.uid == uid => {
                if qualifies || set.metadata.deletion_timestamp.is_some() {
                    owned.push(pod);
                } else {
                    set_pod_owner(&cx, &pod, json!([{"$patch": "delete", "uid": uid}])).await?;
                }
            }
            None if qualifies
                && pod.metadata.deletion_timestamp.is_none()
                && set.metadata.deletion_timestamp.is_none()
                && !pods::selector_is_empty(&selector)
                && set_pod_owner(&cx, &pod, json!([identity::owner_reference(&set)])).await? =>
            {
                owned.push(pod);
            }
            _ => {}
        }
    }
    // 4.
    let mut revisions: Vec<ControllerRevision> = cx
        .revision_lister
        .namespaced(&namespace)
        .list(&Selector::default())
        .iter()
        .filter(|r| pods::is_controlled_by(&r.metadata, &uid))
        .map(|r| (**r).clone())
        .collect();
    history::sort(&mut revisions);
    let mut collision_count = set
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    let Some(update) = update_revision(&cx, &set, &revisions, &mut collision_count).await? else {
        return Ok(Action::done());
    };
    let update_name = update.metadata.name.clone().unwrap_or_default();
    let current_name = set
        .status
        .as_ref()
        .and_then(|s| s.current_revision.as_deref())
        .filter(|name| {
            revisions
                .iter()
                .any(|r| r.metadata.name.as_deref() == Some(*name))
        })
        .map_or_else(|| update_name.clone(), str::to_string);
    let current = revisions
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(current_name.as_str()))
        .unwrap_or(&update);
    let current_set = revision::apply(&set, current);
    let update_set = revision::apply(&set, &update);
    // 5.
    let claims: BTreeMap<String, Arc<PersistentVolumeClaim>> = cx
        .claim_lister
        .namespaced(&namespace)
        .list(&Selector::default())
        .into_iter()
        .filter_map(|c| Some((c.metadata.name.clone()?, c)))
        .collect();
    let now = crate::clock::now();
    let plan = plan::plan(&Input {
        set: &set,
        current: Revision {
            name: &current_name,
            set: &current_set,
        },
        update: Revision {
            name: &update_name,
            set: &update_set,
        },
        collision_count,
        pods: &owned,
        claims: &claims,
        now,
    });
    // 6.
    let mut failure = None;
    for step in &plan.steps {
        match execute(&cx, &set, step).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    // 7.
    if inconsistent(set.status.as_ref(), &plan.status) {
        let mut updated = (*set).clone();
        updated.status = Some(plan.status.clone());
        let client: ResourceClient<StatefulSet> =
            ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
        match client.update_status(&PostParams::default(), &updated).await {
            Ok(_) => {}
            // Gone, or changed meanwhile: the newer object's event brings it back.
            Err(e) if e.is_not_found() || e.is_conflict() => return Ok(Action::done()),
            Err(e) => return Err(e),
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    // 8.
    let mut live: BTreeSet<String> = owned
        .iter()
        .map(|p| identity::revision(p).to_string())
        .collect();
    live.insert(current_name);
    live.insert(update_name);
    let limit = set
        .spec
        .opt()
        .and_then(|s| s.revision_history_limit)
        .unwrap_or(10);
    for name in revision::to_truncate(&revisions, &live, limit) {
        match cx
            .revisions
            .delete(Some(&namespace), &name, &DeleteParams::default())
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    // 9.
    let min_ready = set
        .spec
        .opt()
        .and_then(|s| s.min_ready_seconds)
        .unwrap_or(0);
    let later = owned
        .iter()
        .filter(|p| plan::is_running_and_ready(p))
        .filter_map(|p| pods::available_in(p, min_ready, now))
        .min();
    let later = if plan.claim_deleting {
        Some(later.map_or(Duration::from_secs(1), |l| l.min(Duration::from_secs(1))))
    } else {
        later
    };
    Ok(later.map_or_else(Action::done, Action::requeue_after))
}

/// Step 4's writes: the update revision, created or renumbered as needed (`None` when a
/// write found the revision changed meanwhile).
async fn update_revision(
    cx: &Context,
    set: &StatefulSet,
    revisions: &[ControllerRevision],
    collision_count: &mut i32,
) -> Result<Option<ControllerRevision>, Error> {
    let namespace = set.metadata.namespace.as_deref();
    match revision::update_revision(set, revisions, *collision_count) {
        UpdateRevision::Newest(r) => Ok(Some(r)),
        UpdateRevision::Renumber(mut r, number) => {
            history::set_number(&mut r, number);
            match cx.revisions.update(&PostParams::default(), &r).await {
                Ok(r) => Ok(Some(r)),
                Err(e) if e.is_conflict() || e.is_not_found() => Ok(None),
                Err(e) => Err(e),
            }
        }
        UpdateRevision::Create(r) => {
            let client: ResourceClient<ControllerRevision> = ResourceClient::namespaced(
                cx.cluster.client.clone(),
                namespace.unwrap_or_default(),
            );
            let created = history::create(&client, &r, collision_count).await?;
            cx.revisions.record_write(&created);
            Ok(Some(created))
        }
    }
}

/// Patches a pod's owner references (adopt or release, with the pod's uid as a
/// precondition); whether it worked.
async fn set_pod_owner(cx: &Context, pod: &Pod, refs: serde_json::Value) -> Result<bool, Error> {
    let patch = json!({"metadata": {"ownerReferences": refs, "uid": pod.metadata.uid}});
    match cx
        .pods
        .patch(
            pod.metadata.namespace.as_deref(),
            pod.metadata.name.as_deref().unwrap_or_default(),
            &PatchParams::default(),
            &Patch::Strategic(patch),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if e.is_not_found() || e.is_conflict() || e.is_invalid() => Ok(false),
        Err(e) => Err(e),
    }
}

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

/// Creates `claims` (`createPersistentVolumeClaims`); whether to go on.
async fn create_claims(
    cx: &Context,
    set: &StatefulSet,
    pod: &str,
    claims: &[PersistentVolumeClaim],
) -> Result<bool, Error> {
    let set_name = name_of(&set.metadata);
    for claim in claims {
        let claim_name = name_of(&claim.metadata);
        match cx.claims.create(&PostParams::default(), claim).await {
            Ok(_) => {
                cx.events
                    .record(
                        set,
                        EventType::Normal,
                        "SuccessfulCreate",
                        format!(
                            "create Claim {claim_name} Pod {pod} in StatefulSet {set_name} success"
                        ),
                    )
                    .await
            }
            Err(e) if e.is_already_exists() => {}
            Err(Error::Api(status)) => {
                cx.events.record(
                    set,
                    EventType::Warning,
                    "FailedCreate",
                    format!(
                        "create Claim {claim_name} for Pod {pod} in StatefulSet {set_name} failed error: {}",
                        status.message
                    ),
                ).await;
                return Ok(false);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Step 6 for one step; whether to go on with the next.
async fn execute(cx: &Context, set: &StatefulSet, step: &Step) -> Result<bool, Error> {
    let set_name = name_of(&set.metadata);
    match step {
        Step::CreatePod { pod, claims } => {
            let pod_name = name_of(&pod.metadata);
            if !create_claims(cx, set, pod_name, claims).await? {
                return Ok(false);
            }
            match cx.pods.create(&PostParams::default(), pod).await {
                Ok(_) => {
                    cx.events
                        .record(
                            set,
                            EventType::Normal,
                            "SuccessfulCreate",
                            format!("create Pod {pod_name} in StatefulSet {set_name} successful"),
                        )
                        .await;
                    Ok(true)
                }
                // The cache lags: the pod is there already.
                Err(e) if e.is_already_exists() => Ok(false),
                Err(Error::Api(status)) => {
                    cx.events
                        .record(
                            set,
                            EventType::Warning,
                            "FailedCreate",
                            format!(
                                "create Pod {pod_name} in StatefulSet {set_name} failed error: {}",
                                status.message
                            ),
                        )
                        .await;
                    Ok(false)
                }
                Err(e) => Err(e),
            }
        }
        Step::CreateClaims { pod, claims } => create_claims(cx, set, pod, claims).await,
        Step::DeletePod { pod } => {
            let pod_name = name_of(&pod.metadata);
            let params = DeleteParams {
                preconditions: Some(kubegen::client::params::Preconditions {
                    uid: pod.metadata.uid.clone(),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            match cx
                .pods
                .delete(pod.metadata.namespace.as_deref(), pod_name, &params)
                .await
            {
                Ok(_) => {
                    cx.events
                        .record(
                            set,
                            EventType::Normal,
                            "SuccessfulDelete",
                            format!("delete Pod {pod_name} in StatefulSet {set_name} successful"),
                        )
                        .await;
                    Ok(true)
                }
                Err(e) if e.is_not_found() || e.is_conflict() => Ok(true),
                Err(e) => Err(e),
            }
        }
        Step::UpdatePod { pod } => match cx.pods.update(&PostParams::default(), pod).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() || e.is_conflict() => Ok(false),
            Err(e) => Err(e),
        },
        Step::SetClaimOwners { claim, owners } => {
            let mut updated = (**claim).clone();
            updated.metadata.owner_references = (!owners.is_empty()).then(|| owners.clone());
            match cx.claims.update(&PostParams::default(), &updated).await {
                Ok(_) => Ok(true),
                Err(e) if e.is_not_found() || e.is_conflict() => Ok(true),
                Err(e) => Err(e),
            }
        }
    }
}

/// `inconsistentStatus`: whether the status to record differs from the set's.
fn inconsistent(old: Option<&StatefulSetStatus>, new: &StatefulSetStatus) -> bool {
    let Some(old) = old else {
        return true;
    };
    old.observed_generation != new.observed_generation
        || old.replicas != new.replicas
        || old.ready_replicas.unwrap_or(0) != new.ready_replicas.unwrap_or(0)
        || old.available_replicas.unwrap_or(0) != new.available_replicas.unwrap_or(0)
        || old.current_replicas.unwrap_or(0) != new.current_replicas.unwrap_or(0)
        || old.updated_replicas.unwrap_or(0) != new.updated_replicas.unwrap_or(0)
        || old.current_revision != new.current_revision
        || old.update_revision != new.update_revision
        || old.collision_count.unwrap_or(0) != new.collision_count.unwrap_or(0)
}
