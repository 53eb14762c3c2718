//! Field ownership (`metadata.managedFields`) and server-side apply.
//!
//! Ownership is tracked per manager as a set of leaf field paths, stored in the
//! `FieldsV1` format (`f:spec`, `k:{"name":"app"}`). Apply merges the manager's intent into
//! the live object, removes fields the manager owned before and no longer sets, and
//! reports a 409 conflict when it would change a value another manager owns (unless
//! `force`).

use std::{collections::BTreeSet, sync::Arc};

use serde_json::{Map, Value, json};

use crate::{
    engine::{Engine, Target, WriteOptions},
    errors::{ApiError, ApiResult, Cause, Reason},
    meta,
    patch::merge_key,
};

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

fn remove_at(obj: &mut Value, path: &[PathElem]) {
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

#[derive(Debug, Clone)]
struct Entry {
    raw: Value,
    manager: String,
    operation: String,
    subresource: String,
    paths: BTreeSet<FieldPath>,
}

fn entries(obj: &Value) -> Vec<Entry> {
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

fn entry_value(
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
        "time": meta::now_rfc3339(),
        "fieldsType": "FieldsV1",
        "fieldsV1": to_fields_v1(paths),
    });
    if !subresource.is_empty() {
        e["subresource"] = json!(subresource);
    }
    e
}

fn write_entries(obj: &mut Value, list: Vec<Value>) {
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

/// Merges an apply intent into the live object: maps recursively, associative lists by
/// merge key, everything else replaced.
fn merge_intent(live: &mut Value, intent: &Value, builtin: bool, field: &str) {
    match (live, intent) {
        (Value::Object(lm), Value::Object(im)) => {
            for (k, v) in im {
                match lm.get_mut(k) {
                    Some(existing) if !v.is_null() => merge_intent(existing, v, builtin, k),
                    _ => {
                        lm.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(la), Value::Array(ia)) if builtin => {
            match merge_key(field, ia.first()).filter(|k| ia.iter().all(|i| i.get(*k).is_some())) {
                Some(key) => {
                    for item in ia {
                        match la.iter_mut().find(|l| l.get(key) == item.get(key)) {
                            Some(existing) => merge_intent(existing, item, builtin, ""),
                            None => la.push(item.clone()),
                        }
                    }
                }
                None => *la = ia.clone(),
            }
        }
        (live, intent) => *live = intent.clone(),
    }
}

fn path_text(path: &[PathElem]) -> String {
    path.iter()
        .map(|e| match e {
            PathElem::Field(f) => format!(".{f}"),
            PathElem::Key(k) => format!("[{k}]"),
        })
        .collect()
}

/// Server-side apply: creates the object from the intent when missing (201), or merges it.
pub fn apply(
    engine: &Engine,
    target: &Target,
    body: &[u8],
    opts: &WriteOptions,
) -> ApiResult<(u16, Arc<Value>)> {
    let manager = opts
        .field_manager
        .clone()
        .filter(|m| !m.is_empty())
        .ok_or_else(|| {
            ApiError::bad_request(
                "PATCH, application/apply-patch+yaml requires fieldManager to be set",
            )
        })?;
    let intent: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            let text = std::str::from_utf8(body)
                .map_err(|_| ApiError::bad_request("apply body is not UTF-8"))?;
            serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
        }
    };
    let rt = target.rt.clone();
    if !intent.is_object() {
        return Err(ApiError::bad_request("apply body must be an object"));
    }
    for field in ["apiVersion", "kind"] {
        if intent
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
        {
            return Err(ApiError::bad_request(format!(
                "invalid object type: {field} must be set"
            )));
        }
    }
    let sub = target.subresource.clone().unwrap_or_default();
    let api_version = rt.api_version();
    let builtin = rt.builtin;
    let exists = engine
        .store()
        .get(
            &rt.group_resource(),
            &(
                namespace_key(target),
                target.name.clone().unwrap_or_default(),
            ),
        )
        .is_some();
    if !exists && sub.is_empty() {
        let mut obj = intent.clone();
        let paths = leaves(&intent, builtin);
        write_entries(
            &mut obj,
            vec![entry_value(&manager, "Apply", &api_version, "", &paths)],
        );
        let create_opts = WriteOptions {
            field_manager: None,
            ..opts.clone()
        };
        let mut t = target.clone();
        t.name = None;
        if meta::name(&obj).is_empty()
            && let Some(n) = &target.name
        {
            meta::meta_mut(&mut obj).insert("name".into(), json!(n));
        }
        if meta::name(&obj) != target.name.as_deref().unwrap_or_default() {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({})",
                meta::name(&obj),
                target.name.as_deref().unwrap_or_default()
            )));
        }
        return engine.create(&t, obj, &create_opts).map(|o| (201, o));
    }
    let force = opts.force;
    let inner_opts = WriteOptions {
        field_manager: None,
        ..opts.clone()
    };
    let result = engine.replace_with(target, &inner_opts, move |old| {
        let new_paths: BTreeSet<FieldPath> = leaves(&intent, builtin)
            .into_iter()
            .filter(|p| match sub.as_str() {
                "status" => p.first() == Some(&PathElem::Field("status".into())),
                _ => true,
            })
            .collect();
        let mut others = Vec::new();
        let mut prev: BTreeSet<FieldPath> = BTreeSet::new();
        for e in entries(old) {
            if e.manager == manager && e.operation == "Apply" && e.subresource == sub {
                prev = e.paths;
            } else {
                others.push(e);
            }
        }
        let mut conflicts = Vec::new();
        for p in &new_paths {
            if value_at(old, p) == value_at(&intent, p) {
                continue;
            }
            for e in others.iter_mut() {
                if e.paths.contains(p) {
                    if force {
                        e.paths.remove(p);
                    } else {
                        conflicts.push((
                            e.manager.clone(),
                            e.raw
                                .get("apiVersion")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            path_text(p),
                        ));
                    }
                }
            }
        }
        if !conflicts.is_empty() {
            let causes: Vec<Cause> = conflicts
                .iter()
                .map(|(m, _, f)| Cause {
                    reason: "FieldManagerConflict".into(),
                    message: format!("conflict with \"{m}\""),
                    field: f.clone(),
                })
                .collect();
            let lines: Vec<String> = conflicts
                .iter()
                .map(|(m, v, f)| format!("- conflict with \"{m}\" using {v}: {f}"))
                .collect();
            let mut err = ApiError::new(
                409,
                Reason::Conflict,
                format!(
                    "Apply failed with {} conflict{}: {}",
                    conflicts.len(),
                    if conflicts.len() == 1 { "" } else { "s" },
                    lines.join("\n")
                ),
            );
            err.details.causes = causes;
            return Err(err);
        }
        let owned_by_others: BTreeSet<FieldPath> = others
            .iter()
            .flat_map(|e| e.paths.iter().cloned())
            .collect();
        let mut merged = old.clone();
        for p in prev.difference(&new_paths) {
            if !owned_by_others.contains(p) {
                remove_at(&mut merged, p);
                // Parents left empty by the removal go too.
                for depth in (1..p.len()).rev() {
                    let empty = value_at(&merged, &p[..depth]).is_some_and(|v| {
                        v.as_object().is_some_and(Map::is_empty)
                            || v.as_array().is_some_and(Vec::is_empty)
                    });
                    if !empty {
                        break;
                    }
                    remove_at(&mut merged, &p[..depth]);
                }
            }
        }
        let mut body = intent.clone();
        if let Some(m) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
            m.remove("resourceVersion");
        }
        merge_intent(&mut merged, &body, builtin, "");
        let mut list: Vec<Value> = others
            .into_iter()
            .filter(|e| !e.paths.is_empty())
            .map(|e| {
                let mut raw = e.raw;
                raw["fieldsV1"] = to_fields_v1(&e.paths);
                raw
            })
            .collect();
        list.push(entry_value(
            &manager,
            "Apply",
            &api_version,
            &sub,
            &new_paths,
        ));
        write_entries(&mut merged, list);
        let rv = meta::resource_version(&intent).to_string();
        Ok(Some((merged, rv)))
    })?;
    Ok((200, result))
}

fn namespace_key(target: &Target) -> String {
    if target.rt.namespaced {
        target.namespace.clone().unwrap_or_default()
    } else {
        String::new()
    }
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
}
