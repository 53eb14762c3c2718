//! CustomResourceDefinitions at runtime: validation, serving their versions when created
//! (with the Established condition), and removing them (and their objects) when deleted.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::{
    engine::{DeleteOptions, Engine, Target, WriteOptions},
    errors::{ApiError, ApiResult, Cause},
    meta,
    registry::{NameRule, ResourceType, ScaleSpec},
    store::{EventType, WriteOutcome},
};

const ALL_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// Validates a CRD body (422 with causes).
pub fn validate(crd: &Value) -> ApiResult<()> {
    let mut causes = Vec::new();
    let s = |p: &str| {
        crd.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let group = s("/spec/group");
    let plural = s("/spec/names/plural");
    let kind = s("/spec/names/kind");
    if group.is_empty() {
        causes.push(Cause::required("spec.group"));
    } else if !group.contains('.') {
        causes.push(Cause::invalid(
            "spec.group",
            format!("Invalid value: \"{group}\": should be a domain with at least one dot"),
        ));
    }
    if plural.is_empty() {
        causes.push(Cause::required("spec.names.plural"));
    }
    if kind.is_empty() {
        causes.push(Cause::required("spec.names.kind"));
    }
    match s("/spec/scope").as_str() {
        "Namespaced" | "Cluster" => {}
        other => causes.push(Cause::invalid(
            "spec.scope",
            format!(
                "Unsupported value: \"{other}\": supported values: \"Cluster\", \"Namespaced\""
            ),
        )),
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        causes.push(Cause::required("spec.versions"));
    }
    let storage = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count();
    if !versions.is_empty() && storage != 1 {
        causes.push(Cause::invalid(
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version",
        ));
    }
    let name = meta::name(crd);
    if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
        causes.push(Cause::invalid(
            "metadata.name",
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            name,
            causes,
        ))
    }
}

/// The resource types a CRD serves (one per served version).
pub fn served_types(crd: &Value) -> Vec<ResourceType> {
    let s = |p: &str| {
        crd.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let strings = |p: &str| -> Vec<String> {
        crd.pointer(p)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let group = s("/spec/group");
    let kind = s("/spec/names/kind");
    let plural = s("/spec/names/plural");
    let mut singular = s("/spec/names/singular");
    if singular.is_empty() {
        singular = kind.to_lowercase();
    }
    let mut list_kind = s("/spec/names/listKind");
    if list_kind.is_empty() {
        list_kind = format!("{kind}List");
    }
    let namespaced = s("/spec/scope") == "Namespaced";
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let storage_version = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name").and_then(Value::as_str))
        .unwrap_or_default()
        .to_string();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
        .filter_map(|v| {
            let version = v.get("name")?.as_str()?.to_string();
            let subresources = v.get("subresources");
            let status = subresources.and_then(|s| s.get("status")).is_some();
            let scale = subresources
                .and_then(|s| s.get("scale"))
                .map(|sc| ScaleSpec {
                    spec_replicas_path: sc
                        .get("specReplicasPath")
                        .and_then(Value::as_str)
                        .unwrap_or(".spec.replicas")
                        .into(),
                    status_replicas_path: sc
                        .get("statusReplicasPath")
                        .and_then(Value::as_str)
                        .unwrap_or(".status.replicas")
                        .into(),
                    label_selector_path: sc
                        .get("labelSelectorPath")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                });
            let field_labels = v
                .get("selectableFields")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                        .map(|p| p.trim_start_matches('.').to_string())
                        .collect()
                })
                .unwrap_or_default();
            Some(ResourceType {
                group: group.clone(),
                version,
                kind: kind.clone(),
                list_kind: list_kind.clone(),
                plural: plural.clone(),
                singular: singular.clone(),
                short_names: strings("/spec/names/shortNames"),
                categories: strings("/spec/names/categories"),
                namespaced,
                status_subresource: status,
                scale,
                verbs: ALL_VERBS.iter().map(|s| s.to_string()).collect(),
                generation: true,
                builtin: false,
                name_rule: NameRule::Subdomain,
                field_labels,
                storage_version: storage_version.clone(),
            })
        })
        .collect()
}

/// Reacts to a committed CRD write: serve on create/update, unserve on delete.
pub fn on_crd_write(engine: &Engine, out: &WriteOutcome) {
    let crd = &out.object;
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match out.event {
        Some(EventType::Deleted) => remove(engine, group, plural),
        Some(_) => {
            if meta::is_deleting(crd) {
                return;
            }
            engine.registry().remove(group, plural);
            for rt in served_types(crd) {
                engine.registry().insert(rt);
            }
            establish(engine, crd);
        }
        None => {}
    }
}

fn remove(engine: &Engine, group: &str, plural: &str) {
    let Some(rt) = engine.registry().any_version(group, plural) else {
        return;
    };
    for key in engine.store().keys(&rt.group_resource(), None) {
        let t = Target {
            rt: rt.clone(),
            namespace: (!key.0.is_empty()).then(|| key.0.clone()),
            name: Some(key.1.clone()),
            subresource: None,
        };
        // Finalizers on custom resources cannot hold up CRD removal here: clear them first.
        let cleared = engine.replace_with(&t, &WriteOptions::default(), |old| {
            let mut new = old.clone();
            meta::meta_mut(&mut new).remove("finalizers");
            Ok(Some((new, String::new())))
        });
        if let Err(err) = cleared {
            tracing::debug!(%err, "clearing finalizers of a custom resource");
        }
        if let Err(err) = engine.delete(&t, &DeleteOptions::default())
            && err.code != 404
        {
            tracing::warn!(%err, "deleting custom resource of a removed CRD");
        }
    }
    engine.registry().remove(group, plural);
}

fn establish(engine: &Engine, crd: &Arc<Value>) {
    let established = crd
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Established")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        });
    let names = crd.pointer("/spec/names").cloned().unwrap_or(Value::Null);
    if established && crd.pointer("/status/acceptedNames") == Some(&names) {
        return;
    }
    let Some(rt) = engine
        .registry()
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return;
    };
    let now = meta::now_rfc3339();
    let storage = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .and_then(|v| v.get("name").cloned())
        })
        .unwrap_or(Value::Null);
    let status = json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": now},
        ],
        "acceptedNames": names,
        "storedVersions": [storage],
    });
    let t = Target {
        rt,
        namespace: None,
        name: Some(meta::name(crd).to_string()),
        subresource: Some("status".into()),
    };
    let result = engine.replace_with(&t, &WriteOptions::default(), move |old| {
        let mut new = old.clone();
        meta::ensure_object(&mut new).insert("status".into(), status);
        Ok(Some((new, String::new())))
    });
    if let Err(err) = result {
        tracing::warn!(%err, "setting CRD status");
    }
}

/// Reads CRDs from YAML (one or more documents) or JSON text.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(vec![v]);
    }
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| e.to_string())?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}
