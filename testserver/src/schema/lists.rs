//! `x-kubernetes-list-type` / `x-kubernetes-list-map-keys` semantics on values
//! (apiextensions-apiserver `pkg/apiserver/schema/listtype/validation.go`): a `set` holds
//! no duplicate items, a `map` no two items with the same key tuple; `atomic` lists (and
//! `x-kubernetes-map-type`, which only changes how apply merges) accept anything.

use serde_json::{Map, Value};

use super::causes::{ErrorType, FieldError};
use super::model::{ListType, Node};

/// Checks the list `items` at `path` against the list type of `node`.
pub fn validate_list(node: &Node, items: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    match node.list_type {
        Some(ListType::Set) => {
            for (i, item) in items.iter().enumerate() {
                if items[..i].contains(item) {
                    errs.push(FieldError::new(
                        ErrorType::Duplicate,
                        &format!("{path}[{i}]"),
                        Some(item.clone()),
                        "",
                    ));
                }
            }
        }
        Some(ListType::Map) => {
            let key = |item: &Value| -> Option<Map<String, Value>> {
                let obj = item.as_object()?;
                Some(
                    node.list_map_keys
                        .iter()
                        .filter_map(|k| obj.get(k).map(|v| (k.clone(), v.clone())))
                        .collect(),
                )
            };
            let keys: Vec<Option<Map<String, Value>>> = items.iter().map(key).collect();
            for (i, k) in keys.iter().enumerate() {
                if let Some(k) = k
                    && keys[..i].iter().any(|o| o.as_ref() == Some(k))
                {
                    errs.push(FieldError::new(
                        ErrorType::Duplicate,
                        &format!("{path}[{i}]"),
                        Some(Value::Object(k.clone())),
                        "",
                    ));
                }
            }
        }
        Some(ListType::Atomic) | None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(schema: Value) -> Node {
        Node::parse(&schema, "").expect("schema parses")
    }

    /// listtype/validation.go: duplicates in a `set` are `Duplicate value` at the index.
    #[test]
    fn set_rejects_duplicates() {
        let n = node(
            json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}),
        );
        let mut errs = vec![];
        validate_list(
            &n,
            &[json!("a"), json!("b"), json!("a")],
            "spec.l",
            &mut errs,
        );
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].to_string(), "spec.l[2]: Duplicate value: \"a\"");
    }

    /// listtype/validation.go: map lists are keyed by `x-kubernetes-list-map-keys`.
    #[test]
    fn map_rejects_duplicate_keys_only() {
        let n = node(json!({"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "port"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}, "x": {"type": "string"}}}}));
        let mut errs = vec![];
        let items = [
            json!({"name": "a", "port": 1, "x": "1"}),
            json!({"name": "a", "port": 2}),
            json!({"name": "a", "port": 1, "x": "2"}),
        ];
        validate_list(&n, &items, "spec.ports", &mut errs);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "spec.ports[2]: Duplicate value: map[string]interface {}{\"name\":\"a\", \"port\":1}"
        );
    }

    /// Atomic lists accept duplicates.
    #[test]
    fn atomic_accepts_duplicates() {
        let n = node(json!({"type": "array", "items": {"type": "string"}}));
        let mut errs = vec![];
        validate_list(&n, &[json!("a"), json!("a")], "l", &mut errs);
        assert!(errs.is_empty());
    }
}
