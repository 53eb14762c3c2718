//! kube-controller-manager's PersistentVolume controller, `persistentvolume-binder`
//! (`pkg/controller/volume/persistentvolume/pv_controller.go`), with the provisioner of
//! the default class in it (what an external provisioner does,
//! `sig-storage-lib-external-provisioner` `provisionClaimOperation` /
//! `deleteVolumeOperation`). Two loops, as in kube: one over claims, one over volumes.
//!
//! The claim loop (`syncClaim`), one PersistentVolumeClaim at a time:
//!
//! 1. Being deleted: done (the volume loop releases its volume once it is gone).
//! 2. No `storageClassName`: the default class, if there is one, is written into the claim
//!    (retroactive default StorageClass assignment, KEP-3333); the update brings it back.
//! 3. Bound (`spec.volumeName` set, `syncBoundClaim`): its volume missing, or bound to
//!    another claim: phase `Lost` (events `ClaimLost` / `ClaimMisbound`). Otherwise finish
//!    the binding (step 6) if a side is not done.
//! 4. Unbound (`syncUnboundClaim`): a volume that matches (`FindMatchingVolume`: one whose
//!    `claimRef` already names the claim, or, unless the class waits for the first
//!    consumer, the smallest available one that fits) is bound (step 6).
//! 5. No volume: a `WaitForFirstConsumer` claim without the scheduler's
//!    `volume.kubernetes.io/selected-node` waits (event `WaitForFirstConsumer`). A claim of
//!    a class that does not exist stays `Pending` with kube's `ProvisioningFailed` warning
//!    (`storageclass.storage.k8s.io "x" not found`). Otherwise the claim is annotated with
//!    the class's provisioner (`volume.kubernetes.io/storage-provisioner`); for
//!    `kubegen.io/hostpath` the provisioner creates `pvc-<claim uid>`
//!    ([`super::provisioned_volume`], events `Provisioning` and `ProvisioningSucceeded`),
//!    whose creation brings the claim back to step 4; another provisioner is waited for
//!    (`ExternalProvisioning`). A claim with no class and no volume: `FailedBinding`. The
//!    claim's phase is `Pending` meanwhile.
//! 6. Binding (`bind`), each side written only if it differs: the volume's `claimRef`
//!    (with `pv.kubernetes.io/bound-by-controller` when the controller set it), the
//!    volume's phase `Bound`, the claim's `volumeName` with `pv.kubernetes.io/bind-completed`
//!    and `bound-by-controller`, the claim's phase `Bound` with the volume's capacity and
//!    access modes.
//!
//! The volume loop (`syncVolume`), one PersistentVolume at a time:
//!
//! 1. No `claimRef`, or one without uid (pre-bound by a user, for the claim loop to
//!    finish): phase `Available`.
//! 2. Its claim is gone (checked against the server, not only the cache) or has another
//!    uid: phase `Released`, then the reclaim policy: `Delete` deletes a volume our
//!    provisioner made (any other volume goes `Failed`: no plugin here can delete it);
//!    `Retain` keeps it `Released`.
//! 3. Its claim is there: phase `Bound` (the claim loop completes the claim's side). A
//!    claim bound to another volume instead: a provisioned `Delete` volume is released and
//!    deleted, a volume the controller bound is unbound (`claimRef` removed).
//!
//! Writes that conflict end the sync quietly: the newer object's event brings it back. A
//! claim that is not bound is synced again every 15 s whatever happens (kube's
//! `--pvclaimbinder-sync-period`).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        core::v1::{
            ObjectReference, PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimStatus,
            PersistentVolumeStatus,
        },
        storage::v1::StorageClass,
    },
    apimachinery::pkg::apis::meta::v1::Time,
};
use kubegen::{
    cache::Lister,
    client::{
        Error, ResourceClient,
        params::{DeleteParams, PostParams},
    },
    controller::{Action, Controller, ControllerError, Request},
};
use tokio_util::sync::CancellationToken;

use super::{
    ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_PROVISIONED_BY,
    ANN_STORAGE_PROVISIONER, PROVISIONER, claim_class, default_class, delays_binding,
    find_matching_volume, provisioned_volume, selected_node, volume_name,
};
use crate::controllers::{
    config::Cluster,
    events::{EventType, Recorder},
};

struct Context {
    cluster: Arc<Cluster>,
    claims: Lister<PersistentVolumeClaim>,
    volumes: Lister<PersistentVolume>,
    classes: Lister<StorageClass>,
    /// The controller's events (`persistentvolume-controller`).
    events: Recorder,
    /// The provisioner's events (`kubegen.io/hostpath`).
    provisioner_events: Recorder,
}

/// Runs the PersistentVolume controller (both loops) until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let factory = &cluster.factory;
    let claims = factory.lister_for::<PersistentVolumeClaim>();
    let volumes = factory.lister_for::<PersistentVolume>();
    let classes = factory.lister_for::<StorageClass>();
    let pending = claims.clone();
    let claim_loop = Controller::<PersistentVolumeClaim>::builder(factory)
        .named("persistentvolume-binder-claims")
        // A volume's change brings back the claim its claimRef names.
        .watches::<PersistentVolume>(|volume| {
            volume
                .spec
                .as_ref()
                .and_then(|s| s.claim_ref.as_ref())
                .and_then(|r| Some(Request::new(r.namespace.as_deref(), r.name.as_deref()?)))
                .into_iter()
                .collect()
        })
        // A class appearing (or changing) brings back every unbound claim.
        .watches::<StorageClass>(move |_| {
            let mut requests: Vec<Request> = pending
                .list(&kube_core::Selector::default())
                .iter()
                .filter(|c| volume_name(c).is_none())
                .filter_map(|c| Request::for_object(c.as_ref()))
                .collect();
            requests.sort_by_key(Request::cache_key);
            requests
        })
        .build();
    let by_claim = volumes.clone();
    let volume_loop = Controller::<PersistentVolume>::builder(factory)
        .named("persistentvolume-binder-volumes")
        // A claim's change (its deletion above all) brings back the volumes bound to it.
        .watches::<PersistentVolumeClaim>(move |claim| {
            let mut requests: Vec<Request> = by_claim
                .list(&kube_core::Selector::default())
                .iter()
                .filter(|v| {
                    v.spec
                        .as_ref()
                        .and_then(|s| s.claim_ref.as_ref())
                        .is_some_and(|r| {
                            r.name == claim.metadata.name && r.namespace == claim.metadata.namespace
                        })
                        || volume_name(claim) == v.metadata.name.as_deref()
                })
                .filter_map(|v| Request::for_object(v.as_ref()))
                .collect();
            requests.sort_by_key(Request::cache_key);
            requests
        })
        .build();
    let events = cluster.recorder("persistentvolume-controller");
    let provisioner_events = cluster.recorder(PROVISIONER);
    let cx = Arc::new(Context {
        cluster,
        claims,
        volumes,
        classes,
        events,
        provisioner_events,
    });
    tokio::try_join!(
        claim_loop.run(sync_claim, cx.clone(), stop.clone()),
        volume_loop.run(sync_volume, cx.clone(), stop.clone()),
    )
    .map(|_| ())
}

fn claims_client(
    cx: &Context,
    claim: &PersistentVolumeClaim,
) -> ResourceClient<PersistentVolumeClaim> {
    ResourceClient::namespaced(
        cx.cluster.client.clone(),
        claim.metadata.namespace.as_deref().unwrap_or_default(),
    )
}

fn volumes_client(cx: &Context) -> ResourceClient<PersistentVolume> {
    ResourceClient::cluster(cx.cluster.client.clone())
}

/// Whether a write failed only because the object changed or went meanwhile.
fn stale(e: &Error) -> bool {
    e.is_conflict() || e.is_not_found()
}

/// Runs `write`; a stale object ends the sync quietly (`Ok(None)`).
async fn quietly<T>(write: impl Future<Output = Result<T, Error>>) -> Result<Option<T>, Error> {
    match write.await {
        Ok(v) => Ok(Some(v)),
        Err(e) if stale(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

fn claim_phase(claim: &PersistentVolumeClaim) -> Option<&str> {
    claim.status.as_ref()?.phase.as_deref()
}

fn volume_phase(volume: &PersistentVolume) -> Option<&str> {
    volume.status.as_ref()?.phase.as_deref()
}

/// How soon a claim that is not bound is looked at again, whatever happens meanwhile
/// (kube-controller-manager's `--pvclaimbinder-sync-period`).
const SYNC_PERIOD: Duration = Duration::from_secs(15);

/// The claim loop: one sync, and another after [`SYNC_PERIOD`] while the claim is not
/// bound (kube's periodic resync of every claim).
async fn sync_claim(claim: Arc<PersistentVolumeClaim>, cx: Arc<Context>) -> Result<Action, Error> {
    let bound = claim_phase(&claim) == Some("Bound");
    let action = sync_claim_once(claim, cx).await?;
    Ok(if bound {
        action
    } else {
        Action::requeue_after(SYNC_PERIOD)
    })
}

async fn sync_claim_once(
    claim: Arc<PersistentVolumeClaim>,
    cx: Arc<Context>,
) -> Result<Action, Error> {
    // 1.
    if claim.metadata.deletion_timestamp.is_some() {
        return Ok(Action::done());
    }
    let classes = cx.classes.list(&kube_core::Selector::default());
    // 2.
    if claim_class(&claim).is_none()
        && volume_name(&claim).is_none()
        && let Some(default) = default_class(&classes)
    {
        let mut updated = (*claim).clone();
        updated
            .spec
            .get_or_insert_with(Default::default)
            .storage_class_name = default.metadata.name.clone();
        quietly(claims_client(&cx, &claim).update(&PostParams::default(), &updated)).await?;
        return Ok(Action::done());
    }
    let volumes = cx.volumes.list(&kube_core::Selector::default());
    // 3.
    if let Some(name) = volume_name(&claim) {
        let Some(volume) = volumes
            .iter()
            .find(|v| v.metadata.name.as_deref() == Some(name))
        else {
            return lose(
                &cx,
                &claim,
                "ClaimLost",
                "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
            )
            .await;
        };
        let bound_elsewhere = volume
            .spec
            .as_ref()
            .and_then(|s| s.claim_ref.as_ref())
            .is_some_and(|r| {
                r.uid.as_deref().is_some_and(|u| !u.is_empty()) && r.uid != claim.metadata.uid
            });
        if bound_elsewhere {
            return lose(
                &cx,
                &claim,
                "ClaimMisbound",
                "Two claims are bound to the same volume, this one is bound incorrectly",
            )
            .await;
        }
        bind(&cx, volume, &claim).await?;
        return Ok(Action::done());
    }
    // 4.
    let class_name = claim_class(&claim).unwrap_or_default().to_string();
    let class = classes
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(class_name.as_str()));
    let delayed = class.is_some_and(|c| delays_binding(c));
    if let Some(volume) = find_matching_volume(&claim, &volumes, None, delayed) {
        bind(&cx, &volume, &claim).await?;
        return Ok(Action::done());
    }
    // 5.
    let mut claim = claim;
    match class {
        _ if delayed && selected_node(&claim).is_none() => {
            cx.events
                .record(
                    claim.as_ref(),
                    EventType::Normal,
                    "WaitForFirstConsumer",
                    "waiting for first consumer to be created before binding",
                )
                .await;
        }
        None if !class_name.is_empty() => {
            cx.events
                .record(
                    claim.as_ref(),
                    EventType::Warning,
                    "ProvisioningFailed",
                    format!("storageclass.storage.k8s.io {class_name:?} not found"),
                )
                .await;
        }
        None => {
            cx.events
                .record(
                    claim.as_ref(),
                    EventType::Normal,
                    "FailedBinding",
                    "no persistent volumes available for this claim and no storage class is set",
                )
                .await;
        }
        Some(class) => match provision(&cx, &claim, class).await? {
            Some(annotated) => claim = Arc::new(annotated),
            None => return Ok(Action::done()),
        },
    }
    if claim_phase(&claim).is_none() {
        let mut updated = (*claim).clone();
        updated.status.get_or_insert_with(Default::default).phase = Some("Pending".into());
        quietly(claims_client(&cx, &claim).update_status(&PostParams::default(), &updated)).await?;
    }
    Ok(Action::done())
}

/// Step 5 for a claim of an existing class: annotate it with the provisioner, then
/// provision (ours) or wait (another). Returns the claim as it now is, `None` if it changed
/// meanwhile.
async fn provision(
    cx: &Context,
    claim: &Arc<PersistentVolumeClaim>,
    class: &StorageClass,
) -> Result<Option<PersistentVolumeClaim>, Error> {
    let mut claim = (**claim).clone();
    let annotations = claim.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let missing = [ANN_STORAGE_PROVISIONER, ANN_BETA_STORAGE_PROVISIONER]
        .into_iter()
        .filter(|k| annotations.get(*k) != Some(&class.provisioner))
        .count();
    if missing > 0 {
        for key in [ANN_STORAGE_PROVISIONER, ANN_BETA_STORAGE_PROVISIONER] {
            annotations.insert(key.to_string(), class.provisioner.clone());
        }
        let client = claims_client(cx, &claim);
        match quietly(client.update(&PostParams::default(), &claim)).await? {
            Some(updated) => claim = updated,
            None => return Ok(None),
        }
    }
    if class.provisioner != PROVISIONER {
        cx.events.record(
            &claim,
            EventType::Normal,
            "ExternalProvisioning",
            format!(
                "Waiting for a volume to be created either by the external provisioner '{}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
                class.provisioner
            ),
        ).await;
        return Ok(Some(claim));
    }
    let key = format!(
        "{}/{}",
        claim.metadata.namespace.as_deref().unwrap_or_default(),
        claim.metadata.name.as_deref().unwrap_or_default()
    );
    cx.provisioner_events
        .record(
            &claim,
            EventType::Normal,
            "Provisioning",
            format!("External provisioner is provisioning volume for claim {key:?}"),
        )
        .await;
    let volume = provisioned_volume(&claim, class, selected_node(&claim));
    let name = volume.metadata.name.clone().unwrap_or_default();
    match volumes_client(cx)
        .create(&PostParams::default(), &volume)
        .await
    {
        Ok(_) => {
            cx.provisioner_events
                .record(
                    &claim,
                    EventType::Normal,
                    "ProvisioningSucceeded",
                    format!("Successfully provisioned volume {name}"),
                )
                .await
        }
        Err(e) if e.is_already_exists() => {}
        Err(e) => return Err(e),
    }
    Ok(Some(claim))
}

/// Step 3's failure: the claim's phase `Lost`, with a warning event.
async fn lose(
    cx: &Context,
    claim: &PersistentVolumeClaim,
    reason: &str,
    message: &str,
) -> Result<Action, Error> {
    if claim_phase(claim) != Some("Lost") {
        cx.events
            .record(claim, EventType::Warning, reason, message)
            .await;
        let mut updated = claim.clone();
        updated.status.get_or_insert_with(Default::default).phase = Some("Lost".into());
        quietly(claims_client(cx, claim).update_status(&PostParams::default(), &updated)).await?;
    }
    Ok(Action::done())
}

/// The `claimRef` of a volume bound to `claim` (`GetReference`).
fn claim_ref(claim: &PersistentVolumeClaim) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("PersistentVolumeClaim".into()),
        namespace: claim.metadata.namespace.clone(),
        name: claim.metadata.name.clone(),
        uid: claim.metadata.uid.clone(),
        resource_version: claim.metadata.resource_version.clone(),
        field_path: None,
    }
}

fn annotated(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str) -> bool {
    meta.annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(key))
}

/// A status with `phase`, its transition time moved when the phase changes.
fn volume_status(
    volume: &PersistentVolume,
    phase: &str,
    message: Option<&str>,
) -> PersistentVolumeStatus {
    let old = volume.status.clone().unwrap_or_default();
    let moved = old.phase.as_deref() != Some(phase);
    PersistentVolumeStatus {
        phase: Some(phase.into()),
        message: message.map(str::to_string),
        reason: None,
        last_phase_transition_time: if moved {
            Some(Time(crate::clock::now()))
        } else {
            old.last_phase_transition_time
        },
    }
}

/// Writes `volume`'s phase if it differs. Returns the volume as it now is, `None` if it
/// changed meanwhile.
async fn set_volume_phase(
    cx: &Context,
    volume: &PersistentVolume,
    phase: &str,
    message: Option<&str>,
) -> Result<Option<PersistentVolume>, Error> {
    if volume_phase(volume) == Some(phase)
        && volume.status.as_ref().and_then(|s| s.message.as_deref()) == message
    {
        return Ok(Some(volume.clone()));
    }
    let mut updated = volume.clone();
    updated.status = Some(volume_status(volume, phase, message));
    quietly(volumes_client(cx).update_status(&PostParams::default(), &updated)).await
}

/// Step 6: binds `volume` and `claim`, writing only the sides that are not done.
async fn bind(
    cx: &Context,
    volume: &PersistentVolume,
    claim: &PersistentVolumeClaim,
) -> Result<(), Error> {
    let mut volume = volume.clone();
    // The volume's claimRef.
    let points_here = volume
        .spec
        .as_ref()
        .and_then(|s| s.claim_ref.as_ref())
        .is_some_and(|r| {
            r.name == claim.metadata.name
                && r.namespace == claim.metadata.namespace
                && r.uid == claim.metadata.uid
        });
    if !points_here {
        let had_ref = volume
            .spec
            .as_ref()
            .and_then(|s| s.claim_ref.as_ref())
            .is_some();
        volume.spec.get_or_insert_with(Default::default).claim_ref = Some(claim_ref(claim));
        if !had_ref {
            volume
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(ANN_BOUND_BY_CONTROLLER.into(), "yes".into());
        }
        match quietly(volumes_client(cx).update(&PostParams::default(), &volume)).await? {
            Some(v) => volume = v,
            None => return Ok(()),
        }
    }
    // The volume's phase.
    let Some(volume) = set_volume_phase(cx, &volume, "Bound", None).await? else {
        return Ok(());
    };
    let volume_name = volume.metadata.name.clone().unwrap_or_default();
    // The claim's volumeName and annotations.
    let mut claim = claim.clone();
    let annotations = claim.metadata.annotations.clone().unwrap_or_default();
    let named = super::volume_name(&claim) == Some(volume_name.as_str());
    if !named || !annotations.contains_key(ANN_BIND_COMPLETED) {
        let by_controller = !named || annotated(&claim.metadata, ANN_BOUND_BY_CONTROLLER);
        claim.spec.get_or_insert_with(Default::default).volume_name = Some(volume_name.clone());
        let annotations = claim.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(ANN_BIND_COMPLETED.into(), "yes".into());
        if by_controller {
            annotations.insert(ANN_BOUND_BY_CONTROLLER.into(), "yes".into());
        }
        match quietly(claims_client(cx, &claim).update(&PostParams::default(), &claim)).await? {
            Some(c) => claim = c,
            None => return Ok(()),
        }
    }
    // The claim's status.
    let spec = volume.spec.clone().unwrap_or_default();
    let old = claim.status.clone().unwrap_or_default();
    let status = PersistentVolumeClaimStatus {
        phase: Some("Bound".into()),
        access_modes: spec.access_modes.clone(),
        capacity: spec.capacity.clone(),
        ..old.clone()
    };
    if status != old {
        claim.status = Some(status);
        quietly(claims_client(cx, &claim).update_status(&PostParams::default(), &claim)).await?;
    }
    Ok(())
}

async fn sync_volume(volume: Arc<PersistentVolume>, cx: Arc<Context>) -> Result<Action, Error> {
    if volume.metadata.deletion_timestamp.is_some() {
        return Ok(Action::done());
    }
    // 1.
    let Some(reference) = volume.spec.as_ref().and_then(|s| s.claim_ref.clone()) else {
        set_volume_phase(&cx, &volume, "Available", None).await?;
        return Ok(Action::done());
    };
    if reference.uid.as_deref().unwrap_or_default().is_empty() {
        set_volume_phase(&cx, &volume, "Available", None).await?;
        return Ok(Action::done());
    }
    // 2.
    let namespace = reference.namespace.clone().unwrap_or_default();
    let name = reference.name.clone().unwrap_or_default();
    let mut claim = cx.claims.namespaced(&namespace).get(&name).ok();
    if claim.is_none() {
        // The cache may lag: ask the server before releasing anything.
        let client: ResourceClient<PersistentVolumeClaim> =
            ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
        claim = match client.get(&name).await {
            Ok(c) => Some(Arc::new(c)),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e),
        };
    }
    let claim = claim.filter(|c| c.metadata.uid == reference.uid);
    let Some(claim) = claim else {
        return release(&cx, &volume).await;
    };
    // 3.
    let volume_name = volume.metadata.name.as_deref().unwrap_or_default();
    match super::volume_name(&claim) {
        None => {
            set_volume_phase(&cx, &volume, "Bound", None).await?;
        }
        Some(name) if name == volume_name => {
            set_volume_phase(&cx, &volume, "Bound", None).await?;
        }
        Some(_) => {
            let provisioned = annotated(&volume.metadata, ANN_PROVISIONED_BY);
            if provisioned && reclaim_policy(&volume) == "Delete" {
                return release(&cx, &volume).await;
            }
            if annotated(&volume.metadata, ANN_BOUND_BY_CONTROLLER) {
                let mut updated = (*volume).clone();
                if let Some(spec) = updated.spec.as_mut() {
                    spec.claim_ref = None;
                }
                if let Some(annotations) = updated.metadata.annotations.as_mut() {
                    annotations.remove(ANN_BOUND_BY_CONTROLLER);
                }
                quietly(volumes_client(&cx).update(&PostParams::default(), &updated)).await?;
            }
        }
    }
    Ok(Action::done())
}

fn reclaim_policy(volume: &PersistentVolume) -> &str {
    volume
        .spec
        .as_ref()
        .and_then(|s| s.persistent_volume_reclaim_policy.as_deref())
        .unwrap_or("Retain")
}

/// Volume step 2: `Released`, then the reclaim policy.
async fn release(cx: &Context, volume: &PersistentVolume) -> Result<Action, Error> {
    let phase = volume_phase(volume);
    let volume = if matches!(phase, Some("Released" | "Failed")) {
        volume.clone()
    } else {
        match set_volume_phase(cx, volume, "Released", None).await? {
            Some(v) => v,
            None => return Ok(Action::done()),
        }
    };
    if reclaim_policy(&volume) != "Delete" || volume_phase(&volume) == Some("Failed") {
        return Ok(Action::done());
    }
    let provisioner = volume
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANN_PROVISIONED_BY))
        .map(String::as_str);
    let name = volume.metadata.name.clone().unwrap_or_default();
    if provisioner == Some(PROVISIONER) {
        match volumes_client(cx)
            .delete(&name, &DeleteParams::default())
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
        return Ok(Action::done());
    }
    let message = format!(
        "error getting deleter volume plugin for volume {name:?}: no deletable volume plugin matched"
    );
    cx.events
        .record(
            &volume,
            EventType::Warning,
            "VolumeFailedDelete",
            message.clone(),
        )
        .await;
    set_volume_phase(cx, &volume, "Failed", Some(&message)).await?;
    Ok(Action::done())
}
