//! [`extract()`]: the apply configuration one field manager owns, from `managedFields`
//! (client-go's `ExtractDeployment`, apimachinery's `managedfields.ExtractInto`).
//!
//! Every write records, per manager, the fields it set as a `fieldsV1` tree: `f:<field>`
//! for a map field, `k:{"name":"x"}` for the element of an associative list with that key,
//! `v:<value>` for an element of a set, `i:<index>` for a list position, `.` for the node
//! itself. Extracting walks the object and the manager's tree together and keeps what the
//! tree names; `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` are always
//! set, as client-go's extractors do, so the result can be applied as is.

use kube_core::Resource;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};

/// Why [`extract()`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The object could not be serialized.
    #[error("cannot serialize the object: {0}")]
    Serialize(#[source] serde_json::Error),
    /// The owned fields do not fit the configuration type (it is for another type).
    #[error("the owned fields do not fit the apply configuration: {0}")]
    Deserialize(#[source] serde_json::Error),
}

/// The apply configuration holding exactly the fields `field_manager` owns through apply
/// in `obj` (on `subresource`: `""` for the object, `"status"` for its status), plus its
/// identity (`apiVersion`, `kind`, name, namespace). A manager that never applied gets
/// the identity alone.
///
/// Applying the result unchanged as the same manager is a no-op; changing it and applying
/// it changes only that manager's fields.
pub fn extract<K, C>(obj: &K, field_manager: &str, subresource: &str) -> Result<C, ExtractError>
where
    K: Resource + Serialize,
    K::DynamicType: Default,
    C: DeserializeOwned,
{
    let dt = K::DynamicType::default();
    let value = serde_json::to_value(obj).map_err(ExtractError::Serialize)?;
    let tree = obj
        .meta()
        .managed_fields
        .iter()
        .flatten()
        .filter(|e| {
            e.manager.as_deref() == Some(field_manager)
                && e.operation.as_deref() == Some("Apply")
                && e.subresource.as_deref().unwrap_or_default() == subresource
        })
        .find_map(|e| e.fields_v1.as_ref().map(|f| &f.0));
    let mut out = match tree {
        Some(tree) => owned_fields(&value, tree),
        None => Value::Object(Map::new()),
    };
    if let Value::Object(map) = &mut out {
        map.insert("apiVersion".into(), K::api_version(&dt).into_owned().into());
        map.insert("kind".into(), K::kind(&dt).into_owned().into());
        let meta = map
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            if let Some(name) = &obj.meta().name {
                meta.insert("name".into(), name.clone().into());
            }
            if let Some(ns) = &obj.meta().namespace {
                meta.insert("namespace".into(), ns.clone().into());
            }
        }
    }
    serde_json::from_value(out).map_err(ExtractError::Deserialize)
}

/// The part of `value` a `fieldsV1` tree names (see the module docs for the encoding).
/// Parts of the tree the value lacks are skipped; a malformed key is ignored.
pub fn owned_fields(value: &Value, tree: &Value) -> Value {
    match tree.as_object() {
        Some(node) => select(value, node),
        None => value.clone(),
    }
}

/// The owned part of `value` below the tree node `node`.
fn select(value: &Value, node: &Map<String, Value>) -> Value {
    let has_children = node.keys().any(|k| k != ".");
    match value {
        // A leaf (`f:replicas: {}`), or an atomic map or list owned as a whole.
        _ if node.is_empty() => value.clone(),
        // The node itself but none of its members.
        Value::Object(_) if !has_children => Value::Object(Map::new()),
        Value::Array(_) if !has_children => Value::Array(Vec::new()),
        Value::Object(fields) => Value::Object(
            node.iter()
                .filter_map(|(k, child)| {
                    let name = k.strip_prefix("f:")?;
                    let v = fields.get(name)?;
                    Some((name.to_owned(), select(v, child.as_object()?)))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| element(i, item, node))
                .collect(),
        ),
        _ => value.clone(),
    }
}

/// The owned part of list element `item` (at `index`), if the tree names it.
fn element(index: usize, item: &Value, node: &Map<String, Value>) -> Option<Value> {
    node.iter().find_map(|(k, child)| {
        let child = child.as_object()?;
        if let Some(key) = k.strip_prefix("k:") {
            let Ok(Value::Object(key)) = serde_json::from_str::<Value>(key) else {
                return None;
            };
            let matches = key.iter().all(|(f, want)| item.get(f) == Some(want));
            if !matches {
                return None;
            }
            // The key fields identify the element: always part of it.
            let mut owned = match select(item, child) {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            for (f, v) in key {
                owned.entry(f).or_insert(v);
            }
            Some(Value::Object(owned))
        } else if let Some(v) = k.strip_prefix("v:") {
            let v: Value = serde_json::from_str(v).ok()?;
            (item == &v).then(|| item.clone())
        } else if let Some(i) = k.strip_prefix("i:") {
            (i.parse::<usize>().ok()? == index).then(|| select(item, child))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // The trees below are kube-apiserver's own encoding, as `kubectl get -o yaml
    // --show-managed-fields` prints it (apimachinery
    // `pkg/util/managedfields/internal/fieldmanager.go`, `fieldpath/serialize.go`).
    #[test]
    fn keeps_exactly_what_the_tree_names() {
        let obj = json!({
            "metadata": {"name": "web", "labels": {"app": "web", "team": "a"}},
            "spec": {
                "replicas": 3,
                "paused": false,
                "template": {"spec": {"containers": [
                    {"name": "app", "image": "nginx:1", "ports": [{"containerPort": 80}]},
                    {"name": "sidecar", "image": "envoy"}
                ]}}
            }
        });
        let tree = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"app\"}": {".": {}, "f:image": {}}
                }}}
            }
        });
        assert_eq!(
            owned_fields(&obj, &tree),
            json!({
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "replicas": 3,
                    "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}
                }
            })
        );
    }

    #[test]
    fn sets_positions_and_bare_nodes() {
        let obj = json!({"finalizers": ["a", "b"], "args": ["x", "y"], "m": {"k": 1}});
        let tree = json!({
            "f:finalizers": {".": {}, "v:\"b\"": {}},
            "f:args": {"i:1": {}},
            "f:m": {".": {}},
            "f:missing": {}
        });
        assert_eq!(
            owned_fields(&obj, &tree),
            json!({"finalizers": ["b"], "args": ["y"], "m": {}})
        );
    }

    #[test]
    fn malformed_keys_select_nothing() {
        let obj = json!({"l": [{"name": "a"}]});
        let tree = json!({"f:l": {"k:{not json": {}, "x:1": {}}});
        assert_eq!(owned_fields(&obj, &tree), json!({"l": []}));
    }
}
