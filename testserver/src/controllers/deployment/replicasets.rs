//! A Deployment's ReplicaSets: which one is new, which are old, their revisions, and how a
//! new one is built (kubernetes `pkg/controller/deployment/util/deployment_util.go`
//! `FindNewReplicaSet`, `FindOldReplicaSets`, `EqualIgnoreHash`, `MaxRevision`,
//! `SetNewReplicaSetAnnotations`, `SetReplicasAnnotations`, `SetDeploymentRevision`, and
//! `pkg/controller/deployment/sync.go` `getNewReplicaSet`).
//!
//! * The **new** ReplicaSet is the oldest one whose pod template equals the Deployment's
//!   once the `pod-template-hash` label is taken out of the ReplicaSet's template labels;
//!   every other one is **old**. Templates are compared as JSON values, with absent and
//!   empty lists and label / annotation maps counted as equal (Go's semantic equality).
//! * **Revisions** live in the `deployment.kubernetes.io/revision` annotation. The new
//!   ReplicaSet gets one more than the highest among the old ones; when an old ReplicaSet
//!   becomes new again (a rollback), its previous revision is appended to
//!   `deployment.kubernetes.io/revision-history`. The Deployment carries its new
//!   ReplicaSet's revision (what `kubectl rollout history` and `undo` read).
//! * A **new ReplicaSet** is named `<deployment>-<hash>`, its labels, selector and template
//!   labels get `pod-template-hash: <hash>`, it carries the Deployment's annotations (but
//!   not the revision ones or `kubectl.kubernetes.io/last-applied-configuration`) plus
//!   `revision`, `desired-replicas` and `max-replicas`, and a controller ownerReference to
//!   the Deployment (with `blockOwnerDeletion`).

use std::{cmp::Ordering, collections::BTreeMap};

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, ReplicaSet, ReplicaSetSpec},
        core::v1::PodTemplateSpec,
    },
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference},
};
use serde_json::Value;

use super::spec;
use crate::controllers::compat::{self, Opt};

/// The label that keeps the pods of two revisions apart.
pub(crate) const HASH_LABEL: &str = "pod-template-hash";
/// A ReplicaSet's (and the Deployment's) revision.
pub(crate) const REVISION: &str = "deployment.kubernetes.io/revision";
/// The earlier revisions a ReplicaSet served.
pub(crate) const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
/// The Deployment's replicas when the ReplicaSet was last scaled.
pub(crate) const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// The Deployment's replicas plus its surge when the ReplicaSet was last scaled.
pub(crate) const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
/// kubectl's record of the last applied object (never copied to a ReplicaSet).
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The `extensions/v1beta1` rollback request (never copied).
const ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";

/// The Deployment annotations a ReplicaSet does not inherit (`annotationsToSkip`).
const NOT_COPIED: [&str; 6] = [
    LAST_APPLIED,
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    ROLLBACK_TO,
];

/// The longest `revision-history` kept, in characters (kube-controller-manager's
/// `maxRevHistoryLengthInChars` default): older entries are dropped first.
const MAX_REVISION_HISTORY_CHARS: usize = 2000;

/// `spec.replicas` (1 when unset, as the server defaults it; never negative).
pub(crate) fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.opt().and_then(|s| s.replicas).unwrap_or(1).max(0)
}

/// Sets `spec.replicas`.
pub(crate) fn set_spec_replicas(rs: &mut ReplicaSet, replicas: i32) {
    rs.spec.opt_mut().replicas = Some(replicas);
}

/// `status.replicas` (pods that exist, terminating ones excluded).
pub(crate) fn status_replicas(rs: &ReplicaSet) -> i32 {
    rs.status.as_ref().map_or(0, |s| s.replicas).max(0)
}

/// `status.availableReplicas`.
pub(crate) fn available_replicas(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0)
        .max(0)
}

/// `status.readyReplicas`.
pub(crate) fn ready_replicas(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0)
        .max(0)
}

/// The ReplicaSet's name ("" if it has none).
pub(crate) fn name(rs: &ReplicaSet) -> &str {
    rs.metadata.name.as_deref().unwrap_or("")
}

/// An annotation of `meta`.
fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

/// The ReplicaSet's revision: 0 without the annotation, `None` if it does not parse (such
/// a ReplicaSet is skipped when looking for the highest revision, as `MaxRevision` does).
pub(crate) fn revision(rs: &ReplicaSet) -> Option<i64> {
    match annotation(&rs.metadata, REVISION) {
        None => Some(0),
        Some(text) => text.parse().ok(),
    }
}

/// The highest revision among `rss` (0 if none).
pub(crate) fn max_revision<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i64 {
    rss.into_iter()
        .filter_map(revision)
        .max()
        .unwrap_or(0)
        .max(0)
}

/// An integer annotation of the ReplicaSet (`desired-replicas`, `max-replicas`).
pub(crate) fn int_annotation(rs: &ReplicaSet, key: &str) -> Option<i32> {
    annotation(&rs.metadata, key).and_then(|v| v.parse().ok())
}

/// Orders ReplicaSets oldest first, by name when created at the same second
/// (`ReplicaSetsByCreationTimestamp`).
pub(crate) fn by_creation(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    let created = |rs: &ReplicaSet| rs.metadata.creation_timestamp.as_ref().map(|t| t.0);
    created(a)
        .cmp(&created(b))
        .then_with(|| name(a).cmp(name(b)))
}

/// Drops nulls and empty lists everywhere, and empty `labels` / `annotations` maps: what
/// Go's semantic equality does not tell apart.
fn normalize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for v in map.values_mut() {
                normalize(v);
            }
            map.retain(|key, v| match v {
                Value::Null => false,
                Value::Array(items) => !items.is_empty(),
                Value::Object(inner) => {
                    !(inner.is_empty() && matches!(key.as_str(), "labels" | "annotations"))
                }
                _ => true,
            });
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// The template as a comparable JSON value, without the `pod-template-hash` label.
fn comparable(template: &PodTemplateSpec) -> Value {
    let mut template = template.clone();
    if let Some(labels) = template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        labels.remove(HASH_LABEL);
    }
    let mut value = serde_json::to_value(&template).unwrap_or(Value::Null);
    normalize(&mut value);
    value
}

/// `EqualIgnoreHash`: whether two pod templates are equal once the `pod-template-hash`
/// label is left out of both.
pub(crate) fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    comparable(a) == comparable(b)
}

/// The deployment's pod template.
pub(crate) fn deployment_template(d: &Deployment) -> PodTemplateSpec {
    d.spec.opt().map(|s| s.template.clone()).unwrap_or_default()
}

/// `FindNewReplicaSet`: the index of the oldest ReplicaSet in `rss` whose template equals
/// the Deployment's (ignoring the hash label).
pub(crate) fn find_new(d: &Deployment, rss: &[ReplicaSet]) -> Option<usize> {
    let wanted = comparable(&deployment_template(d));
    let mut order: Vec<usize> = (0..rss.len()).collect();
    order.sort_by(|&a, &b| by_creation(&rss[a], &rss[b]));
    order.into_iter().find(|&i| {
        rss[i]
            .spec
            .opt()
            .and_then(|s| s.template.as_ref())
            .is_some_and(|t| comparable(t) == wanted)
    })
}

/// `SetReplicasAnnotations`: records the Deployment's `desired` replicas and `max`
/// (desired + surge) on the ReplicaSet; whether anything changed.
pub(crate) fn set_replicas_annotations(rs: &mut ReplicaSet, desired: i32, max: i32) -> bool {
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let mut changed = false;
    for (key, value) in [(DESIRED_REPLICAS, desired), (MAX_REPLICAS, max)] {
        let value = value.to_string();
        if annotations.get(key) != Some(&value) {
            annotations.insert(key.to_owned(), value);
            changed = true;
        }
    }
    changed
}

/// Appends `old` to a `revision-history` value, dropping the oldest entries beyond the
/// length limit.
fn append_history(history: Option<&str>, old: &str) -> String {
    let mut entries: Vec<&str> = history
        .unwrap_or("")
        .split(',')
        .filter(|s| !s.is_empty())
        .collect();
    entries.push(old);
    let mut joined = entries.join(",");
    while joined.len() > MAX_REVISION_HISTORY_CHARS && entries.len() > 1 {
        entries.remove(0);
        joined = entries.join(",");
    }
    joined
}

/// `SetNewReplicaSetAnnotations`: copies the Deployment's annotations (but the skipped
/// ones) to the new ReplicaSet, raises its revision to `new_revision` if lower (keeping the
/// old one in `revision-history`), and for a ReplicaSet about to be created (`!exists`)
/// records the replica annotations. Whether anything changed.
pub(crate) fn set_new_rs_annotations(
    d: &Deployment,
    rs: &mut ReplicaSet,
    new_revision: i64,
    exists: bool,
    max_surge: i32,
) -> bool {
    let mut changed = false;
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if let Some(from) = &d.metadata.annotations {
        for (key, value) in from {
            if NOT_COPIED.contains(&key.as_str()) || annotations.get(key) == Some(value) {
                continue;
            }
            annotations.insert(key.clone(), value.clone());
            changed = true;
        }
    }
    let old_text = annotations.get(REVISION).cloned();
    let old_revision = old_text
        .as_deref()
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or(0);
    if old_revision < new_revision {
        annotations.insert(REVISION.to_owned(), new_revision.to_string());
        changed = true;
        if let Some(old_text) = &old_text {
            let history = append_history(
                annotations.get(REVISION_HISTORY).map(String::as_str),
                old_text,
            );
            annotations.insert(REVISION_HISTORY.to_owned(), history);
        }
    }
    if !exists {
        let desired = spec::replicas(d);
        if set_replicas_annotations(rs, desired, desired.saturating_add(max_surge)) {
            changed = true;
        }
    }
    changed
}

/// `SetDeploymentRevision`: sets the Deployment's revision annotation; whether it changed.
pub(crate) fn set_deployment_revision(d: &mut Deployment, revision: &str) -> bool {
    let annotations = d.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if annotations.get(REVISION).map(String::as_str) == Some(revision) {
        return false;
    }
    annotations.insert(REVISION.to_owned(), revision.to_owned());
    true
}

/// The ReplicaSet's revision annotation ("" when absent).
pub(crate) fn revision_text(rs: &ReplicaSet) -> String {
    annotation(&rs.metadata, REVISION)
        .unwrap_or_default()
        .to_owned()
}

/// A controller ownerReference to `d` (`metav1.NewControllerRef`).
pub(crate) fn controller_ref(d: &Deployment) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".to_owned(),
        kind: "Deployment".to_owned(),
        name: d.metadata.name.clone().unwrap_or_default(),
        uid: d.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The controller ownerReference of an object, if any.
pub(crate) fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// `labels` with `pod-template-hash: hash` added.
fn with_hash(labels: Option<&BTreeMap<String, String>>, hash: &str) -> BTreeMap<String, String> {
    let mut labels = labels.cloned().unwrap_or_default();
    labels.insert(HASH_LABEL.to_owned(), hash.to_owned());
    labels
}

/// The new ReplicaSet for `d` with pod-template-hash `hash` (as `getNewReplicaSet` builds
/// it before `NewRSNewReplicas` and the annotations): 0 replicas.
pub(crate) fn build_new(d: &Deployment, hash: &str) -> ReplicaSet {
    let mut template = deployment_template(d);
    let meta = template.metadata.get_or_insert_with(ObjectMeta::default);
    let labels = with_hash(meta.labels.as_ref(), hash);
    meta.labels = Some(labels.clone());
    let selector = d.spec.opt().map(|s| s.selector.clone()).unwrap_or_default();
    let selector = LabelSelector {
        match_labels: Some(with_hash(selector.match_labels.as_ref(), hash)),
        match_expressions: selector.match_expressions,
    };
    let deployment_name = d.metadata.name.as_deref().unwrap_or_default();
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(format!("{deployment_name}-{hash}")),
            namespace: d.metadata.namespace.clone(),
            labels: Some(labels),
            owner_references: Some(vec![controller_ref(d)]),
            ..ObjectMeta::default()
        },
        spec: compat::field(ReplicaSetSpec {
            replicas: Some(0),
            min_ready_seconds: Some(spec::min_ready_seconds(d)),
            selector,
            template: Some(template),
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::{
            apps::v1::DeploymentSpec,
            core::v1::{Container, PodSpec},
        },
        apimachinery::pkg::apis::meta::v1::Time,
    };

    use super::*;

    fn template(image: &str, hash: Option<&str>) -> PodTemplateSpec {
        let mut labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
        if let Some(hash) = hash {
            labels.insert(HASH_LABEL.to_owned(), hash.to_owned());
        }
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "web".to_owned(),
                    image: Some(image.to_owned()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
        }
    }

    fn deployment(image: &str) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: Some("web".to_owned()),
                namespace: Some("default".to_owned()),
                uid: Some("d-uid".to_owned()),
                annotations: Some(BTreeMap::from([
                    ("team".to_owned(), "a".to_owned()),
                    (REVISION.to_owned(), "7".to_owned()),
                    (LAST_APPLIED.to_owned(), "{}".to_owned()),
                ])),
                ..ObjectMeta::default()
            },
            spec: compat::field(DeploymentSpec {
                replicas: Some(3),
                selector: LabelSelector {
                    match_labels: Some(BTreeMap::from([("app".to_owned(), "web".to_owned())])),
                    match_expressions: None,
                },
                template: template(image, None),
                ..DeploymentSpec::default()
            }),
            status: None,
        }
    }

    fn rs(name: &str, image: &str, created: i64, revision: Option<&str>) -> ReplicaSet {
        ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                creation_timestamp: Some(Time(
                    jiff::Timestamp::from_second(created).unwrap_or_default(),
                )),
                annotations: revision
                    .map(|r| BTreeMap::from([(REVISION.to_owned(), r.to_owned())])),
                ..ObjectMeta::default()
            },
            spec: compat::field(ReplicaSetSpec {
                replicas: Some(1),
                template: Some(template(image, Some("h"))),
                ..ReplicaSetSpec::default()
            }),
            status: None,
        }
    }

    #[test]
    fn the_new_replica_set_is_the_oldest_with_an_equal_template() {
        let d = deployment("nginx:2");
        let rss = vec![
            rs("b", "nginx:2", 20, None),
            rs("old", "nginx:1", 5, None),
            rs("a", "nginx:2", 10, None),
        ];
        assert_eq!(find_new(&d, &rss), Some(2));
        assert_eq!(find_new(&deployment("nginx:3"), &rss), None);
    }

    #[test]
    fn empty_and_absent_lists_compare_equal_but_hash_label_is_ignored_only() {
        let mut a = template("x", Some("one"));
        let b = template("x", Some("two"));
        assert!(equal_ignore_hash(&a, &b));
        {
            let spec = a.spec.opt_mut();
            spec.volumes = Some(Vec::new());
        }
        assert!(equal_ignore_hash(&a, &b));
        assert!(!equal_ignore_hash(&a, &template("y", None)));
    }

    #[test]
    fn revisions_parse_and_unparsable_ones_are_skipped() {
        let rss = [
            rs("a", "x", 1, Some("3")),
            rs("b", "x", 2, Some("junk")),
            rs("c", "x", 3, None),
        ];
        assert_eq!(revision(&rss[1]), None);
        assert_eq!(revision(&rss[2]), Some(0));
        assert_eq!(max_revision(&rss), 3);
        assert_eq!(max_revision([]), 0);
    }

    #[test]
    fn a_created_replica_set_gets_annotations_but_not_the_skipped_ones() {
        let d = deployment("nginx:1");
        let mut new = build_new(&d, "abc");
        assert!(set_new_rs_annotations(&d, &mut new, 4, false, 1));
        let annotations = new.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(annotations.get("team").map(String::as_str), Some("a"));
        assert_eq!(annotations.get(REVISION).map(String::as_str), Some("4"));
        assert_eq!(
            annotations.get(DESIRED_REPLICAS).map(String::as_str),
            Some("3")
        );
        assert_eq!(annotations.get(MAX_REPLICAS).map(String::as_str), Some("4"));
        assert!(!annotations.contains_key(LAST_APPLIED));
        assert!(!annotations.contains_key(REVISION_HISTORY));
        assert!(!set_new_rs_annotations(&d, &mut new, 4, true, 1));
    }

    #[test]
    fn an_old_replica_set_that_becomes_new_again_keeps_its_history() {
        let d = deployment("nginx:1");
        let mut back = rs("web-1", "nginx:1", 1, Some("1"));
        assert!(set_new_rs_annotations(&d, &mut back, 3, true, 1));
        assert!(set_new_rs_annotations(&d, &mut back, 5, true, 1));
        let annotations = back.metadata.annotations.unwrap_or_default();
        assert_eq!(annotations.get(REVISION).map(String::as_str), Some("5"));
        assert_eq!(
            annotations.get(REVISION_HISTORY).map(String::as_str),
            Some("1,3")
        );
    }

    #[test]
    fn the_new_replica_set_is_named_labelled_and_owned() {
        let d = deployment("nginx:1");
        let new = build_new(&d, "abc");
        assert_eq!(new.metadata.name.as_deref(), Some("web-abc"));
        let hash =
            |m: Option<&BTreeMap<String, String>>| m.and_then(|m| m.get(HASH_LABEL)).cloned();
        assert_eq!(hash(new.metadata.labels.as_ref()), Some("abc".to_owned()));
        let spec = new.spec.opt().cloned().unwrap_or_default();
        assert_eq!(
            hash(spec.selector.match_labels.as_ref()),
            Some("abc".to_owned())
        );
        let template_labels = spec
            .template
            .and_then(|t| t.metadata)
            .and_then(|m| m.labels);
        assert_eq!(hash(template_labels.as_ref()), Some("abc".to_owned()));
        let owner = controller_of(&new.metadata).cloned().unwrap_or_default();
        assert_eq!(owner.uid, "d-uid");
        assert_eq!(owner.block_owner_deletion, Some(true));
        assert_eq!(spec_replicas(&new), 0);
        // The template still equals the Deployment's, hash aside.
        assert_eq!(find_new(&d, &[new]), Some(0));
    }

    #[test]
    fn the_deployment_revision_is_set_once() {
        let mut d = deployment("x");
        assert!(set_deployment_revision(&mut d, "8"));
        assert!(!set_deployment_revision(&mut d, "8"));
    }

    #[test]
    fn history_is_bounded() {
        let long = vec!["1"; 1500].join(",");
        let joined = append_history(Some(&long), "2");
        assert!(joined.len() <= MAX_REVISION_HISTORY_CHARS);
        assert!(joined.ends_with(",2"));
        assert_eq!(append_history(None, "4"), "4");
    }
}
