//! Storage for the cluster in a process: a default StorageClass, kube-controller-manager's
//! PersistentVolume controller with a dynamic provisioner (`binder.rs`), and the matching
//! rules kube-scheduler's VolumeBinding plugin shares with it (`binding.rs`).
//!
//! * At start the cluster registers the StorageClass `standard`, default
//!   (`storageclass.kubernetes.io/is-default-class: "true"`), provisioner
//!   `kubegen.io/hostpath`, `volumeBindingMode: WaitForFirstConsumer`, `reclaimPolicy:
//!   Delete`, as kind ships one (there with `rancher.io/local-path`).
//! * A claim of a `WaitForFirstConsumer` class waits for the scheduler to pick a node for
//!   its first pod (the `volume.kubernetes.io/selected-node` annotation); then the
//!   provisioner creates a hostPath PersistentVolume on that node and the controller binds
//!   the two. A claim of an `Immediate` class is provisioned at once.
//! * Pre-created volumes bind by class, capacity, access modes, volume mode and selector
//!   (`pkg/controller/volume/persistentvolume/util/util.go` `FindMatchingVolume`), the
//!   smallest that fits.
//!
//! Nothing is stored anywhere: the volumes are API objects only, as the containers are.

mod binder;
pub(crate) mod binding;

use std::{collections::BTreeMap, sync::Arc};

use super::pods;
use k8s_openapi::api::{
    core::v1::{Node, PersistentVolume, PersistentVolumeClaim},
    storage::v1::StorageClass,
};
use kubegen::client::{Client, Error, ResourceClient, params::PostParams};

pub(crate) use binder::run;

/// The default StorageClass's name (kind's).
pub(crate) const DEFAULT_CLASS: &str = "standard";
/// The provisioner of the default class: hostPath volumes on the selected node.
pub(crate) const PROVISIONER: &str = "kubegen.io/hostpath";
/// Where the provisioner's hostPath volumes live on a node.
const HOSTPATH_ROOT: &str = "/var/lib/kubegen/storage";

/// Marks the default StorageClass (`storageclass.kubernetes.io/is-default-class`).
pub(crate) const ANN_DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
/// The node the scheduler chose for a delayed-binding claim (`AnnSelectedNode`).
pub(crate) const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// The provisioner a claim waits for (`AnnStorageProvisioner`).
pub(crate) const ANN_STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
/// The same, under its beta name, still written (`AnnBetaStorageProvisioner`).
pub(crate) const ANN_BETA_STORAGE_PROVISIONER: &str =
    "volume.beta.kubernetes.io/storage-provisioner";
/// Which provisioner made a volume (`AnnDynamicallyProvisioned`).
pub(crate) const ANN_PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";
/// The claim's side of a binding is complete (`AnnBindCompleted`).
pub(crate) const ANN_BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// The controller (not a user) bound this side (`AnnBoundByController`).
pub(crate) const ANN_BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";

/// `volumeBindingMode: WaitForFirstConsumer`.
pub(crate) const WAIT_FOR_FIRST_CONSUMER: &str = "WaitForFirstConsumer";

/// Registers the default StorageClass (kept as it is if it exists).
pub(crate) async fn register_default_class(client: &Client) -> Result<(), Error> {
    let classes: ResourceClient<StorageClass> = ResourceClient::cluster(client.clone());
    let class: StorageClass = serde_json::from_value(serde_json::json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": DEFAULT_CLASS,
            "annotations": {ANN_DEFAULT_CLASS: "true"},
        },
        "provisioner": PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": WAIT_FOR_FIRST_CONSUMER,
    }))
    .map_err(Error::Decode)?;
    match classes.create(&PostParams::default(), &class).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(e),
    }
}

/// The class a claim asks for: `None` when `storageClassName` is unset (the default class
/// is assigned then), `Some("")` for a claim that wants no class.
pub(crate) fn claim_class(claim: &PersistentVolumeClaim) -> Option<&str> {
    claim.spec.as_ref()?.storage_class_name.as_deref()
}

/// The default StorageClass among `classes` (`GetDefaultClass`: the newest of those
/// annotated default, then by name).
pub(crate) fn default_class(classes: &[Arc<StorageClass>]) -> Option<&Arc<StorageClass>> {
    classes
        .iter()
        .filter(|c| {
            c.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ANN_DEFAULT_CLASS))
                .is_some_and(|v| v == "true")
        })
        .max_by(|a, b| {
            (&a.metadata.creation_timestamp, &b.metadata.name)
                .cmp(&(&b.metadata.creation_timestamp, &a.metadata.name))
        })
}

/// Whether claims of `class` wait for their first pod to be scheduled.
pub(crate) fn delays_binding(class: &StorageClass) -> bool {
    class.volume_binding_mode.as_deref() == Some(WAIT_FOR_FIRST_CONSUMER)
}

/// The node the scheduler selected for `claim`, if any.
pub(crate) fn selected_node(claim: &PersistentVolumeClaim) -> Option<&str> {
    claim
        .metadata
        .annotations
        .as_ref()?
        .get(ANN_SELECTED_NODE)
        .map(String::as_str)
}

/// The volume a claim is bound to (`spec.volumeName`), if any.
pub(crate) fn volume_name(claim: &PersistentVolumeClaim) -> Option<&str> {
    claim
        .spec
        .as_ref()?
        .volume_name
        .as_deref()
        .filter(|n| !n.is_empty())
}

/// The storage a claim requests, in bytes (0 when it asks for none).
pub(crate) fn requested_bytes(claim: &PersistentVolumeClaim) -> i64 {
    claim
        .spec
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
        .and_then(|q| pods::bytes(&q.0))
        .unwrap_or(0)
}

/// Whether `volume`'s `claimRef` names `claim` (`IsVolumeBoundToClaim`: same namespace
/// and name, and the same uid unless the reference has none).
pub(crate) fn is_bound_to(volume: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
    let Some(r) = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else {
        return false;
    };
    r.name == claim.metadata.name
        && r.namespace == claim.metadata.namespace
        && r.uid
            .as_deref()
            .is_none_or(|uid| uid.is_empty() || Some(uid) == claim.metadata.uid.as_deref())
}

/// Whether `node` satisfies `volume`'s required node affinity (`CheckNodeAffinity`); a
/// volume without one fits every node.
pub(crate) fn fits_node(volume: &PersistentVolume, node: &Node) -> bool {
    let required = volume
        .spec
        .as_ref()
        .and_then(|s| s.node_affinity.as_ref())
        .and_then(|a| a.required.as_ref());
    required.is_none_or(|selector| super::scheduler::node_selector_matches(selector, node))
}

fn volume_mode(mode: Option<&String>) -> &str {
    mode.map_or("Filesystem", String::as_str)
}

/// `FindMatchingVolume`: the volume among `volumes` that `claim` binds to. A volume
/// already bound to the claim (its `claimRef` names it) wins, unless it does not fit
/// `node`; otherwise the smallest `Available` volume with no `claimRef`, the claim's class,
/// access modes, volume mode, capacity and selector. With `delay_binding` and no `node`
/// (the PV controller looking at a `WaitForFirstConsumer` claim) only an already-bound
/// volume counts: the scheduler binds the others.
pub(crate) fn find_matching_volume(
    claim: &PersistentVolumeClaim,
    volumes: &[Arc<PersistentVolume>],
    node: Option<&Node>,
    delay_binding: bool,
) -> Option<Arc<PersistentVolume>> {
    let spec = claim.spec.clone().unwrap_or_default();
    let requested = requested_bytes(claim);
    let class = spec.storage_class_name.as_deref().unwrap_or_default();
    let modes = spec.access_modes.clone().unwrap_or_default();
    let mut best: Option<(i64, Arc<PersistentVolume>)> = None;
    for volume in volumes {
        let Some(vspec) = volume.spec.as_ref() else {
            continue;
        };
        if volume_mode(vspec.volume_mode.as_ref()) != volume_mode(spec.volume_mode.as_ref())
            || volume.metadata.deletion_timestamp.is_some()
        {
            continue;
        }
        let affinity_ok = node.is_none_or(|n| fits_node(volume, n));
        if is_bound_to(volume, claim) {
            return affinity_ok.then(|| volume.clone());
        }
        if node.is_none() && delay_binding {
            continue;
        }
        let phase = volume.status.as_ref().and_then(|s| s.phase.as_deref());
        let selected = spec
            .selector
            .as_ref()
            .is_none_or(|s| pods::selects(s, volume.metadata.labels.as_ref()));
        let volume_modes = vspec.access_modes.clone().unwrap_or_default();
        if phase != Some("Available")
            || vspec.claim_ref.is_some()
            || !selected
            || vspec.storage_class_name.as_deref().unwrap_or_default() != class
            || !affinity_ok
            || !modes.iter().all(|m| volume_modes.contains(m))
        {
            continue;
        }
        let capacity = vspec
            .capacity
            .as_ref()
            .and_then(|c| c.get("storage"))
            .and_then(|q| pods::bytes(&q.0))
            .unwrap_or(0);
        if capacity >= requested && best.as_ref().is_none_or(|(b, _)| capacity < *b) {
            best = Some((capacity, volume.clone()));
        }
    }
    best.map(|(_, v)| v)
}

/// The PersistentVolume the provisioner makes for `claim` of `class`
/// (external-provisioner's `provisionClaimOperation` with a hostPath driver): named
/// `pvc-<claim uid>`, the claim's requested capacity and access modes, the class's reclaim
/// policy and mount options, a `claimRef` to the claim (so the controller binds it to that
/// claim only), pinned to `node` when the claim waited for its first consumer.
pub(crate) fn provisioned_volume(
    claim: &PersistentVolumeClaim,
    class: &StorageClass,
    node: Option<&str>,
) -> PersistentVolume {
    let uid = claim.metadata.uid.clone().unwrap_or_default();
    let namespace = claim.metadata.namespace.clone().unwrap_or_default();
    let name = claim.metadata.name.clone().unwrap_or_default();
    let spec = claim.spec.clone().unwrap_or_default();
    let storage = spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
        .cloned();
    let volume_name = format!("pvc-{uid}");
    let node_affinity = node.map(|node| {
        serde_json::json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}})
    });
    let value = serde_json::json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": volume_name,
            "annotations": {ANN_PROVISIONED_BY: class.provisioner},
        },
        "spec": {
            "capacity": storage.map(|q| BTreeMap::from([("storage", q)])),
            "accessModes": spec.access_modes,
            "persistentVolumeReclaimPolicy": class.reclaim_policy.as_deref().unwrap_or("Delete"),
            "storageClassName": class.metadata.name,
            "volumeMode": spec.volume_mode.as_deref().unwrap_or("Filesystem"),
            "mountOptions": class.mount_options,
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": namespace,
                "name": name,
                "uid": uid,
                "resourceVersion": claim.metadata.resource_version,
            },
            "hostPath": {
                "path": format!("{HOSTPATH_ROOT}/{volume_name}_{namespace}_{name}"),
                "type": "DirectoryOrCreate",
            },
            "nodeAffinity": node_affinity,
        },
    });
    serde_json::from_value(strip_nulls(value)).unwrap_or_default()
}

/// `value` without its `null` members (so absent optional fields stay absent).
fn strip_nulls(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => serde_json::Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn claim(extra: serde_json::Value) -> PersistentVolumeClaim {
        let mut v = json!({
            "metadata": {"name": "www-web-0", "namespace": "default", "uid": "c1", "resourceVersion": "7"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                     "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"},
        });
        json_patch::merge(&mut v, &extra);
        serde_json::from_value(v).unwrap_or_default()
    }

    fn class() -> StorageClass {
        serde_json::from_value(json!({
            "metadata": {"name": "standard", "annotations": {ANN_DEFAULT_CLASS: "true"}},
            "provisioner": PROVISIONER, "reclaimPolicy": "Delete",
            "volumeBindingMode": WAIT_FOR_FIRST_CONSUMER,
        }))
        .unwrap_or_default()
    }

    fn volume(name: &str, size: &str, extra: serde_json::Value) -> Arc<PersistentVolume> {
        let mut v = json!({
            "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                     "storageClassName": "standard", "hostPath": {"path": "/data"}},
            "status": {"phase": "Available"},
        });
        json_patch::merge(&mut v, &extra);
        Arc::new(serde_json::from_value(v).unwrap_or_default())
    }

    fn node(name: &str) -> Node {
        serde_json::from_value(json!({"metadata": {"name": name,
            "labels": {"kubernetes.io/hostname": name}}}))
        .unwrap_or_default()
    }

    /// external-provisioner's PV for a claim: `pkg/controller/controller.go`
    /// `provisionClaimOperation`, with the selected node as the volume's node affinity.
    #[test]
    fn a_provisioned_volume_follows_its_claim_class_and_node() {
        let pv = provisioned_volume(&claim(json!({})), &class(), Some("node-2"));
        assert_eq!(pv.metadata.name.as_deref(), Some("pvc-c1"));
        let annotations = pv.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(
            annotations.get(ANN_PROVISIONED_BY).map(String::as_str),
            Some(PROVISIONER)
        );
        let spec = pv.spec.clone().unwrap_or_default();
        assert_eq!(
            spec.capacity
                .unwrap_or_default()
                .get("storage")
                .map(|q| q.0.as_str()),
            Some("1Gi")
        );
        assert_eq!(spec.access_modes, Some(vec!["ReadWriteOnce".to_string()]));
        assert_eq!(
            spec.persistent_volume_reclaim_policy.as_deref(),
            Some("Delete")
        );
        assert_eq!(spec.storage_class_name.as_deref(), Some("standard"));
        let claim_ref = spec.claim_ref.unwrap_or_default();
        assert_eq!(
            (claim_ref.name.as_deref(), claim_ref.uid.as_deref()),
            (Some("www-web-0"), Some("c1"))
        );
        assert!(
            spec.host_path
                .is_some_and(|h| h.path.ends_with("pvc-c1_default_www-web-0"))
        );
        assert!(fits_node(&pv, &node("node-2")));
        assert!(!fits_node(&pv, &node("node-1")));
        let immediate = provisioned_volume(&claim(json!({})), &class(), None);
        assert!(immediate.spec.and_then(|s| s.node_affinity).is_none());
    }

    /// `pkg/controller/volume/persistentvolume/util/util.go` `FindMatchingVolume`.
    #[test]
    fn the_smallest_matching_available_volume_binds() {
        let volumes = [
            volume("big", "10Gi", json!({})),
            volume("small", "2Gi", json!({})),
            volume("tiny", "500Mi", json!({})),
            volume(
                "other-class",
                "1Gi",
                json!({"spec": {"storageClassName": "fast"}}),
            ),
            volume(
                "taken",
                "1Gi",
                json!({"spec": {"claimRef": {"name": "x", "namespace": "default"}}}),
            ),
        ];
        let found = find_matching_volume(&claim(json!({})), &volumes, None, false);
        assert_eq!(
            found.and_then(|v| v.metadata.name.clone()).as_deref(),
            Some("small")
        );
        let rwx = claim(json!({"spec": {"accessModes": ["ReadWriteMany"]}}));
        assert!(find_matching_volume(&rwx, &volumes, None, false).is_none());
        assert!(
            find_matching_volume(&claim(json!({})), &volumes, None, true).is_none(),
            "the scheduler binds delayed claims"
        );
        let prebound = volume(
            "mine",
            "1Gi",
            json!({"spec": {"claimRef": {"name": "www-web-0", "namespace": "default", "uid": "c1"}},
                   "status": {"phase": "Bound"}}),
        );
        let found = find_matching_volume(&claim(json!({})), &[prebound], None, true);
        assert_eq!(
            found.and_then(|v| v.metadata.name.clone()).as_deref(),
            Some("mine")
        );
    }

    #[test]
    fn the_default_class_is_the_annotated_one() {
        let plain: StorageClass =
            serde_json::from_value(json!({"metadata": {"name": "fast"}, "provisioner": "x"}))
                .unwrap_or_default();
        let classes = [Arc::new(plain), Arc::new(class())];
        assert_eq!(
            default_class(&classes).and_then(|c| c.metadata.name.as_deref()),
            Some("standard")
        );
        assert!(default_class(&classes[..1]).is_none());
        assert!(delays_binding(&class()));
        assert_eq!(requested_bytes(&claim(json!({}))), 1_073_741_824);
        assert_eq!(claim_class(&claim(json!({}))), Some("standard"));
    }
}
