//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge
//! patch for built-in types (lists merged by their merge keys, `$patch` directives).

use serde_json::{Map, Value};

use crate::errors::{ApiError, ApiResult, Reason};

/// The patch flavours, by content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`
    Merge,
    /// `application/json-patch+json`
    Json,
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply), or `application/apply-patch+cbor`
    /// (its body transcoded by [`apply_cbor_as_json`] before apply reads it)
    Apply,
}

impl PatchType {
    /// The patch type for a `Content-Type` header, or 415.
    pub fn from_content_type(ct: &str) -> ApiResult<Self> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchType::Apply),
            other => Err(ApiError::unsupported_media_type(format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {other:?})"
            ))),
        }
    }
}

/// The JSON form of an `application/apply-patch+cbor` body (KEP-4222), which the apply path
/// then reads as it reads a JSON apply body; `None` for any other content type.
pub fn apply_cbor_as_json(ct: &str, body: &[u8]) -> ApiResult<Option<bytes::Bytes>> {
    if ct.split(';').next().unwrap_or_default().trim() != "application/apply-patch+cbor" {
        return Ok(None);
    }
    let value = crate::endpoints::cbor::decode(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding CBOR apply patch: {e}")))?;
    serde_json::to_vec(&value)
        .map(|v| Some(v.into()))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Applies a JSON merge patch or JSON patch to `doc`.
pub fn apply_json_or_merge(doc: &Value, patch_type: PatchType, body: &[u8]) -> ApiResult<Value> {
    let mut doc = doc.clone();
    match patch_type {
        PatchType::Merge => {
            let patch: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid merge patch: {e}")))?;
            if !patch.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            json_patch::merge(&mut doc, &patch);
            Ok(doc)
        }
        PatchType::Json => {
            let patch: json_patch::Patch = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            json_patch::patch(&mut doc, &patch).map_err(|e| {
                ApiError::new(
                    422,
                    Reason::Invalid,
                    format!("the server rejected our request due to an error in our request: {e}"),
                )
            })?;
            Ok(doc)
        }
        PatchType::Strategic => {
            let patch: Value = serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("invalid strategic merge patch: {e}"))
            })?;
            if !patch.is_object() {
                return Err(ApiError::bad_request(
                    "a strategic merge patch must be a JSON object",
                ));
            }
            strategic_merge(&mut doc, &patch)?;
            Ok(doc)
        }
        PatchType::Apply => Err(ApiError::internal("apply patches go through apply::apply")),
    }
}

/// The merge key of a list field in the built-in types (`containers` by `name`, ...).
pub fn merge_key(field: &str, sample: Option<&Value>) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims"
        | "readinessGates" => Some(match field {
            "readinessGates" => "conditionType",
            _ => "name",
        }),
        "volumeMounts" => Some("mountPath"),
        "volumeDevices" => Some("devicePath"),
        "hostAliases" => Some("ip"),
        "conditions" => Some("type"),
        "ownerReferences" => Some("uid"),
        "topologySpreadConstraints" => Some("topologyKey"),
        "ports" => Some(
            if sample.is_some_and(|s| s.get("containerPort").is_some()) {
                "containerPort"
            } else {
                "port"
            },
        ),
        _ => None,
    }
}

/// Primitive lists merged as sets rather than replaced.
fn is_merged_primitive_list(field: &str) -> bool {
    matches!(field, "finalizers")
}

/// Applies a strategic merge patch in place.
pub fn strategic_merge(doc: &mut Value, patch: &Value) -> ApiResult<()> {
    let (Some(doc_map), Some(patch_map)) = (doc.as_object_mut(), patch.as_object()) else {
        *doc = patch.clone();
        return Ok(());
    };
    if patch_map.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replaced = patch_map.clone();
        replaced.remove("$patch");
        *doc_map = replaced;
        return Ok(());
    }
    merge_map(doc_map, patch_map)
}

fn merge_map(doc: &mut Map<String, Value>, patch: &Map<String, Value>) -> ApiResult<()> {
    // Deletions from primitive lists first, then ordinary fields.
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/")
            && let (Some(Value::Array(list)), Some(remove)) = (doc.get_mut(field), v.as_array())
        {
            list.retain(|item| !remove.contains(item));
        }
    }
    for (k, v) in patch {
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                doc.remove(k);
            }
            Value::Object(pm) => {
                if pm.get("$patch").and_then(Value::as_str) == Some("delete") {
                    doc.remove(k);
                    continue;
                }
                if pm.get("$patch").and_then(Value::as_str) == Some("replace") {
                    let mut replaced = pm.clone();
                    replaced.remove("$patch");
                    doc.insert(k.clone(), Value::Object(replaced));
                    continue;
                }
                let entry = doc
                    .entry(k.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                if let Value::Object(dm) = entry {
                    merge_map(dm, pm)?;
                }
            }
            Value::Array(items) => {
                let key = merge_key(k, items.first());
                match (key, doc.get_mut(k)) {
                    (Some(key), Some(Value::Array(existing))) => {
                        merge_keyed_list(existing, items, key)?
                    }
                    (None, Some(Value::Array(existing))) if is_merged_primitive_list(k) => {
                        for item in items {
                            if !existing.contains(item) {
                                existing.push(item.clone());
                            }
                        }
                    }
                    _ => {
                        let cleaned: Vec<Value> = items
                            .iter()
                            .filter(|i| i.get("$patch").and_then(Value::as_str) != Some("delete"))
                            .cloned()
                            .collect();
                        doc.insert(k.clone(), Value::Array(cleaned));
                    }
                }
            }
            other => {
                doc.insert(k.clone(), other.clone());
            }
        }
    }
    // `$setElementOrder/<field>` reorders a merged list.
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$setElementOrder/")
            && let (Some(Value::Array(list)), Some(order)) = (doc.get_mut(field), v.as_array())
        {
            reorder(list, order, merge_key(field, list.first()));
        }
    }
    Ok(())
}

fn merge_keyed_list(existing: &mut Vec<Value>, patch: &[Value], key: &str) -> ApiResult<()> {
    for item in patch {
        let Some(id) = item.get(key) else {
            return Err(ApiError::bad_request(format!(
                "map: {item} does not contain declared merge key: {key}"
            )));
        };
        let pos = existing.iter().position(|e| e.get(key) == Some(id));
        let directive = item.get("$patch").and_then(Value::as_str);
        match (pos, directive) {
            (Some(p), Some("delete")) => {
                existing.remove(p);
            }
            (None, Some("delete")) => {}
            (Some(p), Some("replace")) => {
                let mut v = item.clone();
                if let Some(m) = v.as_object_mut() {
                    m.remove("$patch");
                }
                existing[p] = v;
            }
            (Some(p), _) => strategic_merge(&mut existing[p], item)?,
            (None, _) => {
                let mut v = item.clone();
                if let Some(m) = v.as_object_mut() {
                    m.remove("$patch");
                }
                existing.push(v);
            }
        }
    }
    Ok(())
}

fn reorder(list: &mut Vec<Value>, order: &[Value], key: Option<&str>) {
    let id = |v: &Value| -> Value {
        match key {
            Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
            None => v.clone(),
        }
    };
    let mut ordered = Vec::with_capacity(list.len());
    for o in order {
        let want = match key {
            Some(k) => o.get(k).cloned().unwrap_or_else(|| o.clone()),
            None => o.clone(),
        };
        if let Some(p) = list.iter().position(|v| id(v) == want) {
            ordered.push(list.remove(p));
        }
    }
    ordered.append(list);
    *list = ordered;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merge_merges_containers_by_name() {
        let mut doc = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}
        ]}});
        let patch = json!({"spec": {"containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}});
        strategic_merge(&mut doc, &patch).unwrap();
        let names: Vec<_> = doc["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["image"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, vec!["a:1", "b:2", "c:1"]);
    }

    #[test]
    fn strategic_merge_honours_delete_directive_and_null() {
        let mut doc = json!({"metadata": {"labels": {"x": "1", "y": "2"}},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let patch = json!({"metadata": {"labels": {"x": null}},
            "spec": {"containers": [{"name": "a", "$patch": "delete"}]}});
        strategic_merge(&mut doc, &patch).unwrap();
        assert_eq!(doc["metadata"]["labels"], json!({"y": "2"}));
        assert_eq!(doc["spec"]["containers"], json!([{"name": "b"}]));
    }

    #[test]
    fn json_patch_failing_test_is_invalid() {
        let doc = json!({"a": 1});
        let err = apply_json_or_merge(
            &doc,
            PatchType::Json,
            br#"[{"op":"test","path":"/a","value":2}]"#,
        )
        .unwrap_err();
        assert_eq!(err.code, 422);
    }

    #[test]
    fn unknown_content_type_is_415() {
        assert_eq!(
            PatchType::from_content_type("text/plain").unwrap_err().code,
            415
        );
    }
}
