//! The `/scale` subresource: an `autoscaling/v1` Scale view of replicas.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::{
    errors::{ApiError, ApiResult},
    meta,
    registry::ResourceType,
};

fn pointer_of(path: &str) -> String {
    path.trim_start_matches('.').replace('.', "/")
}

fn get_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    obj.pointer(&format!("/{}", pointer_of(path)))
}

/// The Scale object for `obj`.
pub fn to_scale(rt: &ResourceType, obj: &Value) -> ApiResult<Arc<Value>> {
    let spec = rt.scale.as_ref().ok_or_else(|| {
        ApiError::not_found(&rt.group, &format!("{}/scale", rt.plural), meta::name(obj))
    })?;
    let replicas = get_path(obj, &spec.spec_replicas_path)
        .and_then(Value::as_i64)
        .unwrap_or(if rt.builtin { 1 } else { 0 });
    let status_replicas = get_path(obj, &spec.status_replicas_path)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut status = json!({"replicas": status_replicas});
    if let Some(sel) = spec
        .label_selector_path
        .as_deref()
        .and_then(|p| get_path(obj, p))
        .and_then(Value::as_str)
    {
        status["selector"] = json!(sel);
    }
    if rt.builtin
        && let Some(labels) = obj
            .pointer("/spec/selector/matchLabels")
            .and_then(Value::as_object)
    {
        let sel: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
        status["selector"] = json!(sel.join(","));
    }
    Ok(Arc::new(json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta::name(obj),
            "namespace": meta::namespace(obj),
            "uid": meta::uid(obj),
            "resourceVersion": meta::resource_version(obj),
            "creationTimestamp": obj.pointer("/metadata/creationTimestamp").cloned().unwrap_or(Value::Null),
        },
        "spec": {"replicas": replicas},
        "status": status,
    })))
}

/// Applies a Scale body's `spec.replicas` to `old`.
pub fn apply_scale(rt: &ResourceType, old: &Value, scale: &Value) -> ApiResult<Value> {
    let spec = rt.scale.as_ref().ok_or_else(|| {
        ApiError::not_found(&rt.group, &format!("{}/scale", rt.plural), meta::name(old))
    })?;
    let replicas = scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .ok_or_else(|| {
            ApiError::invalid(
                "autoscaling",
                "Scale",
                meta::name(old),
                vec![crate::errors::Cause::required("spec.replicas")],
            )
        })?;
    if replicas < 0 {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            meta::name(old),
            vec![crate::errors::Cause::invalid(
                "spec.replicas",
                format!("Invalid value: {replicas}: must be greater than or equal to 0"),
            )],
        ));
    }
    let mut new = old.clone();
    let mut cur = &mut new;
    let parts: Vec<String> = pointer_of(&spec.spec_replicas_path)
        .split('/')
        .map(str::to_string)
        .collect();
    for (i, part) in parts.iter().enumerate() {
        let map = meta::ensure_object(cur);
        if i + 1 == parts.len() {
            map.insert(part.clone(), json!(replicas));
            break;
        }
        cur = map
            .entry(part.clone())
            .or_insert_with(|| Value::Object(Default::default()));
    }
    Ok(new)
}
