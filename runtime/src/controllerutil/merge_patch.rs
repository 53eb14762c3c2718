//! The two-way JSON merge patch (RFC 7386) between two versions of an object, and
//! apimachinery's semantic equality on JSON, which [`super::create_or_update()`] and
//! [`super::create_or_patch()`] compare with.
//!
//! Equality follows `equality.Semantic.DeepEqual`, whose forked `reflect.DeepEqual`
//! (apimachinery `third_party/forked/golang/reflect/deep_equal.go`) treats a nil and an
//! empty slice or map as equal: here an absent field, `null`, `{}` and `[]` are all "unset",
//! since the API server drops empty collections and serde writes `None` as absent. Without
//! it a mutate function that leaves `labels: Some({})` would write on every call.

use serde_json::{Map, Value};

/// `value` with every `null`, `{}` and `[]` member of an object removed, recursively (an
/// emptied object is then removed too). Array elements are kept in place.
pub(crate) fn normalized(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter_map(|(k, v)| {
                    let v = normalized(v);
                    (!is_unset(&v)).then(|| (k.clone(), v))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

fn is_unset(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Whether `a` and `b` are equal once unset members are dropped (see the module docs).
pub(crate) fn semantically_equal(a: &Value, b: &Value) -> bool {
    normalized(a) == normalized(b)
}

/// The JSON merge patch that turns `before` into `after` (both compared normalized): an
/// object of the changed members, `null` for removed ones, nested objects diffed member by
/// member and anything else (arrays included, as RFC 7386 has no list merging) replaced
/// whole. Empty (`{}`) when nothing changed.
pub(crate) fn diff(before: &Value, after: &Value) -> Map<String, Value> {
    match (normalized(before), normalized(after)) {
        (Value::Object(b), Value::Object(a)) => diff_objects(&b, &a),
        // Not objects: nothing a merge patch of an object could express member-wise.
        _ => Map::new(),
    }
}

fn diff_objects(before: &Map<String, Value>, after: &Map<String, Value>) -> Map<String, Value> {
    let mut patch = Map::new();
    for key in before.keys().filter(|k| !after.contains_key(*k)) {
        patch.insert(key.clone(), Value::Null);
    }
    for (key, new) in after {
        match (before.get(key), new) {
            (Some(old), new) if old == new => {}
            (Some(Value::Object(old)), Value::Object(new)) => {
                patch.insert(key.clone(), Value::Object(diff_objects(old, new)));
            }
            _ => {
                patch.insert(key.clone(), new.clone());
            }
        }
    }
    patch
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// RFC 7386 section 3's example, read backwards: the patch that produced the target.
    #[test]
    fn the_rfc_example() {
        let before = json!({"title": "Goodbye!", "author": {"givenName": "John",
            "familyName": "Doe"}, "tags": ["example", "sample"], "content": "x"});
        let after = json!({"title": "Hello!", "author": {"givenName": "John"},
            "tags": ["example"], "content": "x", "phoneNumber": "+01-123-456-7890"});
        assert_eq!(
            Value::Object(diff(&before, &after)),
            json!({"title": "Hello!", "author": {"familyName": null}, "tags": ["example"],
                "phoneNumber": "+01-123-456-7890"})
        );
    }

    #[test]
    fn unset_members_are_equal_and_absent_from_patches() {
        let before = json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        let after = json!({"metadata": {"name": "a", "labels": {}, "finalizers": []},
            "data": {"k": "v"}, "binaryData": null});
        assert!(semantically_equal(&before, &after));
        assert!(diff(&before, &after).is_empty());
        let cleared = json!({"metadata": {"name": "a"}, "data": {}});
        assert_eq!(
            Value::Object(diff(&before, &cleared)),
            json!({"data": null})
        );
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0i64..4).prop_map(Value::from),
            "[ab]{0,2}".prop_map(Value::String),
        ]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map("[abc]", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn object() -> impl Strategy<Value = Value> {
        prop::collection::btree_map("[abc]", json_value(), 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect()))
    }

    proptest! {
        /// Applying the patch with an RFC 7386 implementation (the json-patch crate's, as
        /// the API server applies merge patches) turns `before` into `after`, up to unset
        /// members.
        #[test]
        fn the_patch_turns_before_into_after(before in object(), after in object()) {
            let patch = Value::Object(diff(&before, &after));
            let mut patched = before.clone();
            json_patch::merge(&mut patched, &patch);
            prop_assert_eq!(normalized(&patched), normalized(&after));
            prop_assert_eq!(diff(&before, &after).is_empty(), semantically_equal(&before, &after));
        }
    }
}
