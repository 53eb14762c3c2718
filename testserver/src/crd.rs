//! CustomResourceDefinitions as data: the resource types a CRD serves (each with its
//! version's compiled schema) and the parsing of CRD files. Validation is the CRD strategy's (`crate::strategy`); serving, establishing
//! and removing them is the CRD controller's (`crate::controllers`).

use kubegen::catalog::Verb;
use serde_json::Value;

use crate::{
    registry::{NameRule, ResourceType, ScaleSpec},
    schema::{CrdSchema, SchemaRef},
};

/// Every verb, in the order apiextensions-apiserver's discovery lists a custom
/// resource's verbs.
const CRD_VERBS: [Verb; 8] = [
    Verb::Delete,
    Verb::DeleteCollection,
    Verb::Get,
    Verb::List,
    Verb::Patch,
    Verb::Create,
    Verb::Update,
    Verb::Watch,
];

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
        .enumerate()
        .filter(|(_, v)| v.get("served").and_then(Value::as_bool) != Some(false))
        .filter_map(|(index, v)| {
            let version = v.get("name")?.as_str()?.to_string();
            // The CRD strategy refused the CRD if this fails, so `None` only for CRDs
            // stored before (or written with schema validation off).
            let schema = match CrdSchema::compile(&group, &kind, v, index) {
                Ok(s) => Some(SchemaRef::compiled(s)),
                Err(errs) => {
                    tracing::debug!(%group, %kind, %version, errors = errs.len(), "CRD version served without a schema");
                    None
                }
            };
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
                verbs: CRD_VERBS.to_vec(),
                generation: true,
                builtin: false,
                name_rule: NameRule::Subdomain,
                field_labels,
                storage_version: storage_version.clone(),
                strategy: crate::strategy::custom_resource(),
                columns: &[],
                schema,
                // Set by the CRD controller when it serves the version.
                read_defaults_through: 0,
            })
        })
        .collect()
}

/// Reads CRDs from YAML (one or more documents) or JSON text.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(vec![v]);
    }
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| e.to_string())?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}
