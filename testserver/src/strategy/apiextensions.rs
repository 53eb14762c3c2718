//! Strategies of apiextensions.k8s.io
//! (`apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go`).

use serde_json::Value;

use super::Strategy;
use crate::{errors::Cause, meta};

/// The CustomResourceDefinition strategy: validation of the names, scope and versions.
#[derive(Debug, Clone, Copy)]
pub struct CustomResourceDefinitions;

impl Strategy for CustomResourceDefinitions {
    fn name(&self) -> &'static str {
        "customresourcedefinitions"
    }

    fn validate(&self, obj: &Value) -> Vec<Cause> {
        validate_crd(obj)
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }
}

/// Validates a CRD body: the 422 causes.
pub fn validate_crd(crd: &Value) -> Vec<Cause> {
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
    causes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn crd_names_scope_and_storage_version_are_checked() {
        let good = json!({"metadata": {"name": "foos.example.com"}, "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "foos", "kind": "Foo"},
            "versions": [{"name": "v1", "served": true, "storage": true}]}});
        assert!(validate_crd(&good).is_empty());
        let mut bad = good.clone();
        bad["spec"]["scope"] = json!("Galaxy");
        bad["metadata"]["name"] = json!("bars.example.com");
        bad["spec"]["versions"][0]["storage"] = json!(false);
        let fields: Vec<String> = validate_crd(&bad).into_iter().map(|c| c.field).collect();
        assert_eq!(fields, ["spec.scope", "spec.versions", "metadata.name"]);
    }
}
