//! kube-controller-manager's DaemonSet controller (kubernetes
//! `pkg/controller/daemon/daemon_controller.go`, `update.go` and
//! `util/daemonset_util.go`): one pod per eligible node, rolled out revision by revision,
//! with the status `kubectl rollout status daemonset/...` reads and the ControllerRevisions
//! `kubectl rollout history|undo daemonset/...` read and restore.
//!
//! The sync loop (`syncDaemonSet`), one DaemonSet at a time (every change to it, to a pod
//! it controls, and to any Node queues it):
//!
//! 1. Wait until the pod and ControllerRevision caches hold every write of this controller
//!    (KEP-5647's `ConsistencyStore`, in place of the controller's expectations); not caught
//!    up in time: requeue.
//! 2. Being deleted: nothing (the garbage collector removes pods and revisions). An empty
//!    selector: a `SelectingAll` warning event, nothing else.
//! 3. History (`constructHistory`): the revisions it controls whose data restores the
//!    current template are current, the others old. None current: a new revision
//!    (`snapshot`) named `<ds>-<hash>`, the hash of the template and
//!    `status.collisionCount` ([`super::revision`]), numbered one above the old ones (a
//!    name taken by another template bumps `collisionCount` and requeues). Several
//!    current: the highest-numbered one stays, the others go. A current one numbered below
//!    an old one (after `kubectl rollout undo`) is renumbered above them. Its
//!    `controller-revision-hash` label is the hash the pods of this revision carry.
//! 4. Claim pods (`getDaemonPods`): those it controls that the selector matches, orphans
//!    the selector matches adopted, the rest released; grouped by the node they run on or
//!    are pinned to.
//! 5. Per node, [`eligibility::eligibility`] (`NodeShouldRunDaemonPod`): the node passes
//!    the template's `nodeName`, `nodeSelector`, required node affinity and taints, with
//!    the tolerations every daemon pod gets.
//! 6. Manage ([`plan::manage`]): nodes that should run the pod and have none get one
//!    (pinned by `matchFields metadata.name`, labelled with the revision hash, bound by the
//!    scheduler); failed pods are deleted (a `FailedDaemonPod` warning) and replaced on the
//!    next sync; nodes that should no longer keep it lose it; extra pods go. When manage
//!    has nothing to do and the strategy is `RollingUpdate`, the rolling update
//!    ([`plan::rolling_update`]) deletes old pods within `maxUnavailable` (or starts new
//!    ones within `maxSurge`); `OnDelete` replaces only pods the user deletes.
//! 7. History cleanup (`cleanupHistory`): old revisions beyond `revisionHistoryLimit`
//!    (default 10), lowest first, except those a pod still carries.
//! 8. Status ([`plan::status`]): `desiredNumberScheduled`, `currentNumberScheduled`,
//!    `numberReady`, `numberAvailable`, `numberUnavailable`, `updatedNumberScheduled`,
//!    `numberMisscheduled`, `observedGeneration`, written when changed; requeued for when
//!    a ready pod becomes available under `minReadySeconds`.
//!
//! Left out: the failed-pod backoff (a failed pod is replaced on the next sync; a daemon
//! pod's `restartPolicy` is `Always`, so only a deadline or an eviction fails one), the
//! deprecated `pod-template-generation` label, slow-start batching of creations, and
//! adopting orphan ControllerRevisions.

pub(crate) mod eligibility;
pub(crate) mod plan;
pub(crate) mod revision;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::Duration,
};

use k8s_openapi::{
    api::{
        apps::v1::{ControllerRevision, DaemonSet},
        core::v1::{Node, Pod},
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use kube_core::Selector;
use kubegen::{
    cache::{InformerError, Lister},
    client::{
        Error, ResourceClient,
        params::{DeleteParams, PostParams},
    },
    controller::{Action, CachedClient, Controller, ControllerError, Request},
};
use tokio_util::sync::CancellationToken;

use self::{eligibility::Eligibility, plan::NodePods};
use super::{
    compat::Opt,
    config::Cluster,
    events::{EventType, Recorder},
    pods,
};

/// The controller's name (kube-controller-manager's `--controllers` spelling).
const NAME: &str = "daemonset";

/// How long a sync waits for the caches to show the controller's own writes.
const CONSISTENCY_WAIT: Duration = Duration::from_secs(5);

struct Context {
    cluster: Arc<Cluster>,
    recorder: Recorder,
    pods: CachedClient<Pod>,
    revisions: CachedClient<ControllerRevision>,
    nodes: Lister<Node>,
}

/// Runs the DaemonSet controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let informer_error = |source: InformerError| ControllerError::Informer {
        controller: NAME.into(),
        source,
    };
    let pods = CachedClient::<Pod>::new(cluster.client.clone(), &cluster.factory)
        .map_err(informer_error)?;
    let revisions =
        CachedClient::<ControllerRevision>::new(cluster.client.clone(), &cluster.factory)
            .map_err(informer_error)?;
    let nodes = cluster.factory.lister_for::<Node>();
    let daemonsets = cluster.factory.lister_for::<DaemonSet>();
    let controller = Controller::<DaemonSet>::builder(&cluster.factory)
        .named(NAME)
        .owns::<Pod>()
        // A node's change can make it eligible or not for every DaemonSet.
        .watches::<Node>(move |_| {
            let mut requests: Vec<Request> = daemonsets
                .list(&Selector::default())
                .iter()
                .filter_map(|d| Request::for_object(d.as_ref()))
                .collect();
            requests.sort_by_key(Request::cache_key);
            requests
        })
        .build();
    let cx = Arc::new(Context {
        recorder: cluster.recorder("daemonset-controller"),
        cluster,
        pods,
        revisions,
        nodes,
    });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

/// The controller reference pods and revisions of `ds` carry.
fn owner_reference(ds: &DaemonSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "DaemonSet".into(),
        name: ds.metadata.name.clone().unwrap_or_default(),
        uid: ds.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

async fn reconcile(ds: Arc<DaemonSet>, cx: Arc<Context>) -> Result<Action, Error> {
    match sync(&ds, &cx).await {
        // Changed meanwhile, or gone: the newer object's event brings it back.
        Err(e) if e.is_conflict() || e.is_not_found() => Ok(Action::done()),
        other => other,
    }
}

async fn sync(ds: &DaemonSet, cx: &Context) -> Result<Action, Error> {
    // 1.
    if let Some(consistency) = cx.pods.consistency()
        && !consistency.ensure_all_ready(CONSISTENCY_WAIT).await
    {
        return Ok(Action::requeue_after(Duration::from_millis(100)));
    }
    if let Some(consistency) = cx.revisions.consistency()
        && !consistency.ensure_all_ready(CONSISTENCY_WAIT).await
    {
        return Ok(Action::requeue_after(Duration::from_millis(100)));
    }
    // 2.
    if ds.metadata.deletion_timestamp.is_some() {
        return Ok(Action::done());
    }
    let Some(spec) = ds.spec.opt() else {
        return Ok(Action::done());
    };
    if pods::selector_is_empty(&spec.selector) {
        cx.recorder
            .record(
                ds,
                EventType::Warning,
                "SelectingAll",
                "This daemon set is selecting all pods. A non-empty selector is required.",
            )
            .await;
        return Ok(Action::done());
    }
    // 3.
    let Some((hash, old)) = history(ds, cx).await? else {
        return Ok(Action::requeue_after(Duration::from_millis(100)));
    };
    // 4.
    let namespace = ds.metadata.namespace.clone().unwrap_or_default();
    let candidates = cx
        .pods
        .lister()
        .namespaced(&namespace)
        .list(&Selector::default());
    let owned = pods::claim(
        &cx.pods,
        candidates,
        &spec.selector,
        &owner_reference(ds),
        |_| true,
    )
    .await?;
    let mut by_node: NodePods = BTreeMap::new();
    for pod in owned {
        if pods::is_terminal(&pod) && pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if let Some(node) = pods::target_node(&pod) {
            by_node.entry(node).or_default().push(pod);
        }
    }
    // 5.
    let mut nodes: Vec<(String, Eligibility)> = cx
        .nodes
        .list(&Selector::default())
        .iter()
        .map(|n| {
            (
                n.metadata.name.clone().unwrap_or_default(),
                eligibility::eligibility(n, ds),
            )
        })
        .collect();
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    // 6.
    let now = crate::clock::now();
    let mut plan = plan::manage(ds, &hash, &nodes, &by_node, now);
    if plan.is_empty() && plan::is_rolling(ds) {
        match plan::rolling_update(ds, &hash, &nodes, &by_node, now) {
            Ok(rolling) => plan = rolling,
            Err(err) => tracing::warn!(daemonset = ?ds.metadata.name, %err, "rolling update"),
        }
    }
    execute(ds, cx, &hash, &plan).await?;
    // 7.
    let live: BTreeSet<String> = by_node
        .values()
        .flatten()
        .filter_map(|p| {
            p.metadata
                .labels
                .as_ref()?
                .get(revision::HASH_LABEL)
                .cloned()
        })
        .collect();
    let old_refs: Vec<&ControllerRevision> = old.iter().map(AsRef::as_ref).collect();
    let limit = spec.revision_history_limit.unwrap_or(10);
    for i in revision::to_delete(&old_refs, limit, &live) {
        delete_revision(cx, old_refs[i]).await?;
    }
    // 8.
    let (status, later) = plan::status(ds, &hash, &nodes, &by_node, now);
    if ds.status.as_ref() != Some(&status) {
        let mut updated = ds.clone();
        updated.status = Some(status);
        let client: ResourceClient<DaemonSet> =
            ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
        client
            .update_status(&PostParams::default(), &updated)
            .await?;
    }
    Ok(later.map_or_else(Action::done, Action::requeue_after))
}

/// Step 6's writes: deletes first, then creates.
async fn execute(ds: &DaemonSet, cx: &Context, hash: &str, plan: &plan::Plan) -> Result<(), Error> {
    for pod in &plan.failed {
        let (namespace, name) = (
            pod.metadata.namespace.as_deref().unwrap_or_default(),
            pod.metadata.name.as_deref().unwrap_or_default(),
        );
        let node = pods::target_node(pod).unwrap_or_default();
        cx.recorder
            .record(
                ds,
                EventType::Warning,
                "FailedDaemonPod",
                format!(
                    "Found failed daemon pod {namespace}/{name} on node {node}, will try to kill it"
                ),
            )
            .await;
    }
    for pod in &plan.delete {
        match cx
            .pods
            .delete(
                pod.metadata.namespace.as_deref(),
                pod.metadata.name.as_deref().unwrap_or_default(),
                &DeleteParams::default(),
            )
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    for node in &plan.create {
        let template = eligibility::pod_template(ds, hash, node);
        let meta = template.metadata.unwrap_or_default();
        let pod = Pod {
            metadata: ObjectMeta {
                generate_name: Some(format!(
                    "{}-",
                    ds.metadata.name.as_deref().unwrap_or_default()
                )),
                namespace: ds.metadata.namespace.clone(),
                labels: meta.labels,
                annotations: meta.annotations,
                finalizers: meta.finalizers,
                owner_references: Some(vec![owner_reference(ds)]),
                ..ObjectMeta::default()
            },
            spec: template.spec,
            status: None,
        };
        match cx.pods.create(&PostParams::default(), &pod).await {
            Ok(_) => {}
            // The namespace is going: nothing to do.
            Err(e) if e.is_not_found() => return Ok(()),
            Err(Error::Api(status)) => {
                cx.recorder
                    .record(
                        ds,
                        EventType::Warning,
                        "FailedCreate",
                        format!("Error creating: {}", status.message),
                    )
                    .await;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn delete_revision(cx: &Context, r: &ControllerRevision) -> Result<(), Error> {
    match cx
        .revisions
        .delete(
            r.metadata.namespace.as_deref(),
            r.metadata.name.as_deref().unwrap_or_default(),
            &DeleteParams::default(),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Step 3 (`constructHistory`): the current revision's hash and the old revisions, or
/// `None` when the sync must look again (a hash collision bumped `collisionCount`).
async fn history(
    ds: &DaemonSet,
    cx: &Context,
) -> Result<Option<(String, Vec<Arc<ControllerRevision>>)>, Error> {
    let namespace = ds.metadata.namespace.clone().unwrap_or_default();
    let uid = ds.metadata.uid.clone().unwrap_or_default();
    let template = ds
        .spec
        .opt()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let patch = revision::template_patch(&template);
    let (mut current, old): (Vec<_>, Vec<_>) = cx
        .revisions
        .lister()
        .namespaced(&namespace)
        .list(&Selector::default())
        .into_iter()
        .filter(|r| pods::is_controlled_by(&r.metadata, &uid))
        .partition(|r| revision::data(r) == &patch);
    let next = revision::max_number(old.iter().map(AsRef::as_ref)) + 1;
    // Several current revisions (`dedupCurHistories`): the highest-numbered one stays.
    current.sort_by_key(|r| std::cmp::Reverse(revision::number(r)));
    for duplicate in current.iter().skip(1) {
        delete_revision(cx, duplicate).await?;
    }
    let hash_of = |r: &ControllerRevision| {
        r.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(revision::HASH_LABEL).cloned())
            .unwrap_or_else(|| r.metadata.name.clone().unwrap_or_default())
    };
    if let Some(cur) = current.first() {
        if revision::number(cur) < next {
            let mut renumbered = (**cur).clone();
            revision::set_number(&mut renumbered, next);
            cx.revisions
                .update(&PostParams::default(), &renumbered)
                .await?;
        }
        return Ok(Some((hash_of(cur.as_ref()), old)));
    }
    // `snapshot`.
    let collision_count = ds.status.as_ref().and_then(|s| s.collision_count);
    let hash = revision::template_hash(&template, collision_count);
    let new = revision::new(
        &ds.metadata,
        owner_reference(ds),
        template.metadata.as_ref().and_then(|m| m.labels.as_ref()),
        &hash,
        patch.clone(),
        next,
    );
    match cx.revisions.create(&PostParams::default(), &new).await {
        Ok(_) => Ok(Some((hash, old))),
        Err(e) if e.is_already_exists() => {
            let client: ResourceClient<ControllerRevision> =
                ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
            let existing = client
                .get(new.metadata.name.as_deref().unwrap_or_default())
                .await?;
            if revision::data(&existing) == &patch {
                return Ok(Some((hash, old)));
            }
            // A hash collision: bump the count, so the next sync names it differently.
            let mut bumped = ds.clone();
            let status = bumped.status.get_or_insert_with(Default::default);
            status.collision_count = Some(collision_count.unwrap_or(0).saturating_add(1));
            let daemonsets: ResourceClient<DaemonSet> =
                ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
            daemonsets
                .update_status(&PostParams::default(), &bumped)
                .await?;
            tracing::info!(daemonset = ?ds.metadata.name, "hash collision; collisionCount bumped");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}
