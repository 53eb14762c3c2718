//! Pruning of unknown fields (apiextensions-apiserver `pkg/apiserver/schema/pruning/
//! algorithm.go`; CRD docs "Field pruning"): fields a structural schema does not specify
//! are dropped, except under `x-kubernetes-preserve-unknown-fields: true`; the root and
//! embedded resources keep `apiVersion`, `kind` and `metadata`, and their `metadata` is
//! ObjectMeta: its unknown fields are dropped too ([`super::objectmeta`]). The dropped paths
//! are what fieldValidation reports as `unknown field "..."`.

use serde_json::Value;

use super::{
    model::{Additional, Node},
    objectmeta,
};

/// Removes unknown fields from `value` (an object at a resource's root) in place; returns
/// their paths (`spec.foo`, `spec.items[0].bar`) as kube-apiserver orders them: the root's
/// `metadata` first (decoded into ObjectMeta before pruning), then the pruned fields in
/// document order, then the `metadata` of embedded resources (`objectmeta.Coerce` runs
/// after pruning).
pub fn prune(node: &Node, value: &mut Value) -> Vec<String> {
    let mut dropped = Vec::new();
    let mut embedded_meta = Vec::new();
    if let Some(meta) = value.get_mut("metadata") {
        prune_meta(meta, "metadata", &mut dropped);
    }
    walk(node, value, "", true, &mut dropped, &mut embedded_meta, 0);
    dropped.append(&mut embedded_meta);
    dropped
}

/// Removes unknown fields from `value`, a value of `node` below a resource's root (a
/// `default`, say); returns their paths relative to `value`.
pub fn prune_value(node: &Node, value: &mut Value) -> Vec<String> {
    let mut dropped = Vec::new();
    let mut embedded_meta = Vec::new();
    walk(node, value, "", false, &mut dropped, &mut embedded_meta, 0);
    dropped.append(&mut embedded_meta);
    dropped
}

/// Removes the fields ObjectMeta does not declare from `meta` (at `path`).
fn prune_meta(meta: &mut Value, path: &str, dropped: &mut Vec<String>) {
    if meta.is_object() {
        let mut ignored = Vec::new();
        walk(
            objectmeta::node(),
            meta,
            path,
            false,
            dropped,
            &mut ignored,
            0,
        );
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn walk(
    node: &Node,
    value: &mut Value,
    path: &str,
    root: bool,
    dropped: &mut Vec<String>,
    embedded_meta: &mut Vec<String>,
    depth: usize,
) {
    if depth > 256 {
        return;
    }
    match value {
        Value::Object(map) => {
            let keep_meta = root || node.embedded_resource;
            let mut gone = Vec::new();
            for (k, v) in map.iter_mut() {
                if keep_meta && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if !root && k == "metadata" {
                        prune_meta(v, &child(path, k), embedded_meta);
                    }
                    continue;
                }
                let p = child(path, k);
                match node.properties.get(k) {
                    Some(s) => walk(s, v, &p, false, dropped, embedded_meta, depth + 1),
                    None => match &node.additional {
                        Some(Additional::Schema(s)) => {
                            walk(s, v, &p, false, dropped, embedded_meta, depth + 1)
                        }
                        Some(Additional::Bool(true)) => {}
                        _ if node.preserve_unknown_fields => {}
                        _ => {
                            gone.push(k.clone());
                            dropped.push(p);
                        }
                    },
                }
            }
            for k in gone {
                map.remove(&k);
            }
        }
        Value::Array(items) => {
            if let Some(s) = &node.items {
                for (i, it) in items.iter_mut().enumerate() {
                    let p = format!("{path}[{i}]");
                    walk(s, it, &p, false, dropped, embedded_meta, depth + 1);
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

    /// pruning/algorithm.go + CRD docs "Field pruning": unknown fields go, known stay, the
    /// root's apiVersion/kind/metadata are kept, arrays are walked.
    #[test]
    fn prunes_unknown_fields_with_paths() {
        let n = node(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "a": {"type": "string"},
            "l": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}}}}}}),
        );
        let mut v = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"},
            "spec": {"a": "1", "b": 2, "l": [{"x": "1", "y": 2}]}, "extra": true});
        let dropped = prune(&n, &mut v);
        assert_eq!(dropped, vec!["extra", "spec.b", "spec.l[0].y"]);
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"a": "1", "l": [{"x": "1"}]}})
        );
    }

    /// CRD docs "Controlling pruning": `x-kubernetes-preserve-unknown-fields` keeps unknown
    /// fields but specified properties below it are still pruned.
    #[test]
    fn preserve_unknown_fields_keeps_but_still_prunes_below_specified() {
        let n = node(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}}}),
        );
        let mut v = json!({"spec": {"free": {"any": 1}, "known": {"a": "x", "b": "y"}}});
        let dropped = prune(&n, &mut v);
        assert_eq!(dropped, vec!["spec.known.b"]);
        assert_eq!(v["spec"]["free"], json!({"any": 1}));
    }

    /// CRD docs "RawExtension"/embedded resources: apiVersion/kind/metadata kept inside
    /// `x-kubernetes-embedded-resource` objects; additionalProperties maps are walked.
    #[test]
    fn embedded_resource_and_maps() {
        let n = node(json!({"type": "object", "properties": {
            "tpl": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"k": {"type": "string"}}}}}}));
        let mut v = json!({"tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}, "junk": 1},
            "m": {"one": {"k": "v", "z": 1}}});
        assert_eq!(prune(&n, &mut v), vec!["m.one.z", "tpl.junk"]);
    }
}
