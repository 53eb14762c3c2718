//! A StatefulSet's revisions (kubernetes `pkg/controller/statefulset/stateful_set_utils.go`
//! `getPatch`, `newRevision`, `ApplyRevision`, and `stateful_set_control.go`
//! `getStatefulSetRevisions`, `truncateHistory`), over the ControllerRevision helpers of
//! `controllers/history.rs`.
//!
//! A revision's data is the patch that restores the set's pod template,
//! `{"spec":{"template":{...,"$patch":"replace"}}}`: what `kubectl rollout undo` sends back
//! as a strategic merge patch, and what the controller compares to tell an unchanged
//! template (the newest revision), a rollback (an older equal revision, renumbered as the
//! newest) and a new template (a new revision).

use std::collections::BTreeSet;

use k8s_openapi::api::{
    apps::v1::{ControllerRevision, StatefulSet},
    core::v1::PodTemplateSpec,
};
use serde_json::{Value, json};

use super::identity;
use crate::controllers::{compat::Opt, history};

/// `getPatch`: the revision data of `set`'s current template.
pub(crate) fn patch(set: &StatefulSet) -> Value {
    let template = set
        .spec
        .opt()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let mut template = serde_json::to_value(&template).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut template {
        map.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// `newRevision`: `set`'s template as revision `number`, named with `collision_count`,
/// carrying the template's labels and the set's annotations.
pub(crate) fn new_revision(
    set: &StatefulSet,
    number: i64,
    collision_count: i32,
) -> ControllerRevision {
    let labels = set
        .spec
        .opt()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.labels.as_ref());
    let mut revision = history::new_revision(
        &identity::owner_reference(set),
        set.metadata.namespace.as_deref(),
        labels,
        patch(set),
        number,
        Some(collision_count),
    );
    revision.metadata.annotations = set.metadata.annotations.clone();
    revision
}

/// `ApplyRevision`: `set` with the template `revision` holds. A revision whose data is
/// not a template leaves the set as it is.
pub(crate) fn apply(set: &StatefulSet, revision: &ControllerRevision) -> StatefulSet {
    let mut template = history::data(revision)
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    if let Value::Object(map) = &mut template {
        map.remove("$patch");
    }
    let mut applied = set.clone();
    match serde_json::from_value::<PodTemplateSpec>(template) {
        Ok(template) => applied.spec.opt_mut().template = template,
        Err(err) => tracing::warn!(
            revision = revision.metadata.name.as_deref().unwrap_or_default(),
            %err,
            "revision data is not a pod template"
        ),
    }
    applied
}

/// What `getStatefulSetRevisions` does with the update revision.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum UpdateRevision {
    /// The newest revision holds the template already.
    Newest(ControllerRevision),
    /// An older revision holds it (a rollback): it becomes the newest, with this number.
    Renumber(ControllerRevision, i64),
    /// No revision holds it: create this one.
    Create(ControllerRevision),
}

/// `getStatefulSetRevisions`' decision for `set` given its `revisions` (sorted).
pub(crate) fn update_revision(
    set: &StatefulSet,
    revisions: &[ControllerRevision],
    collision_count: i32,
) -> UpdateRevision {
    let candidate = new_revision(set, history::next_number(revisions), collision_count);
    let equal = history::find_equal(revisions, &candidate);
    match (equal.last(), revisions.last()) {
        (Some(found), Some(newest)) if history::data(found) == history::data(newest) => {
            UpdateRevision::Newest(newest.clone())
        }
        (Some(found), _) => UpdateRevision::Renumber((*found).clone(), history::number(&candidate)),
        (None, _) => UpdateRevision::Create(candidate),
    }
}

/// `truncateHistory`: the revisions to delete so that at most `limit` revisions that are
/// not live remain (live: the current and update revisions and any a pod was made from),
/// the oldest first.
pub(crate) fn to_truncate(
    revisions: &[ControllerRevision],
    live: &BTreeSet<String>,
    limit: i32,
) -> Vec<String> {
    let old: Vec<&ControllerRevision> = revisions
        .iter()
        .filter(|r| !r.metadata.name.as_ref().is_some_and(|n| live.contains(n)))
        .collect();
    let Ok(limit) = usize::try_from(limit) else {
        return Vec::new();
    };
    if old.len() <= limit {
        return Vec::new();
    }
    old[..old.len() - limit]
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(image: &str) -> StatefulSet {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "default", "uid": "s1",
                         "annotations": {"kubernetes.io/change-cause": "v"}},
            "spec": {
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                             "spec": {"containers": [{"name": "nginx", "image": image}]}},
            },
        }))
        .unwrap_or_default()
    }

    fn image(set: &StatefulSet) -> Option<String> {
        set.spec
            .opt()
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone())
    }

    /// `stateful_set_control.go` `getStatefulSetRevisions`: unchanged, rolled back, new.
    #[test]
    fn revisions_are_reused_renumbered_or_created() {
        let v1 = set("nginx:1");
        let UpdateRevision::Create(r1) = update_revision(&v1, &[], 0) else {
            panic!("the first revision is created");
        };
        assert_eq!(history::number(&r1), 1);
        assert_eq!(
            r1.metadata
                .annotations
                .clone()
                .unwrap_or_default()
                .get("kubernetes.io/change-cause")
                .map(String::as_str),
            Some("v")
        );
        assert_eq!(
            r1.metadata
                .labels
                .clone()
                .unwrap_or_default()
                .get("app")
                .map(String::as_str),
            Some("nginx")
        );
        assert_eq!(
            update_revision(&v1, std::slice::from_ref(&r1), 0),
            UpdateRevision::Newest(r1.clone())
        );
        let v2 = set("nginx:2");
        let UpdateRevision::Create(r2) = update_revision(&v2, std::slice::from_ref(&r1), 0) else {
            panic!("a new template is a new revision");
        };
        assert_eq!(history::number(&r2), 2);
        assert_ne!(r1.metadata.name, r2.metadata.name);
        assert_eq!(image(&apply(&v1, &r2)).as_deref(), Some("nginx:2"));
        assert_eq!(image(&apply(&v2, &r1)).as_deref(), Some("nginx:1"));
        match update_revision(&v1, &[r1.clone(), r2], 0) {
            UpdateRevision::Renumber(r, 3) => assert_eq!(r.metadata.name, r1.metadata.name),
            other => panic!("a rollback renumbers the old revision: {other:?}"),
        }
    }

    /// `stateful_set_control.go` `truncateHistory`.
    #[test]
    fn history_beyond_the_limit_goes_oldest_first_but_never_a_live_revision() {
        let revisions: Vec<ControllerRevision> = (1..=5)
            .map(|i| new_revision(&set(&format!("nginx:{i}")), i, 0))
            .collect();
        let name = |i: usize| revisions[i].metadata.name.clone().unwrap_or_default();
        let live = BTreeSet::from([name(0), name(4)]);
        assert_eq!(to_truncate(&revisions, &live, 1), [name(1), name(2)]);
        assert!(to_truncate(&revisions, &live, 10).is_empty());
        assert_eq!(to_truncate(&revisions, &BTreeSet::new(), 0).len(), 5);
    }
}
