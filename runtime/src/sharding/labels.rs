//! The labels of a ring: which member an object is assigned to, which objects are asked to
//! drain, which Leases are the ring's members (kubernetes-controller-sharding's
//! `shard.alpha.sharding.timebertt.dev/<ring>` and `drain.alpha.sharding.timebertt.dev/<ring>`,
//! under kubegen's prefix).

use std::collections::BTreeMap;

use kube_core::ObjectMeta;

/// The label prefix of an object's assignment: `shard.kubegen.io/<ring>: <member>`.
pub const SHARD_LABEL_PREFIX: &str = "shard.kubegen.io/";
/// The label prefix asking the assigned member to drain an object:
/// `drain.shard.kubegen.io/<ring>: "true"`.
pub const DRAIN_LABEL_PREFIX: &str = "drain.shard.kubegen.io/";
/// The label naming the ring a member's Lease belongs to: `shard.kubegen.io/ring: <ring>`.
pub const RING_LABEL: &str = "shard.kubegen.io/ring";

/// The label keys of one ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingLabels {
    ring: String,
    shard: String,
    drain: String,
}

impl RingLabels {
    /// The labels of the ring named `ring` (a label value: at most 63 characters of
    /// `[a-z0-9A-Z._-]`, as the label key's name part is).
    pub fn new(ring: &str) -> Self {
        Self {
            ring: ring.to_owned(),
            shard: format!("{SHARD_LABEL_PREFIX}{ring}"),
            drain: format!("{DRAIN_LABEL_PREFIX}{ring}"),
        }
    }

    /// The ring's name.
    pub fn ring(&self) -> &str {
        &self.ring
    }

    /// `shard.kubegen.io/<ring>`: the member an object is assigned to.
    pub fn shard_key(&self) -> &str {
        &self.shard
    }

    /// `drain.shard.kubegen.io/<ring>`: the assigned member is asked to let go.
    pub fn drain_key(&self) -> &str {
        &self.drain
    }

    /// The label selector of `member`'s share: what its informers watch.
    pub fn member_selector(&self, member: &str) -> String {
        format!("{}={member}", self.shard)
    }

    /// The label selector of the ring's member Leases.
    pub fn lease_selector(&self) -> String {
        format!("{RING_LABEL}={}", self.ring)
    }

    /// The labels a member's Lease is created with.
    pub fn lease_labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(RING_LABEL.to_owned(), self.ring.clone())])
    }

    /// The member `meta` is assigned to, if any.
    pub fn assigned<'a>(&self, meta: &'a ObjectMeta) -> Option<&'a str> {
        self.assigned_by(|key| label_of(meta, key))
    }

    /// Whether `meta` carries the drain label.
    pub fn draining(&self, meta: &ObjectMeta) -> bool {
        self.draining_by(|key| label_of(meta, key))
    }

    /// The member an object is assigned to, given how to read its labels: the shard
    /// label's value, unless empty.
    pub(crate) fn assigned_by<'a>(
        &self,
        label: impl FnOnce(&str) -> Option<&'a str>,
    ) -> Option<&'a str> {
        label(&self.shard).filter(|m| !m.is_empty())
    }

    /// Whether an object carries the drain label (any value), given how to read its labels.
    pub(crate) fn draining_by<'a>(&self, label: impl FnOnce(&str) -> Option<&'a str>) -> bool {
        label(&self.drain).is_some()
    }

    /// The JSON pointer of a label key (`/` escaped as `~1`, `~` as `~0`, RFC 6901).
    pub fn label_pointer(key: &str) -> String {
        format!(
            "/metadata/labels/{}",
            key.replace('~', "~0").replace('/', "~1")
        )
    }
}

/// The value of `meta`'s label `key`.
fn label_of<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels.as_ref()?.get(key).map(String::as_str)
}

/// A Lease name for `identity` in `ring`: `<ring>-<identity>`, lower-cased, characters a
/// DNS subdomain cannot hold replaced by `-`, cut to 253 characters.
pub fn member_lease_name(ring: &str, identity: &str) -> String {
    let raw = format!("{ring}-{identity}").to_ascii_lowercase();
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(253)
        .collect();
    while name.ends_with(['-', '.']) {
        name.pop();
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(labels: &[(&str, &str)]) -> ObjectMeta {
        ObjectMeta {
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn an_object_is_assigned_by_its_ring_label_and_drained_by_the_other() {
        let labels = RingLabels::new("foos");
        let m = meta(&[
            ("shard.kubegen.io/foos", "pod-a"),
            ("shard.kubegen.io/bars", "pod-b"),
        ]);
        assert_eq!(labels.assigned(&m), Some("pod-a"));
        assert!(!labels.draining(&m));
        let d = meta(&[("drain.shard.kubegen.io/foos", "true")]);
        assert!(labels.draining(&d));
        assert_eq!(labels.assigned(&d), None);
        assert_eq!(
            labels.assigned(&meta(&[("shard.kubegen.io/foos", "")])),
            None
        );
        assert_eq!(
            labels.member_selector("pod-a"),
            "shard.kubegen.io/foos=pod-a"
        );
        assert_eq!(labels.lease_selector(), "shard.kubegen.io/ring=foos");
    }

    #[test]
    fn label_keys_escape_into_json_pointers() {
        assert_eq!(
            RingLabels::label_pointer("shard.kubegen.io/foos"),
            "/metadata/labels/shard.kubegen.io~1foos"
        );
        assert_eq!(RingLabels::label_pointer("a~b"), "/metadata/labels/a~0b");
    }

    #[test]
    fn lease_names_are_dns_subdomains() {
        assert_eq!(member_lease_name("foos", "Pod_A"), "foos-pod-a");
        assert_eq!(member_lease_name("foos", "a:b/"), "foos-a-b");
        assert_eq!(member_lease_name("r", &"x".repeat(300)).len(), 253);
    }
}
