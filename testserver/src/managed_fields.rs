//! Field ownership bookkeeping (`metadata.managedFields`), below the engine: leaf field
//! paths of an object, their `FieldsV1` encoding (`f:spec`, `k:{"name":"app"}`), and the
//! `Update` entries every write records for its field manager (apimachinery's
//! `fieldmanager`). Server-side apply (`crate::apply`) builds on the same entries.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::{meta, patch::merge_key};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathElem {
    /// A map field (`f:name`).
    Field(String),
    /// A list element identified by its merge key (`k:{"name":"x"}`).
    Key(String),
}

/// A leaf field path.
pub type FieldPath = Vec<PathElem>;

fn skip_top(path: &[PathElem]) -> bool {
    match path {
        [PathElem::Field(f)] if f == "apiVersion" || f == "kind" => true,
        [PathElem::Field(m), PathElem::Field(f), ..] if m == "metadata" => !matches!(
            f.as_str(),
            "labels" | "annotations" | "finalizers" | "ownerReferences"
        ),
        [PathElem::Field(m)] if m == "metadata" => true,
        _ => false,
    }
}

/// The leaf paths set in `obj`. Lists of objects with a known merge key are associative
/// (only for built-in types); all other lists are atomic.
pub fn leaves(obj: &Value, builtin: bool) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    walk(obj, &mut Vec::new(), builtin, &mut out);
    out.retain(|p| !skip_top(p));
    out
}

fn walk(v: &Value, prefix: &mut FieldPath, builtin: bool, out: &mut BTreeSet<FieldPath>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                prefix.push(PathElem::Field(k.clone()));
                walk(child, prefix, builtin, out);
                prefix.pop();
            }
        }
        Value::Array(items) if builtin && !items.is_empty() => {
            let field = match prefix.last() {
                Some(PathElem::Field(f)) => f.clone(),
                _ => String::new(),
            };
            let key = merge_key(&field, items.first())
                .filter(|k| items.iter().all(|i| i.get(*k).is_some()));
            match key {
                Some(key) => {
                    for item in items {
                        let id = json!({ key: item.get(key).cloned().unwrap_or(Value::Null) });
                        prefix.push(PathElem::Key(id.to_string()));
                        walk(item, prefix, builtin, out);
                        prefix.pop();
                    }
                }
                None => {
                    out.insert(prefix.clone());
                }
            }
        }
        _ => {
            out.insert(prefix.clone());
        }
    }
}

/// The `fieldsV1` tree for a set of paths.
pub fn to_fields_v1(paths: &BTreeSet<FieldPath>) -> Value {
    let mut root = Map::new();
    for path in paths {
        let mut cur = &mut root;
        for elem in path {
            let (name, is_key) = match elem {
                PathElem::Field(f) => (format!("f:{f}"), false),
                PathElem::Key(k) => (format!("k:{k}"), true),
            };
            let entry = cur.entry(name).or_insert_with(|| Value::Object(Map::new()));
            let map = meta::ensure_object(entry);
            if is_key {
                map.insert(".".into(), json!({}));
            }
            cur = map;
        }
    }
    Value::Object(root)
}

/// The set of leaf paths in a `fieldsV1` tree.
pub fn from_fields_v1(tree: &Value) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    fn rec(node: &Value, prefix: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
        let Some(map) = node.as_object() else {
            return;
        };
        let children: Vec<_> = map.iter().filter(|(k, _)| *k != ".").collect();
        if children.is_empty() && !prefix.is_empty() {
            out.insert(prefix.clone());
            return;
        }
        for (k, child) in children {
            let elem = if let Some(f) = k.strip_prefix("f:") {
                PathElem::Field(f.to_string())
            } else if let Some(key) = k.strip_prefix("k:") {
                PathElem::Key(key.to_string())
            } else {
                continue;
            };
            prefix.push(elem);
            rec(child, prefix, out);
            prefix.pop();
        }
    }
    rec(tree, &mut Vec::new(), &mut out);
    out
}

/// The value at `path` in `obj`.
pub fn value_at<'a>(obj: &'a Value, path: &[PathElem]) -> Option<&'a Value> {
    let mut cur = obj;
    for elem in path {
        cur = match elem {
            PathElem::Field(f) => cur.get(f)?,
            PathElem::Key(k) => {
                let key: Value = serde_json::from_str(k).ok()?;
                let key = key.as_object()?;
                cur.as_array()?
                    .iter()
                    .find(|item| key.iter().all(|(kk, kv)| item.get(kk) == Some(kv)))?
            }
        };
    }
    Some(cur)
}

pub(crate) fn remove_at(obj: &mut Value, path: &[PathElem]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = obj;
    for elem in parents {
        let next = match elem {
            PathElem::Field(f) => cur.get_mut(f),
            PathElem::Key(k) => {
                let Ok(Value::Object(key)) = serde_json::from_str::<Value>(k) else {
                    return;
                };
                cur.as_array_mut().and_then(|a| {
                    a.iter_mut()
                        .find(|item| key.iter().all(|(kk, kv)| item.get(kk) == Some(kv)))
                })
            }
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    match last {
        PathElem::Field(f) => {
            if let Some(m) = cur.as_object_mut() {
                m.remove(f);
            }
        }
        PathElem::Key(k) => {
            if let (Ok(Value::Object(key)), Some(a)) =
                (serde_json::from_str::<Value>(k), cur.as_array_mut())
            {
                a.retain(|item| !key.iter().all(|(kk, kv)| item.get(kk) == Some(kv)));
            }
        }
    }
}

/// One `managedFields` entry, decoded.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The entry as stored.
    pub(crate) raw: Value,
    /// `manager`.
    pub(crate) manager: String,
    /// `operation`: `Apply` or `Update`.
    pub(crate) operation: String,
    /// `subresource`, `""` for the main resource.
    pub(crate) subresource: String,
    /// The owned leaf paths.
    pub(crate) paths: BTreeSet<FieldPath>,
}

/// The decoded `managedFields` entries of `obj`.
pub(crate) fn entries(obj: &Value) -> Vec<Entry> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|e| Entry {
                    raw: e.clone(),
                    manager: e
                        .get("manager")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .into(),
                    operation: e
                        .get("operation")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .into(),
                    subresource: e
                        .get("subresource")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .into(),
                    paths: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A `managedFields` entry for `manager` owning `paths`.
pub(crate) fn entry_value(
    manager: &str,
    operation: &str,
    api_version: &str,
    subresource: &str,
    paths: &BTreeSet<FieldPath>,
) -> Value {
    let mut e = json!({
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": crate::clock::now_rfc3339(),
        "fieldsType": "FieldsV1",
        "fieldsV1": to_fields_v1(paths),
    });
    if !subresource.is_empty() {
        e["subresource"] = json!(subresource);
    }
    e
}

/// Stores `list` as `metadata.managedFields` (removing the field when empty).
pub(crate) fn write_entries(obj: &mut Value, list: Vec<Value>) {
    let m = meta::meta_mut(obj);
    if list.is_empty() {
        m.remove("managedFields");
    } else {
        m.insert("managedFields".into(), Value::Array(list));
    }
}

/// Records an `Update` (or create) by `manager`: it takes ownership of the fields that
/// changed between `old` and `new`, which other managers lose.
pub fn record_update(
    new: &mut Value,
    old: Option<&Value>,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
    builtin: bool,
) {
    let sub = subresource.unwrap_or_default();
    let new_leaves = leaves(new, builtin);
    let changed: BTreeSet<FieldPath> = new_leaves
        .iter()
        .filter(|p| old.is_none_or(|o| value_at(o, p) != value_at(new, p)))
        .filter(|p| match sub {
            "status" => p.first() == Some(&PathElem::Field("status".into())),
            _ => true,
        })
        .cloned()
        .collect();
    let mut list = Vec::new();
    let mut mine: BTreeSet<FieldPath> = BTreeSet::new();
    for e in entries(new) {
        if e.manager == manager && e.operation == "Update" && e.subresource == sub {
            mine = e.paths.intersection(&new_leaves).cloned().collect();
            continue;
        }
        let kept: BTreeSet<FieldPath> = e.paths.difference(&changed).cloned().collect();
        if kept.is_empty() {
            continue;
        }
        if kept.len() == e.paths.len() {
            list.push(e.raw);
        } else {
            let mut raw = e.raw.clone();
            raw["fieldsV1"] = to_fields_v1(&kept);
            list.push(raw);
        }
    }
    mine.extend(changed);
    if !mine.is_empty() {
        list.push(entry_value(manager, "Update", api_version, sub, &mine));
    }
    write_entries(new, list);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_v1_round_trips_with_keys() {
        let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        let paths = leaves(&obj, true);
        let tree = to_fields_v1(&paths);
        assert!(tree["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]["f:image"].is_object());
        assert_eq!(from_fields_v1(&tree), paths);
        assert!(!paths.iter().any(|p| p
            == &vec![
                PathElem::Field("metadata".into()),
                PathElem::Field("name".into())
            ]));
    }

    #[test]
    fn an_update_takes_the_changed_fields_from_other_managers() {
        let mut obj = json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
        record_update(&mut obj, None, "one", "v1", None, true);
        let old = obj.clone();
        obj["data"]["b"] = json!("3");
        record_update(&mut obj, Some(&old), "two", "v1", None, true);
        let list = entries(&obj);
        assert_eq!(list.len(), 2);
        let one = list.iter().find(|e| e.manager == "one").expect("one");
        let two = list.iter().find(|e| e.manager == "two").expect("two");
        let b = vec![PathElem::Field("data".into()), PathElem::Field("b".into())];
        assert!(!one.paths.contains(&b));
        assert!(two.paths.contains(&b));
        assert_eq!(two.operation, "Update");
    }
}
