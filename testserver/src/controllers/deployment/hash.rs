//! The `pod-template-hash`: the suffix of a new ReplicaSet's name and the label that keeps
//! the pods of two revisions of one Deployment apart (kubernetes
//! `pkg/controller/controller_utils.go` `ComputeHash`, used by
//! `pkg/controller/deployment/sync.go` `getNewReplicaSet`).
//!
//! The hash is FNV-32a over the pod template, followed by the Deployment's
//! `status.collisionCount` (4 bytes, little endian) when it is set, so that bumping the
//! count after a name collision gives a different name. The 32-bit sum is written in
//! decimal and each digit mapped through kube's `SafeEncodeString` alphabet
//! (`bcdfghjklmnpqrstvwxz2456789`: no vowels, no look-alikes), as
//! `rand.SafeEncodeString(fmt.Sprint(hash))` does.
//!
//! kube-controller-manager feeds the template to the hash as `go-spew` prints it; this
//! rebuild feeds the template's canonical JSON (object keys sorted, no whitespace). So the
//! hashes differ from a real cluster's for the same template, but they are stable: the same
//! template and collision count always give the same hash, here and across runs.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::Value;

/// kube's `SafeEncodeString` alphabet (`k8s.io/apimachinery/pkg/util/rand`).
const ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-32 offset basis.
const FNV_OFFSET: u32 = 0x811c_9dc5;
/// FNV-32 prime.
const FNV_PRIME: u32 = 0x0100_0193;

/// FNV-32a, fed in pieces.
#[derive(Debug, Clone, Copy)]
struct Fnv32a(u32);

impl Fnv32a {
    /// A hasher at the offset basis.
    fn new() -> Self {
        Fnv32a(FNV_OFFSET)
    }

    /// Feeds `bytes`.
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 ^= u32::from(byte);
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }
}

/// Writes `value` as JSON with every object's keys in sorted order and no whitespace, so
/// the text does not depend on how the value was built.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(key) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The canonical JSON text of `template` (sorted keys, no whitespace).
pub(crate) fn canonical_json(template: &PodTemplateSpec) -> String {
    // A k8s-openapi type always serializes; a failure would only give a constant hash.
    canonical_value(&serde_json::to_value(template).unwrap_or(Value::Null))
}

/// The canonical JSON text of any value (sorted keys, no whitespace), also what the
/// ControllerRevision hashes are taken over (`controllers/revision.rs`, `controllers/history.rs`).
pub(crate) fn canonical_value(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// Maps each byte of `text` into the `SafeEncodeString` alphabet
/// (`rand.SafeEncodeString`), as every hash-named object's suffix is written.
pub(crate) fn safe_encode(text: &str) -> String {
    text.bytes()
        .map(|b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()]))
        .collect()
}

/// The `pod-template-hash` of `template` for a Deployment whose `status.collisionCount` is
/// `collision_count`; see the module docs.
pub(crate) fn pod_template_hash(
    template: &PodTemplateSpec,
    collision_count: Option<i32>,
) -> String {
    safe_hash(canonical_json(template).as_bytes(), collision_count)
}

/// FNV-32a over `bytes`, then `collision_count` when set, written in decimal and
/// `SafeEncodeString`-encoded: the hash behind [`pod_template_hash`] and behind
/// `pkg/controller/history`'s `HashControllerRevision`.
pub(crate) fn safe_hash(bytes: &[u8], collision_count: Option<i32>) -> String {
    let mut hasher = Fnv32a::new();
    hasher.write(bytes);
    if let Some(count) = collision_count {
        // Go writes the uint32 of the count; the bit pattern is the same for negatives.
        hasher.write(&count.to_le_bytes());
    }
    safe_encode(&hasher.0.to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::{
        api::core::v1::{Container, PodSpec},
        apimachinery::pkg::apis::meta::v1::ObjectMeta,
    };

    use super::*;

    fn template(image: &str) -> PodTemplateSpec {
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(BTreeMap::from([("app".to_owned(), "web".to_owned())])),
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

    #[test]
    fn fnv32a_matches_the_reference_vectors() {
        let hash = |s: &str| {
            let mut h = Fnv32a::new();
            h.write(s.as_bytes());
            h.0
        };
        assert_eq!(hash(""), 0x811c_9dc5);
        assert_eq!(hash("a"), 0xe40c_292c);
        assert_eq!(hash("foobar"), 0xbf9c_f968);
    }

    #[test]
    fn safe_encoding_maps_each_decimal_digit() {
        // '0' is byte 48, 48 % 27 = 21 -> '4'; '9' is 57 % 27 = 3 -> 'f'.
        assert_eq!(safe_encode("0"), "4");
        assert_eq!(safe_encode("9"), "f");
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
    }

    #[test]
    fn canonical_json_sorts_keys() {
        let json = canonical_json(&template("nginx:1"));
        assert!(json.starts_with(r#"{"metadata":{"labels":{"app":"web"}},"spec":"#));
        assert!(!json.contains(' '));
    }

    #[test]
    fn the_hash_is_stable_and_depends_on_template_and_collision_count() {
        let a = pod_template_hash(&template("nginx:1"), None);
        assert_eq!(a, pod_template_hash(&template("nginx:1"), None));
        assert!(!a.is_empty());
        assert!(a.bytes().all(|b| ALPHABET.contains(&b)));
        assert_ne!(a, pod_template_hash(&template("nginx:2"), None));
        assert_ne!(a, pod_template_hash(&template("nginx:1"), Some(1)));
        assert_ne!(
            pod_template_hash(&template("nginx:1"), Some(1)),
            pod_template_hash(&template("nginx:1"), Some(2))
        );
    }
}
