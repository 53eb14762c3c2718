//! Server-side apply, over the field ownership kept by [`crate::managed_fields`].
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
    managed_fields::{
        FieldPath, PathElem, entries, entry_value, leaves, remove_at, to_fields_v1, value_at,
        write_entries,
    },
    meta,
    patch::merge_key,
};

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
