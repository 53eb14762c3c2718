//! Defaulting (apiextensions-apiserver `pkg/apiserver/schema/defaulting/algorithm.go`;
//! CRD docs "Defaulting" and "Defaulting and Nullable"): a property with a `default` that
//! is absent — or null without `nullable: true` — gets a copy of the default, then the
//! walk continues into it (so defaults inside defaults and inside array items apply).
//! Nulls of non-nullable properties without a default are pruned first
//! (`PruneNonNullableNullsWithoutDefaults`).

use serde_json::Value;

use super::{
    causes::FieldError,
    model::{Additional, Node},
    prune, validate,
};

/// The `default`s of a schema checked against the schema, as apiextensions-apiserver
/// admits a CRD (`pkg/apiserver/schema/defaulting/validation.go` `ValidateDefaults`, with
/// `requirePrunedDefaults` as for apiextensions.k8s.io/v1): a default with fields its
/// node does not specify is `must not have unknown fields`; otherwise it is validated by
/// its node's value validations (type, enum, pattern, bounds, `required`, ...) as a
/// custom resource's value is, the errors at `<node>.default[.<field>]`. A default is
/// validated as written: the defaults below it are not applied first (kube-apiserver does
/// not either). `path` names `node` (`spec.versions[0].schema.openAPIV3Schema`).
pub fn validate_defaults(node: &Node, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    check_defaults(node, path, &mut errs, 0);
    errs
}

fn check_defaults(node: &Node, path: &str, errs: &mut Vec<FieldError>, depth: usize) {
    if depth > 128 || !node.defaults_below {
        return;
    }
    if let Some(default) = &node.default {
        let at = format!("{path}.default");
        let mut pruned = default.clone();
        if !prune::prune_value(node, &mut pruned).is_empty() {
            errs.push(FieldError::invalid(
                &at,
                default,
                "must not have unknown fields",
            ));
        } else {
            let mut found = Vec::new();
            validate::validate(node, default, "", &mut found);
            errs.extend(found.into_iter().map(|mut e| {
                e.field = match e.field.as_str() {
                    "" => at.clone(),
                    f if f.starts_with('[') => format!("{at}{f}"),
                    f => format!("{at}.{f}"),
                };
                e
            }));
        }
    }
    for (k, p) in &node.properties {
        check_defaults(p, &format!("{path}.properties[{k}]"), errs, depth + 1);
    }
    if let Some(items) = node.items.as_deref() {
        check_defaults(items, &format!("{path}.items"), errs, depth + 1);
    }
    if let Some(Additional::Schema(a)) = &node.additional {
        check_defaults(a, &format!("{path}.additionalProperties"), errs, depth + 1);
    }
}

/// Applies `node`'s defaults to `value` in place.
pub fn apply_defaults(node: &Node, value: &mut Value) {
    prune_nulls(node, value, 0);
    walk(node, value, 0);
}

/// Whether `node` (or anything below it) declares a `default`.
pub fn declares_defaults(node: &Node) -> bool {
    node.defaults_below
}

/// Whether a read must add defaults to `value`: a property with a default is missing (or
/// null without `nullable`). Reads only, and only into subtrees whose schema has defaults,
/// so an object already defaulted costs a partial walk and no copy. (Nulls that
/// [`apply_defaults`] would prune were pruned when the object was written.)
pub fn needs_defaults(node: &Node, value: &Value) -> bool {
    needs(node, value, 0)
}

fn needs(node: &Node, value: &Value, depth: usize) -> bool {
    if depth > 256 || !node.defaults_below {
        return false;
    }
    match value {
        Value::Object(map) => {
            // Only properties whose schema has defaults below are looked at.
            let known = node.properties.iter().filter(|(_, p)| p.defaults_below);
            for (k, prop) in known {
                let found = match map.get(k) {
                    None => prop.default.is_some(),
                    Some(Value::Null) => prop.default.is_some() && !prop.nullable,
                    Some(v) => needs(prop, v, depth + 1),
                };
                if found {
                    return true;
                }
            }
            match &node.additional {
                Some(Additional::Schema(s)) if s.defaults_below => map
                    .iter()
                    .filter(|(k, _)| !node.properties.contains_key(*k))
                    .any(|(_, v)| needs(s, v, depth + 1)),
                _ => false,
            }
        }
        Value::Array(items) => node
            .items
            .as_deref()
            .is_some_and(|s| items.iter().any(|it| needs(s, it, depth + 1))),
        _ => false,
    }
}

fn next<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    node.properties.get(key).or(match &node.additional {
        Some(Additional::Schema(s)) => Some(s),
        _ => None,
    })
}

fn prune_nulls(node: &Node, value: &mut Value, depth: usize) {
    if depth > 256 {
        return;
    }
    match value {
        Value::Object(map) => {
            map.retain(|k, v| {
                !(v.is_null() && next(node, k).is_some_and(|s| !s.nullable && s.default.is_none()))
            });
            for (k, v) in map.iter_mut() {
                if let Some(s) = next(node, k) {
                    prune_nulls(s, v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = &node.items {
                for it in items {
                    prune_nulls(s, it, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn walk(node: &Node, value: &mut Value, depth: usize) {
    if depth > 256 {
        return;
    }
    match value {
        Value::Object(map) => {
            for (k, prop) in &node.properties {
                let Some(default) = &prop.default else {
                    continue;
                };
                let missing = match map.get(k) {
                    None => true,
                    Some(Value::Null) => !prop.nullable,
                    Some(_) => false,
                };
                if missing {
                    map.insert(k.clone(), default.clone());
                }
            }
            for (k, v) in map.iter_mut() {
                if let Some(s) = next(node, k) {
                    walk(s, v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = &node.items {
                for it in items {
                    walk(s, it, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(schema: Value) -> Node {
        Node::parse(&schema, "").expect("schema parses")
    }

    /// CRD docs "Defaulting": defaults apply to missing fields, recursively, inside array
    /// items, and a defaulted object gets its own properties' defaults.
    #[test]
    fn defaults_missing_fields_items_and_nested() {
        let n = node(
            json!({"type": "object", "properties": {"spec": {"type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "strategy": {"type": "object", "default": {}, "properties": {"kind": {"type": "string", "default": "Rolling"}}},
            "ports": {"type": "array", "items": {"type": "object", "properties": {"protocol": {"type": "string", "default": "TCP"}}}}}}}}),
        );
        let mut v = json!({"spec": {"replicas": 3, "ports": [{"port": 80}, {"protocol": "UDP"}]}});
        apply_defaults(&n, &mut v);
        assert_eq!(
            v,
            json!({"spec": {"replicas": 3, "strategy": {"kind": "Rolling"},
            "ports": [{"port": 80, "protocol": "TCP"}, {"protocol": "UDP"}]}})
        );
        let mut empty = json!({});
        apply_defaults(&n, &mut empty);
        assert_eq!(
            empty,
            json!({"spec": {"replicas": 1, "strategy": {"kind": "Rolling"}}})
        );
    }

    /// The read path's check agrees with defaulting: true exactly when defaulting adds a
    /// value, so already-defaulted objects are served without a copy.
    #[test]
    fn needs_defaults_agrees_with_apply_defaults() {
        let n = node(json!({"type": "object", "properties": {
            "a": {"type": "string", "default": "x"},
            "b": {"type": "string"},
            "l": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "string", "default": "TCP"}}}}}}));
        assert!(declares_defaults(&n));
        for v in [
            json!({}),
            json!({"a": "y"}),
            json!({"a": "y", "l": [{"p": "UDP"}, {}]}),
            json!({"a": "y", "l": [{"p": "UDP"}]}),
            json!({"a": null}),
        ] {
            let mut d = v.clone();
            apply_defaults(&n, &mut d);
            assert_eq!(needs_defaults(&n, &v), d != v, "{v}");
        }
        assert!(!declares_defaults(&node(
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        )));
    }

    /// CRD docs "Defaulting and Nullable": null of a non-nullable field is defaulted if it
    /// has a default, pruned if not; a nullable field keeps its null.
    #[test]
    fn nulls_and_nullable() {
        let n = node(json!({"type": "object", "properties": {
            "a": {"type": "string", "default": "x"},
            "b": {"type": "string"},
            "c": {"type": "string", "nullable": true, "default": "y"}}}));
        let mut v = json!({"a": null, "b": null, "c": null});
        apply_defaults(&n, &mut v);
        assert_eq!(v, json!({"a": "x", "c": null}));
    }
}
