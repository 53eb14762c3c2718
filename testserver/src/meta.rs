//! Object metadata helpers over `serde_json::Value`: names, timestamps, uids, validation.

use rand::Rng;
use serde_json::{Map, Value};

use crate::{errors::Cause, registry::NameRule};

/// `metadata.name`, or `""`.
pub fn name(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `metadata.namespace`, or `""`.
pub fn namespace(obj: &Value) -> &str {
    obj.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `metadata.uid`, or `""`.
pub fn uid(obj: &Value) -> &str {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `metadata.resourceVersion`, or `""`.
pub fn resource_version(obj: &Value) -> &str {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `metadata.finalizers`.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `metadata.deletionTimestamp` is set.
pub fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// `metadata`, created as an empty object when missing or not an object.
pub fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    let root = ensure_object(obj);
    ensure_object(
        root.entry("metadata")
            .or_insert_with(|| Value::Object(Map::new())),
    )
}

/// Makes `v` an object (replacing anything else) and returns its map.
pub fn ensure_object(v: &mut Value) -> &mut Map<String, Value> {
    if !v.is_object() {
        *v = Value::Object(Map::new());
    }
    match v {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}

/// The owner uids in `metadata.ownerReferences`.
pub fn owner_uids(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Now, as an RFC 3339 timestamp with second precision (`metav1.Time`).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A fresh random uid (UUID v4).
pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The five random characters kube-apiserver appends to `generateName`.
pub fn generate_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// RFC 1123 subdomain.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(|part| is_label_chars(part, 253))
}

/// RFC 1123 label.
pub fn is_dns1123_label(s: &str) -> bool {
    is_label_chars(s, 63)
}

fn is_label_chars(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Validates `name` under `rule`; returns the 422 causes.
pub fn validate_name(name: &str, rule: NameRule, field: &str) -> Vec<Cause> {
    let ok = match rule {
        NameRule::Subdomain => is_dns1123_subdomain(name),
        NameRule::Label => is_dns1123_label(name),
        NameRule::PathSegment => {
            !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '%'])
        }
    };
    if ok {
        Vec::new()
    } else {
        let msg = match rule {
            NameRule::Subdomain => format!(
                "Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
            ),
            NameRule::Label => format!(
                "Invalid value: \"{name}\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
            ),
            NameRule::PathSegment => {
                format!("Invalid value: \"{name}\": may not contain '/' or '%'")
            }
        };
        vec![Cause::invalid(field, msg)]
    }
}

/// Validates labels and annotations keys/values; returns the 422 causes.
pub fn validate_labels(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(labels) = obj.pointer("/metadata/labels") {
        match labels.as_object() {
            Some(map) => {
                for (k, v) in map {
                    if crate::selectors::validate_key(k).is_err() {
                        causes.push(Cause::invalid(
                            "metadata.labels",
                            format!("Invalid value: \"{k}\": name part must be a valid label key"),
                        ));
                    }
                    match v.as_str() {
                        Some(s) if crate::selectors::validate_value(s).is_ok() => {}
                        _ => causes.push(Cause::invalid(
                            "metadata.labels",
                            format!("Invalid value: {v}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'"),
                        )),
                    }
                }
            }
            None if labels.is_null() => {}
            None => causes.push(Cause::invalid("metadata.labels", "must be an object")),
        }
    }
    if let Some(ann) = obj.pointer("/metadata/annotations") {
        let ok = ann.is_null()
            || ann
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_string));
        if !ok {
            causes.push(Cause::invalid(
                "metadata.annotations",
                "must be a map of strings",
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomain_and_label_rules() {
        assert!(is_dns1123_subdomain("a.b-c.d"));
        assert!(!is_dns1123_subdomain("A"));
        assert!(!is_dns1123_subdomain("a..b"));
        assert!(is_dns1123_label("abc-1"));
        assert!(!is_dns1123_label("a.b"));
        assert!(!validate_name("x/y", NameRule::PathSegment, "metadata.name").is_empty());
    }

    #[test]
    fn generate_suffix_is_five_safe_chars() {
        let s = generate_suffix();
        assert_eq!(s.len(), 5);
        assert!(is_dns1123_label(&s));
    }
}
