//! Object metadata helpers over `serde_json::Value`: names, timestamps, uids, validation.

use serde_json::{Map, Value};

pub use crate::validation::validate_labels;

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
    string_list(obj, "/metadata/finalizers")
}

/// The strings of the array at JSON `pointer` (non-strings skipped; empty when absent).
pub fn string_list(obj: &Value, pointer: &str) -> Vec<String> {
    obj.pointer(pointer)
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

/// Drops empty `labels`, `annotations`, `finalizers`, `ownerReferences` and
/// `managedFields` from `metadata`, as kube-apiserver's round trip through the typed
/// `ObjectMeta` does (every one is `omitempty`; custom resources go through it too, in
/// apiextensions-apiserver's `objectmeta.Coerce`). A strategic merge patch of
/// `{"metadata":{"annotations":{}}}` (what `kubectl diff` sends) leaves no trace.
pub fn drop_empty_collections(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "labels",
            "annotations",
            "finalizers",
            "ownerReferences",
            "managedFields",
        ] {
            let empty = match m.get(field) {
                Some(Value::Object(o)) => o.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                Some(Value::Null) => true,
                _ => false,
            };
            if empty {
                m.remove(field);
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_metadata_collections_are_dropped_and_others_kept() {
        let mut obj = serde_json::json!({"metadata": {"name": "a", "annotations": {}, "labels": {"x": "y"},
                             "finalizers": [], "ownerReferences": null}, "data": {}});
        drop_empty_collections(&mut obj);
        assert_eq!(
            obj,
            serde_json::json!({"metadata": {"name": "a", "labels": {"x": "y"}}, "data": {}})
        );
    }
}
