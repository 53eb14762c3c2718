//! kube-scheduler's VolumeBinding plugin
//! (`pkg/scheduler/framework/plugins/volumebinding/volume_binding.go` and `binder.go`), as
//! the scheduler (`scheduler.rs`) calls it for a pod with PersistentVolumeClaims:
//!
//! 1. PreFilter ([`pod_volumes`]): every claim must exist and not be being deleted
//!    (`persistentvolumeclaim "x" not found`), a bound claim's volume must exist, and no
//!    claim may be unbound unless its class waits for the first consumer (`pod has unbound
//!    immediate PersistentVolumeClaims`: the PV controller binds those first). Any of these
//!    makes the pod unschedulable on every node.
//! 2. Filter ([`PodVolumes::filter`], per node): a bound claim's volume must allow the
//!    node (its `nodeAffinity`: `node(s) had volume node affinity conflict`); an unbound
//!    delayed claim needs an available volume that fits the node or a class that can
//!    provision (`node(s) didn't find available persistent volumes to bind`), and once the
//!    scheduler picked a node for it (`volume.kubernetes.io/selected-node`), that node.
//! 3. PreBind ([`prebind`], on the chosen node): an unbound delayed claim is bound to the
//!    matching volume (its `claimRef` set, for the PV controller to finish) or annotated
//!    with the selected node (for the provisioner). The pod is bound to the node only once
//!    all its claims are: until then the pod is reserved on the node and the scheduler
//!    looks again when a claim or volume changes and every second (kube-scheduler's PreBind
//!    polls the same way, with a timeout).

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::api::{
    core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod},
    storage::v1::StorageClass,
};
use kubegen::{
    cache::Lister,
    client::{Client, Error, ResourceClient, params::PostParams},
    controller::Request,
};

use super::{
    ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, claim_class, delays_binding, find_matching_volume,
    fits_node, selected_node, volume_name,
};

/// A bound claim's volume does not allow the node (`ErrReasonNodeConflict`).
pub(crate) const NODE_CONFLICT: &str = "node(s) had volume node affinity conflict";
/// An unbound claim finds no volume on the node (`ErrReasonBindConflict`).
pub(crate) const BIND_CONFLICT: &str = "node(s) didn't find available persistent volumes to bind";

/// The provisioner name that means "no dynamic provisioning" (`NotSupportedProvisioner`).
const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";

/// A pod's claims as the plugin sees them after PreFilter.
#[derive(Debug, Clone, Default)]
pub(crate) struct PodVolumes {
    /// The volumes of the pod's bound claims.
    bound: Vec<Arc<PersistentVolume>>,
    /// The pod's unbound claims of `WaitForFirstConsumer` classes, each with whether its
    /// class can provision.
    delayed: Vec<(Arc<PersistentVolumeClaim>, bool)>,
    /// Every volume (the candidates for the delayed claims).
    volumes: Vec<Arc<PersistentVolume>>,
}

/// The claim names `pod`'s volumes use.
pub(crate) fn claim_names(pod: &Pod) -> Vec<&str> {
    pod.spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| c.claim_name.as_str())
        .collect()
}

/// Step 1 (PreFilter): the pod's claims, or why the pod fits no node.
pub(crate) fn pod_volumes(
    pod: &Pod,
    claims: &[Arc<PersistentVolumeClaim>],
    volumes: &[Arc<PersistentVolume>],
    classes: &[Arc<StorageClass>],
) -> Result<PodVolumes, String> {
    let namespace = pod.metadata.namespace.as_deref();
    let mut out = PodVolumes {
        volumes: volumes.to_vec(),
        ..PodVolumes::default()
    };
    let mut unbound_immediate = false;
    for name in claim_names(pod) {
        let Some(claim) = claims.iter().find(|c| {
            c.metadata.namespace.as_deref() == namespace && c.metadata.name.as_deref() == Some(name)
        }) else {
            return Err(format!("persistentvolumeclaim {name:?} not found"));
        };
        if claim.metadata.deletion_timestamp.is_some() {
            return Err(format!("persistentvolumeclaim {name:?} is being deleted"));
        }
        if let Some(volume) = volume_name(claim) {
            if claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost") {
                return Err(format!(
                    "persistentvolumeclaim {name:?} bound to non-existent persistentvolume {volume:?}"
                ));
            }
            let Some(pv) = volumes
                .iter()
                .find(|v| v.metadata.name.as_deref() == Some(volume))
            else {
                return Err(format!("persistentvolume {volume:?} not found"));
            };
            out.bound.push(pv.clone());
            continue;
        }
        let class_name = claim_class(claim).unwrap_or_default();
        let class = classes
            .iter()
            .find(|c| !class_name.is_empty() && c.metadata.name.as_deref() == Some(class_name));
        match class {
            Some(class) if delays_binding(class) => {
                let provisions =
                    !class.provisioner.is_empty() && class.provisioner != NO_PROVISIONER;
                out.delayed.push((claim.clone(), provisions));
            }
            _ => unbound_immediate = true,
        }
    }
    if unbound_immediate {
        return Err("pod has unbound immediate PersistentVolumeClaims".into());
    }
    Ok(out)
}

impl PodVolumes {
    /// Whether the pod has no claim to bind first (nothing for PreBind to wait for).
    pub(crate) fn all_bound(&self) -> bool {
        self.delayed.is_empty()
    }

    /// Step 2 (Filter): whether `node` suits the pod's claims, or kube-scheduler's reason.
    pub(crate) fn filter(&self, node: &Node) -> Result<(), &'static str> {
        if !self.bound.iter().all(|v| fits_node(v, node)) {
            return Err(NODE_CONFLICT);
        }
        let name = node.metadata.name.as_deref().unwrap_or_default();
        for (claim, provisions) in &self.delayed {
            if selected_node(claim).is_some_and(|s| s != name) {
                return Err(BIND_CONFLICT);
            }
            if !provisions && find_matching_volume(claim, &self.volumes, Some(node), true).is_none()
            {
                return Err(BIND_CONFLICT);
            }
        }
        Ok(())
    }
}

/// Step 3 (PreBind) on `node`: binds or annotates the pod's unbound delayed claims.
/// Returns whether every claim is bound already (the pod can be bound now).
pub(crate) async fn prebind(
    client: &Client,
    volumes: &PodVolumes,
    node: &Node,
) -> Result<bool, Error> {
    let node_name = node.metadata.name.clone().unwrap_or_default();
    for (claim, _) in &volumes.delayed {
        if let Some(volume) = find_matching_volume(claim, &volumes.volumes, Some(node), true) {
            if super::is_bound_to(&volume, claim) {
                continue;
            }
            // `bindAPIUpdate`: the volume names the claim; the PV controller finishes.
            let mut updated = (*volume).clone();
            let spec = updated.spec.get_or_insert_with(Default::default);
            spec.claim_ref = Some(k8s_openapi::api::core::v1::ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("PersistentVolumeClaim".into()),
                namespace: claim.metadata.namespace.clone(),
                name: claim.metadata.name.clone(),
                uid: claim.metadata.uid.clone(),
                resource_version: claim.metadata.resource_version.clone(),
                field_path: None,
            });
            updated
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(ANN_BOUND_BY_CONTROLLER.into(), "yes".into());
            let pvs: ResourceClient<PersistentVolume> = ResourceClient::cluster(client.clone());
            match pvs.update(&PostParams::default(), &updated).await {
                Ok(_) => {}
                Err(e) if e.is_conflict() || e.is_not_found() => {}
                Err(e) => return Err(e),
            }
            continue;
        }
        if selected_node(claim) == Some(node_name.as_str()) {
            continue;
        }
        let mut updated = (**claim).clone();
        updated
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(ANN_SELECTED_NODE.into(), node_name.clone());
        let pvcs: ResourceClient<PersistentVolumeClaim> = ResourceClient::namespaced(
            client.clone(),
            claim.metadata.namespace.as_deref().unwrap_or_default(),
        );
        match pvcs.update(&PostParams::default(), &updated).await {
            Ok(_) => {}
            Err(e) if e.is_conflict() || e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(volumes.all_bound())
}

/// The pods in `namespace` that use the claim `name`, as requests.
fn requests_for(pods: &Lister<Pod>, namespace: &str, name: &str) -> Vec<Request> {
    let mut requests: Vec<Request> = pods
        .namespaced(namespace)
        .list(&kube_core::Selector::default())
        .iter()
        .filter(|p| claim_names(p).contains(&name))
        .filter_map(|p| Request::for_object(p.as_ref()))
        .collect();
    requests.sort_by_key(Request::cache_key);
    requests
}

/// What a claim's change brings back to the scheduler: the pods in its namespace that use
/// it.
pub(crate) fn pods_using(
    pods: Lister<Pod>,
) -> impl Fn(&PersistentVolumeClaim) -> Vec<Request> + Send + Sync + 'static {
    move |claim| match (
        claim.metadata.namespace.as_deref(),
        claim.metadata.name.as_deref(),
    ) {
        (Some(namespace), Some(name)) => requests_for(&pods, namespace, name),
        _ => Vec::new(),
    }
}

/// What a volume's change brings back to the scheduler: the pods using the claim its
/// `claimRef` names.
pub(crate) fn pods_using_volume(
    pods: Lister<Pod>,
) -> impl Fn(&PersistentVolume) -> Vec<Request> + Send + Sync + 'static {
    move |volume| {
        let claim = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
        match claim.map(|r| (r.namespace.as_deref(), r.name.as_deref())) {
            Some((Some(namespace), Some(name))) => requests_for(&pods, namespace, name),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(claims: &[&str]) -> Pod {
        let volumes: Vec<_> = claims
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "default"},
            "spec": {"containers": [], "volumes": volumes},
        }))
        .unwrap_or_default()
    }

    fn claim(name: &str, class: &str, extra: serde_json::Value) -> Arc<PersistentVolumeClaim> {
        let mut v = json!({
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}},
        });
        json_patch::merge(&mut v, &extra);
        Arc::new(serde_json::from_value(v).unwrap_or_default())
    }

    fn class(name: &str, mode: &str, provisioner: &str) -> Arc<StorageClass> {
        Arc::new(
            serde_json::from_value(json!({"metadata": {"name": name},
                "provisioner": provisioner, "volumeBindingMode": mode}))
            .unwrap_or_default(),
        )
    }

    fn node(name: &str) -> Node {
        serde_json::from_value(json!({"metadata": {"name": name,
            "labels": {"kubernetes.io/hostname": name}}}))
        .unwrap_or_default()
    }

    fn pinned(name: &str, node: &str, extra: serde_json::Value) -> Arc<PersistentVolume> {
        let mut v = json!({
            "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "local",
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}},
            "status": {"phase": "Available"},
        });
        json_patch::merge(&mut v, &extra);
        Arc::new(serde_json::from_value(v).unwrap_or_default())
    }

    /// `volume_binding.go` `PreFilter` and `podHasPVCs`.
    #[test]
    fn missing_and_unbound_immediate_claims_make_a_pod_unschedulable() {
        let classes = [
            class("standard", "WaitForFirstConsumer", "kubegen.io/hostpath"),
            class("now", "Immediate", "kubegen.io/hostpath"),
        ];
        assert_eq!(
            pod_volumes(&pod(&["data"]), &[], &[], &classes)
                .err()
                .as_deref(),
            Some("persistentvolumeclaim \"data\" not found")
        );
        let immediate = claim("data", "now", json!({}));
        assert_eq!(
            pod_volumes(&pod(&["data"]), &[immediate], &[], &classes)
                .err()
                .as_deref(),
            Some("pod has unbound immediate PersistentVolumeClaims")
        );
        let delayed = claim("data", "standard", json!({}));
        let volumes = pod_volumes(&pod(&["data"]), &[delayed], &[], &classes);
        assert!(volumes.as_ref().is_ok_and(|v| !v.all_bound()));
        let bound = claim("data", "standard", json!({"spec": {"volumeName": "pv-1"}}));
        assert_eq!(
            pod_volumes(&pod(&["data"]), &[bound], &[], &classes)
                .err()
                .as_deref(),
            Some("persistentvolume \"pv-1\" not found")
        );
    }

    /// `volume_binding.go` `Filter`: `checkBoundClaims` and `findMatchingVolumes` /
    /// `checkVolumeProvisions`.
    #[test]
    fn volume_node_affinity_and_the_selected_node_filter_nodes() {
        let classes = [
            class("standard", "WaitForFirstConsumer", "kubegen.io/hostpath"),
            class("local", "WaitForFirstConsumer", NO_PROVISIONER),
        ];
        let bound = claim("data", "local", json!({"spec": {"volumeName": "pv-a"}}));
        let pv = pinned("pv-a", "node-1", json!({"status": {"phase": "Bound"}}));
        let v = pod_volumes(&pod(&["data"]), &[bound], &[pv], &classes).unwrap_or_default();
        assert!(v.all_bound());
        assert_eq!(v.filter(&node("node-1")), Ok(()));
        assert_eq!(v.filter(&node("node-2")), Err(NODE_CONFLICT));

        let selected = claim(
            "data",
            "standard",
            json!({"metadata": {"annotations": {ANN_SELECTED_NODE: "node-2"}}}),
        );
        let v = pod_volumes(&pod(&["data"]), &[selected], &[], &classes).unwrap_or_default();
        assert_eq!(v.filter(&node("node-2")), Ok(()));
        assert_eq!(v.filter(&node("node-1")), Err(BIND_CONFLICT));

        let local = claim("data", "local", json!({}));
        let free = pinned("pv-b", "node-3", json!({}));
        let v = pod_volumes(&pod(&["data"]), &[local], &[free], &classes).unwrap_or_default();
        assert_eq!(v.filter(&node("node-3")), Ok(()), "a static volume there");
        assert_eq!(
            v.filter(&node("node-1")),
            Err(BIND_CONFLICT),
            "no provisioner, no volume"
        );
    }
}
