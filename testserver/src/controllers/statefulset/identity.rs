//! A StatefulSet pod's identity and storage (kubernetes
//! `pkg/controller/statefulset/stateful_set_utils.go`): the name `<set>-<ordinal>`, the
//! labels `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
//! `controller-revision-hash`, hostname and subdomain from `serviceName`, and one claim per
//! `volumeClaimTemplates` entry named `<template>-<set>-<ordinal>`, with the owner
//! references `persistentVolumeClaimRetentionPolicy` asks for.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{
        apps::v1::StatefulSet,
        core::v1::{PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, Volume},
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};

use crate::controllers::compat::Opt;

/// The label naming a pod of a StatefulSet (`StatefulSetPodNameLabel`).
pub(crate) const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label holding a pod's ordinal (`PodIndexLabel`).
pub(crate) const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// The label naming the revision a pod was made from (`StatefulSetRevisionLabel`).
pub(crate) const REVISION_LABEL: &str = "controller-revision-hash";

/// `getParentNameAndOrdinal`: a name `<parent>-<ordinal>` split (kube's
/// `(.*)-([0-9]+)$`, the ordinal a 32-bit integer); `None` for any other name.
pub(crate) fn parent_and_ordinal(name: &str) -> Option<(&str, i32)> {
    let (parent, digits) = name.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((parent, digits.parse().ok()?))
}

/// A pod's ordinal, if its name has one.
pub(crate) fn ordinal(pod: &Pod) -> Option<i32> {
    parent_and_ordinal(pod.metadata.name.as_deref()?).map(|(_, o)| o)
}

fn set_name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or_default()
}

/// `getPodName`.
pub(crate) fn pod_name(set: &StatefulSet, ordinal: i32) -> String {
    format!("{}-{ordinal}", set_name(set))
}

/// `getPersistentVolumeClaimName`: `<template>-<set>-<ordinal>`.
pub(crate) fn claim_name(
    set: &StatefulSet,
    template: &PersistentVolumeClaim,
    ordinal: i32,
) -> String {
    format!(
        "{}-{}-{ordinal}",
        template.metadata.name.as_deref().unwrap_or_default(),
        set_name(set)
    )
}

/// `isMemberOf`: the pod's name says it is one of `set`'s.
pub(crate) fn is_member(set: &StatefulSet, pod: &Pod) -> bool {
    pod.metadata
        .name
        .as_deref()
        .and_then(parent_and_ordinal)
        .is_some_and(|(parent, _)| parent == set_name(set))
}

/// The first ordinal (`spec.ordinals.start`, 0 by default: `getStartOrdinal`).
pub(crate) fn start_ordinal(set: &StatefulSet) -> i32 {
    set.spec
        .opt()
        .and_then(|s| s.ordinals.as_ref())
        .and_then(|o| o.start)
        .unwrap_or(0)
        .max(0)
}

/// `spec.replicas` (1 by default, never negative).
pub(crate) fn replicas(set: &StatefulSet) -> i32 {
    set.spec.opt().and_then(|s| s.replicas).unwrap_or(1).max(0)
}

/// `podInOrdinalRange`: the pod's ordinal is one `set` wants now.
pub(crate) fn in_range(set: &StatefulSet, pod: &Pod) -> bool {
    let start = start_ordinal(set);
    ordinal(pod).is_some_and(|o| o >= start && o < start.saturating_add(replicas(set)))
}

/// `identityMatches`: name, namespace and the pod-name label are `set`'s.
pub(crate) fn identity_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some(name) = pod.metadata.name.as_deref() else {
        return false;
    };
    parent_and_ordinal(name)
        .is_some_and(|(parent, o)| parent == set_name(set) && name == pod_name(set, o))
        && pod.metadata.namespace == set.metadata.namespace
        && pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(POD_NAME_LABEL))
            .is_some_and(|v| v == name)
}

/// `storageMatches`: the pod has a volume per claim template, on the right claim.
pub(crate) fn storage_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some(o) = ordinal(pod) else {
        return false;
    };
    let volumes: BTreeMap<&str, &Volume> = pod
        .spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .map(|v| (v.name.as_str(), v))
        .collect();
    templates(set).iter().all(|t| {
        volumes
            .get(t.metadata.name.as_deref().unwrap_or_default())
            .and_then(|v| v.persistent_volume_claim.as_ref())
            .is_some_and(|c| c.claim_name == claim_name(set, t, o))
    })
}

/// The set's `volumeClaimTemplates`.
pub(crate) fn templates(set: &StatefulSet) -> Vec<PersistentVolumeClaim> {
    set.spec
        .opt()
        .and_then(|s| s.volume_claim_templates.clone())
        .unwrap_or_default()
}

/// `getPersistentVolumeClaims`: the claims of the pod with `ordinal`, named after their
/// templates, labelled with the template's labels and the selector's `matchLabels`, owned
/// as the retention policy says for a pod in range.
pub(crate) fn claims(set: &StatefulSet, ordinal: i32) -> Vec<PersistentVolumeClaim> {
    let match_labels = set
        .spec
        .opt()
        .and_then(|s| s.selector.match_labels.clone())
        .unwrap_or_default();
    templates(set)
        .into_iter()
        .map(|template| {
            let name = claim_name(set, &template, ordinal);
            let mut labels = template.metadata.labels.clone().unwrap_or_default();
            labels.extend(match_labels.clone());
            let owners = claim_owners(set, &[], None, false);
            PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some(name),
                    namespace: set.metadata.namespace.clone(),
                    labels: Some(labels),
                    annotations: template.metadata.annotations.clone(),
                    owner_references: (!owners.is_empty()).then_some(owners),
                    ..ObjectMeta::default()
                },
                spec: template.spec.clone(),
                status: None,
            }
        })
        .collect()
}

/// The controller owner reference of `set`'s pods (and revisions).
pub(crate) fn owner_reference(set: &StatefulSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: set_name(set).to_string(),
        uid: set.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `newStatefulSetPod`: a pod of `set` (whose template is the revision's) with `ordinal`.
pub(crate) fn new_pod(set: &StatefulSet, ordinal: i32, revision: &str) -> Pod {
    let template = set
        .spec
        .opt()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let meta = template.metadata.unwrap_or_default();
    let name = pod_name(set, ordinal);
    let mut labels = meta.labels.unwrap_or_default();
    labels.insert(POD_NAME_LABEL.into(), name.clone());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    labels.insert(REVISION_LABEL.into(), revision.to_string());
    let mut spec = template.spec.unwrap_or_default();
    spec.hostname = Some(name.clone());
    spec.subdomain = set
        .spec
        .opt()
        .and_then(|s| s.service_name.clone())
        .filter(|s| !s.is_empty());
    // `updateStorage`: one volume per claim template, replacing a template volume of the
    // same name.
    let claimed: Vec<Volume> = templates(set)
        .iter()
        .map(|t| Volume {
            name: t.metadata.name.clone().unwrap_or_default(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim_name(set, t, ordinal),
                read_only: Some(false),
            }),
            ..Volume::default()
        })
        .collect();
    if !claimed.is_empty() {
        let mut volumes = claimed.clone();
        volumes.extend(
            spec.volumes
                .take()
                .unwrap_or_default()
                .into_iter()
                .filter(|v| !claimed.iter().any(|c| c.name == v.name)),
        );
        spec.volumes = Some(volumes);
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            owner_references: Some(vec![owner_reference(set)]),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// The pod with its identity labels restored (`updateIdentity`; hostname and subdomain are
/// immutable once the pod exists).
pub(crate) fn with_identity(pod: &Pod) -> Pod {
    let mut pod = pod.clone();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(POD_NAME_LABEL.into(), name);
    if let Some(o) = ordinal(&pod) {
        pod.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(POD_INDEX_LABEL.into(), o.to_string());
    }
    pod
}

/// The revision a pod was made from (its `controller-revision-hash` label).
pub(crate) fn revision(pod: &Pod) -> &str {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(REVISION_LABEL))
        .map_or("", String::as_str)
}

/// `persistentVolumeClaimRetentionPolicy`: (`whenDeleted`, `whenScaled`), `Retain` by
/// default.
pub(crate) fn retention(set: &StatefulSet) -> (bool, bool) {
    let policy = set
        .spec
        .opt()
        .and_then(|s| s.persistent_volume_claim_retention_policy.clone())
        .unwrap_or_default();
    (
        policy.when_deleted.as_deref() == Some("Delete"),
        policy.when_scaled.as_deref() == Some("Delete"),
    )
}

/// `updateClaimOwnerRefForSetAndPod`: the owner references a claim of `pod` should have
/// under the retention policy, from its current ones (`existing`). `whenDeleted: Delete`
/// makes the set its controller owner; `whenScaled: Delete` makes a scaled-down pod
/// (outside the set's range) its owner instead, so the garbage collector removes the claim
/// with the pod. `Retain` removes the set's and the pod's references.
pub(crate) fn claim_owners(
    set: &StatefulSet,
    existing: &[OwnerReference],
    pod: Option<&Pod>,
    scaled_down: bool,
) -> Vec<OwnerReference> {
    let set_uid = set.metadata.uid.clone().unwrap_or_default();
    let pod_uid = pod.and_then(|p| p.metadata.uid.clone());
    let mut owners: Vec<OwnerReference> = existing
        .iter()
        .filter(|r| r.uid != set_uid && Some(&r.uid) != pod_uid.as_ref())
        .cloned()
        .collect();
    let (when_deleted, when_scaled) = retention(set);
    let pod_ref = pod.and_then(|p| {
        Some(OwnerReference {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: p.metadata.name.clone()?,
            uid: p.metadata.uid.clone()?,
            controller: None,
            block_owner_deletion: None,
        })
    });
    if when_scaled && scaled_down {
        owners.extend(pod_ref);
    } else if when_deleted {
        owners.push(owner_reference(set));
    }
    owners
}

/// Whether two owner reference lists hold the same references (in any order).
pub(crate) fn same_owners(a: &[OwnerReference], b: &[OwnerReference]) -> bool {
    let key = |r: &OwnerReference| (r.uid.clone(), r.controller);
    let mut a: Vec<_> = a.iter().map(key).collect();
    let mut b: Vec<_> = b.iter().map(key).collect();
    a.sort();
    b.sort();
    a == b
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(extra: serde_json::Value) -> StatefulSet {
        let mut v = json!({
            "metadata": {"name": "web", "namespace": "default", "uid": "s1"},
            "spec": {
                "replicas": 3,
                "serviceName": "nginx",
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                             "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "www"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
            },
        });
        json_patch::merge(&mut v, &extra);
        serde_json::from_value(v).unwrap_or_default()
    }

    /// `stateful_set_utils.go` `getParentNameAndOrdinal`.
    #[test]
    fn ordinals_are_the_numeric_suffix() {
        assert_eq!(parent_and_ordinal("web-0"), Some(("web", 0)));
        assert_eq!(parent_and_ordinal("my-web-12"), Some(("my-web", 12)));
        assert_eq!(parent_and_ordinal("web"), None);
        assert_eq!(parent_and_ordinal("web-"), None);
        assert_eq!(parent_and_ordinal("web-x1"), None);
        assert_eq!(
            parent_and_ordinal("web-99999999999"),
            None,
            "not a 32-bit ordinal"
        );
    }

    /// `newStatefulSetPod`, `initIdentity`, `updateStorage`, `getPersistentVolumeClaims`.
    #[test]
    fn a_new_pod_has_its_identity_storage_and_revision() {
        let s = set(json!({}));
        let pod = new_pod(&s, 1, "web-abc");
        assert_eq!(pod.metadata.name.as_deref(), Some("web-1"));
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        assert_eq!(
            labels.get(POD_NAME_LABEL).map(String::as_str),
            Some("web-1")
        );
        assert_eq!(labels.get(POD_INDEX_LABEL).map(String::as_str), Some("1"));
        assert_eq!(
            labels.get(REVISION_LABEL).map(String::as_str),
            Some("web-abc")
        );
        assert_eq!(labels.get("app").map(String::as_str), Some("nginx"));
        let spec = pod.spec.clone().unwrap_or_default();
        assert_eq!(spec.hostname.as_deref(), Some("web-1"));
        assert_eq!(spec.subdomain.as_deref(), Some("nginx"));
        assert!(identity_matches(&s, &pod));
        assert!(storage_matches(&s, &pod));
        assert!(is_member(&s, &pod));
        let claims = claims(&s, 1);
        assert_eq!(claims.len(), 1);
        assert_eq!(claims[0].metadata.name.as_deref(), Some("www-web-1"));
        assert_eq!(
            claims[0]
                .metadata
                .labels
                .clone()
                .unwrap_or_default()
                .get("app")
                .map(String::as_str),
            Some("nginx")
        );
        assert!(claims[0].metadata.owner_references.is_none(), "Retain");
        let mut stranger = pod.clone();
        stranger.metadata.labels = None;
        assert!(!identity_matches(&s, &stranger));
        assert!(identity_matches(&s, &with_identity(&stranger)));
    }

    /// `updateClaimOwnerRefForSetAndPod` (KEP-1847).
    #[test]
    fn the_retention_policy_decides_who_owns_a_claim() {
        let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "web-3", "uid": "p3"}}))
            .unwrap_or_default();
        let retain = set(json!({}));
        assert!(claim_owners(&retain, &[owner_reference(&retain)], Some(&pod), true).is_empty());
        let deleted = set(
            json!({"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}}),
        );
        let owners = claim_owners(&deleted, &[], Some(&pod), false);
        assert_eq!(
            owners.iter().map(|r| r.uid.as_str()).collect::<Vec<_>>(),
            ["s1"]
        );
        let scaled = set(json!({"spec": {"persistentVolumeClaimRetentionPolicy":
            {"whenDeleted": "Delete", "whenScaled": "Delete"}}}));
        let owners = claim_owners(&scaled, &[owner_reference(&scaled)], Some(&pod), true);
        assert_eq!(
            owners.iter().map(|r| r.uid.as_str()).collect::<Vec<_>>(),
            ["p3"]
        );
        assert!(same_owners(
            &owners,
            &claim_owners(&scaled, &owners, Some(&pod), true)
        ));
    }
}
