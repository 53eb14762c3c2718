//! ControllerRevisions, the history of the controllers that keep one (DaemonSet,
//! StatefulSet): their names, hashes, revision numbers and which old ones go
//! (kubernetes `pkg/controller/history/controller_history.go`, and the DaemonSet
//! controller's `constructHistory`, `snapshot` and `cleanupHistory` in
//! `pkg/controller/daemon/update.go`).
//!
//! A revision stores, in `data`, a strategic merge patch that restores the owner's pod
//! template (`kubectl rollout undo` applies it), carries the template's labels plus
//! `controller-revision-hash` (so `kubectl rollout history`, which lists revisions by the
//! owner's selector, finds them), and a `revision` number one above every older revision's.
//! The hashes are [`super::deployment::hash`]'s: FNV-32a, `SafeEncodeString`-encoded.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, OwnerReference},
        runtime::RawExtension,
    },
};
use serde_json::{Value, json};

use super::{
    compat::{self, Opt},
    deployment::hash,
};

/// The label naming the revision a pod (and the revision itself) belongs to
/// (`apps.ControllerRevisionHashLabelKey`, `apps.DefaultDaemonSetUniqueLabelKey`).
pub(crate) const HASH_LABEL: &str = "controller-revision-hash";

/// The longest prefix a revision name keeps (`ControllerRevisionName`: 253 less room for
/// the hash).
const MAX_PREFIX: usize = 223;

/// `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 bytes.
pub(crate) fn name(prefix: &str, hash: &str) -> String {
    let mut cut = prefix.len().min(MAX_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash}", &prefix[..cut])
}

/// `controller.ComputeHash`: the hash of a pod template and collision count (what the
/// DaemonSet controller names its revisions and labels its pods with).
pub(crate) fn template_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    hash::pod_template_hash(template, collision_count)
}

/// `HashControllerRevision`: the hash of a revision's data and collision count (what the
/// StatefulSet controller names its revisions with).
#[allow(dead_code, reason = "for the StatefulSet controller's revisions")]
pub(crate) fn data_hash(data: &Value, collision_count: Option<i32>) -> String {
    hash::safe_hash(hash::canonical_value(data).as_bytes(), collision_count)
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

/// A revision's number (0 when unset).
pub(crate) fn number(revision: &ControllerRevision) -> i64 {
    revision.revision.opt().copied().unwrap_or(0)
}

/// Sets a revision's number.
pub(crate) fn set_number(revision: &mut ControllerRevision, number: i64) {
    *revision.revision.opt_mut() = number;
}

/// A revision's data (`null` when unset).
pub(crate) fn data(revision: &ControllerRevision) -> &Value {
    static NULL: Value = Value::Null;
    revision.data.opt().map_or(&NULL, |raw| &raw.0)
}

/// The highest revision number among `revisions` (0 for none), `history.MaxRevision`.
pub(crate) fn max_number<'a>(revisions: impl IntoIterator<Item = &'a ControllerRevision>) -> i64 {
    revisions.into_iter().map(number).max().unwrap_or(0)
}

/// `history.NewControllerRevision`: a revision named `<owner>-<hash>` in the owner's
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
            name: Some(name(owner.name.as_deref().unwrap_or_default(), hash)),
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
    fn names_are_prefix_dash_hash_with_the_prefix_cut() {
        assert_eq!(name("web", "abc"), "web-abc");
        let long = "x".repeat(300);
        assert_eq!(name(&long, "h").len(), MAX_PREFIX + 2);
    }

    #[test]
    fn template_patches_replace_the_template_and_hashes_follow_the_data() {
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
        assert_eq!(data_hash(&patch, None), data_hash(&patch.clone(), None));
        assert_ne!(data_hash(&patch, None), data_hash(&patch, Some(1)));
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
