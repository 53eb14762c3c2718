//! A DaemonSet's revisions (kubernetes `pkg/controller/daemon/update.go`:
//! `constructHistory`, `snapshot`, `cleanupHistory`, `getPatch`), over the
//! ControllerRevision helpers of `controllers/history.rs`.
//!
//! A revision stores, in `data`, a strategic merge patch that restores the set's pod
//! template (`kubectl rollout undo` applies it), carries the template's labels plus
//! `controller-revision-hash` (so `kubectl rollout history`, which lists revisions by the
//! set's selector, finds them), and a `revision` number one above every older revision's.
//! Unlike a StatefulSet's, a DaemonSet's revision is named and labelled by
//! `controller.ComputeHash` of the pod template ([`super::super::deployment::hash`]'s
//! FNV-32a), not by `HashControllerRevision` of its data.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, OwnerReference},
        runtime::RawExtension,
    },
};
use serde_json::{Value, json};

use crate::controllers::{compat, deployment::hash, history};

pub(crate) use crate::controllers::history::{data, max_number, number, set_number};

/// The label naming the revision a pod (and the revision itself) belongs to
/// (`apps.ControllerRevisionHashLabelKey`, `apps.DefaultDaemonSetUniqueLabelKey`).
pub(crate) const HASH_LABEL: &str = "controller-revision-hash";

/// `controller.ComputeHash`: the hash of a pod template and collision count (what the
/// DaemonSet controller names its revisions and labels its pods with).
pub(crate) fn template_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    hash::pod_template_hash(template, collision_count)
}

/// The patch that restores `template` (the DaemonSet controller's `getPatch`):
/// `{"spec":{"template":{...,"$patch":"replace"}}}`.
pub(crate) fn template_patch(template: &PodTemplateSpec) -> Value {
    let mut template = serde_json::to_value(template).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut template {
        map.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// `snapshot`'s new revision: named `<owner>-<hash>` in the owner's
/// namespace, controlled by `owner`, labelled with the template's labels and
/// [`HASH_LABEL`], holding `data` as revision `number`.
pub(crate) fn new(
    owner: &ObjectMeta,
    owner_ref: OwnerReference,
    template_labels: Option<&BTreeMap<String, String>>,
    hash: &str,
    data: Value,
    number: i64,
) -> ControllerRevision {
    let mut labels = template_labels.cloned().unwrap_or_default();
    labels.insert(HASH_LABEL.into(), hash.into());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(history::revision_name(
                owner.name.as_deref().unwrap_or_default(),
                hash,
            )),
            namespace: owner.namespace.clone(),
            labels: Some(labels),
            annotations: owner.annotations.clone(),
            owner_references: Some(vec![owner_ref]),
            ..ObjectMeta::default()
        },
        data: compat::field(RawExtension(data)),
        revision: compat::field(number),
    }
}

/// The old revisions to delete so that at most `limit` are kept (`cleanupHistory`):
/// indexes into `old`, lowest revision first, skipping revisions whose hash a live pod
/// still carries (`keep`) and those already being deleted.
pub(crate) fn to_delete(
    old: &[&ControllerRevision],
    limit: i32,
    keep: &BTreeSet<String>,
) -> Vec<usize> {
    let limit = usize::try_from(limit.max(0)).unwrap_or(0);
    let mut excess = old.len().saturating_sub(limit);
    let mut order: Vec<usize> = (0..old.len()).collect();
    order.sort_by_key(|&i| (number(old[i]), old[i].metadata.name.clone()));
    let mut chosen = Vec::new();
    for i in order {
        if excess == 0 {
            break;
        }
        let live = old[i]
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(HASH_LABEL))
            .is_some_and(|h| keep.contains(h));
        if live || old[i].metadata.deletion_timestamp.is_some() {
            continue;
        }
        chosen.push(i);
        excess -= 1;
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revision(name: &str, number: i64, hash: &str) -> ControllerRevision {
        let mut r = new(
            &ObjectMeta {
                name: Some("ds".into()),
                ..ObjectMeta::default()
            },
            OwnerReference::default(),
            None,
            hash,
            json!({}),
            number,
        );
        r.metadata.name = Some(name.into());
        r
    }

    #[test]
    fn template_patches_replace_the_template_and_names_follow_the_template_hash() {
        let template: PodTemplateSpec = serde_json::from_value(json!({
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }))
        .unwrap_or_default();
        let patch = template_patch(&template);
        assert_eq!(patch["spec"]["template"]["$patch"], "replace");
        assert_eq!(
            patch["spec"]["template"]["metadata"]["labels"]["app"],
            "web"
        );
        assert_eq!(
            template_hash(&template, None),
            hash::pod_template_hash(&template, None)
        );
    }

    /// `pkg/controller/daemon/update.go` `cleanupHistory`.
    #[test]
    fn the_oldest_revisions_without_live_pods_go_first() {
        let revisions = [
            revision("c", 3, "hc"),
            revision("a", 1, "ha"),
            revision("b", 2, "hb"),
        ];
        let refs: Vec<&ControllerRevision> = revisions.iter().collect();
        assert_eq!(to_delete(&refs, 1, &BTreeSet::new()), vec![1, 2]);
        assert_eq!(to_delete(&refs, 3, &BTreeSet::new()), Vec::<usize>::new());
        let live = BTreeSet::from(["ha".to_string()]);
        assert_eq!(to_delete(&refs, 1, &live), vec![2, 0]);
        assert_eq!(max_number(refs.iter().copied()), 3);
    }
}
