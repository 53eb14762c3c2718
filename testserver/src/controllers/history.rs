//! ControllerRevisions, the history a StatefulSet or a DaemonSet keeps of its pod
//! template (kubernetes `pkg/controller/history/controller_history.go`; the DaemonSet's
//! own naming is `daemonset/revision.rs`): each revision
//! holds a patch that restores the template, a revision number, and is named
//! `<parent>-<hash>`.
//!
//! * The hash (`HashControllerRevision`) is FNV-32 (not 32a) over the revision's data,
//!   followed by the collision count in decimal when there is one, written in decimal and
//!   mapped through `SafeEncodeString`'s alphabet (see `deployment/hash.rs`). kube hashes
//!   the bytes Go's `json.Marshal` wrote; this rebuild hashes the data's canonical JSON
//!   (object keys sorted, no whitespace), so the names are stable but not a real
//!   cluster's.
//! * A revision carries the parent's template labels plus `controller.kubernetes.io/hash`,
//!   and a controller owner reference to the parent (`NewControllerRevision`).
//! * Two revisions are equal when their data are (`FindEqualRevisions`, `EqualRevision`);
//!   revisions sort by number, then creation time, then name (`SortControllerRevisions`).
//! * Creating a revision whose name is taken by a revision with other data bumps the
//!   collision count and hashes again (`CreateControllerRevision`); a taken name with the
//!   same data is that revision.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::apps::v1::ControllerRevision,
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, OwnerReference, Time},
        runtime::RawExtension,
    },
};
use kubegen::client::{Error, ResourceClient, params::PostParams};
use serde_json::Value;

use super::{
    compat::{self, Opt},
    deployment::hash::{canonical_value, safe_encode},
};

/// The label holding a revision's hash (`ControllerRevisionHashLabel`).
pub(crate) const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// FNV-32 offset basis.
const FNV_OFFSET: u32 = 0x811c_9dc5;
/// FNV-32 prime.
const FNV_PRIME: u32 = 0x0100_0193;

/// FNV-32 (multiply, then xor) of `bytes`, continuing from `hash`.
fn fnv32(mut hash: u32, bytes: &[u8]) -> u32 {
    for &byte in bytes {
        hash = hash.wrapping_mul(FNV_PRIME);
        hash ^= u32::from(byte);
    }
    hash
}

/// `HashControllerRevision`: the hash of revision data `data` with `collision_count`.
pub(crate) fn hash(data: &Value, collision_count: Option<i32>) -> String {
    let mut sum = fnv32(FNV_OFFSET, canonical_value(data).as_bytes());
    if let Some(count) = collision_count {
        sum = fnv32(sum, count.to_string().as_bytes());
    }
    safe_encode(&sum.to_string())
}

/// The longest prefix a revision name keeps (`ControllerRevisionName`: 253 less room for
/// the hash).
const MAX_PREFIX: usize = 223;

/// `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 bytes.
pub(crate) fn revision_name(prefix: &str, hash: &str) -> String {
    let mut cut = prefix.len().min(MAX_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash}", &prefix[..cut])
}

/// A revision's data (`null` when it has none).
pub(crate) fn data(revision: &ControllerRevision) -> &Value {
    revision
        .data
        .opt()
        .map_or(&Value::Null, |RawExtension(v)| v)
}

/// A revision's number (0 when unset).
pub(crate) fn number(revision: &ControllerRevision) -> i64 {
    revision.revision.opt().copied().unwrap_or(0)
}

/// Sets a revision's number.
pub(crate) fn set_number(revision: &mut ControllerRevision, n: i64) {
    *revision.revision.opt_mut() = n;
}

/// The highest revision number among `revisions` (0 for none), `history.MaxRevision`.
pub(crate) fn max_number<'a>(revisions: impl IntoIterator<Item = &'a ControllerRevision>) -> i64 {
    revisions.into_iter().map(number).max().unwrap_or(0)
}

/// `NewControllerRevision`: a revision of the parent `owner` (namespace `namespace`)
/// holding `data`, numbered `number`, named by its hash with `collision_count`.
pub(crate) fn new_revision(
    owner: &OwnerReference,
    namespace: Option<&str>,
    template_labels: Option<&BTreeMap<String, String>>,
    data: Value,
    number: i64,
    collision_count: Option<i32>,
) -> ControllerRevision {
    let hash = hash(&data, collision_count);
    let mut labels = template_labels.cloned().unwrap_or_default();
    labels.insert(HASH_LABEL.to_string(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(&owner.name, &hash)),
            namespace: namespace.map(str::to_string),
            labels: Some(labels),
            owner_references: Some(vec![owner.clone()]),
            ..ObjectMeta::default()
        },
        data: compat::field(RawExtension(data)),
        revision: compat::field(number),
    }
}

/// `SortControllerRevisions`: by number, then creation time, then name.
pub(crate) fn sort(revisions: &mut [ControllerRevision]) {
    revisions.sort_by(|a, b| {
        let created =
            |r: &ControllerRevision| r.metadata.creation_timestamp.clone().map(|Time(t)| t);
        (number(a), created(a), &a.metadata.name).cmp(&(number(b), created(b), &b.metadata.name))
    });
}

/// `FindEqualRevisions`: the revisions whose data equal `needle`'s, in `revisions`' order.
pub(crate) fn find_equal<'a>(
    revisions: &'a [ControllerRevision],
    needle: &ControllerRevision,
) -> Vec<&'a ControllerRevision> {
    revisions
        .iter()
        .filter(|r| data(r) == data(needle))
        .collect()
}

/// The number after the highest of sorted `revisions` (1 for none: `nextRevision`).
pub(crate) fn next_number(revisions: &[ControllerRevision]) -> i64 {
    revisions.last().map_or(1, |r| number(r) + 1)
}

/// `CreateControllerRevision`: creates `revision` in `namespace`, bumping
/// `collision_count` while its name is taken by a revision with other data. Returns the
/// revision created (or the equal one found under its name).
pub(crate) async fn create(
    client: &ResourceClient<ControllerRevision>,
    revision: &ControllerRevision,
    collision_count: &mut i32,
) -> Result<ControllerRevision, Error> {
    let owner = revision
        .metadata
        .owner_references
        .as_deref()
        .and_then(<[OwnerReference]>::first)
        .map(|r| r.name.clone())
        .unwrap_or_default();
    let mut candidate = revision.clone();
    loop {
        let hash = hash(data(revision), Some(*collision_count));
        let name = revision_name(&owner, &hash);
        candidate.metadata.name = Some(name.clone());
        match client.create(&PostParams::default(), &candidate).await {
            Ok(created) => return Ok(created),
            Err(e) if e.is_already_exists() => {
                let existing = client.get(&name).await?;
                if data(&existing) == data(&candidate) {
                    return Ok(existing);
                }
                *collision_count = collision_count.saturating_add(1);
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn owner() -> OwnerReference {
        OwnerReference {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            name: "web".into(),
            uid: "u".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }

    #[test]
    fn fnv32_matches_the_reference_vectors() {
        // FNV-1 32-bit test vectors (Go's hash/fnv New32).
        assert_eq!(fnv32(FNV_OFFSET, b""), 0x811c_9dc5);
        assert_eq!(fnv32(FNV_OFFSET, b"a"), 0x050c_5d7e);
        assert_eq!(fnv32(FNV_OFFSET, b"foobar"), 0x31f0_b262);
    }

    #[test]
    fn revisions_are_named_by_their_data_and_collision_count() {
        let labels = BTreeMap::from([("app".to_string(), "web".to_string())]);
        let data = json!({"spec": {"template": {"$patch": "replace"}}});
        let a = new_revision(&owner(), Some("ns"), Some(&labels), data.clone(), 1, None);
        let b = new_revision(&owner(), Some("ns"), Some(&labels), data.clone(), 2, None);
        let c = new_revision(
            &owner(),
            Some("ns"),
            Some(&labels),
            data.clone(),
            1,
            Some(1),
        );
        let name = a.metadata.name.clone().unwrap_or_default();
        assert!(name.starts_with("web-"), "{name}");
        assert_eq!(a.metadata.name, b.metadata.name, "the number is not hashed");
        assert_ne!(a.metadata.name, c.metadata.name, "the collision count is");
        let hash_label = a
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(HASH_LABEL))
            .cloned()
            .unwrap_or_default();
        assert_eq!(name, format!("web-{hash_label}"));
        assert_eq!(number(&b), 2);
        assert_eq!(find_equal(&[a.clone(), c.clone()], &b).len(), 2);
        let other = new_revision(&owner(), None, None, json!({"spec": {}}), 3, None);
        assert!(find_equal(std::slice::from_ref(&other), &a).is_empty());
        let mut all = vec![other, b, a];
        sort(&mut all);
        assert_eq!(all.iter().map(number).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(next_number(&all), 4);
        assert_eq!(next_number(&[]), 1);
        assert_eq!(revision_name(&"x".repeat(300), "h").len(), 225);
    }
}
