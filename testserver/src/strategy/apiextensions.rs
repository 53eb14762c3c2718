//! Strategies of apiextensions.k8s.io
//! (`apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go`).

mod conversion;

use serde_json::Value;

use super::Strategy;
use crate::{
    errors::Cause,
    meta,
    schema::{CrdSchema, FieldError},
};

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
    if !group.is_empty() && !kind.is_empty() {
        causes.extend(validate_schemas(&group, &kind, &versions));
    }
    causes.extend(conversion::validate(crd).iter().map(FieldError::cause));
    let name = meta::name(crd);
    if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
        causes.push(Cause::invalid(
            "metadata.name",
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    causes
}

/// Every version's `schema.openAPIV3Schema` must be a structural schema whose patterns and
/// CEL rules compile (apiextensions-apiserver `pkg/apis/apiextensions/validation/
/// validation.go` `ValidateCustomResourceDefinitionOpenAPISchema` and the structural
/// checks of `pkg/apiserver/schema/validation.go`; CRD docs "Specifying a structural
/// schema" and "Validation rules": a rule that does not compile makes the CRD invalid).
fn validate_schemas(group: &str, kind: &str, versions: &[Value]) -> Vec<Cause> {
    versions
        .iter()
        .enumerate()
        .flat_map(|(i, v)| match CrdSchema::compile(group, kind, v, i) {
            Ok(_) => Vec::new(),
            Err(errs) => errs.iter().map(FieldError::cause).collect(),
        })
        .collect()
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
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        assert!(validate_crd(&good).is_empty());
        let mut bad = good.clone();
        bad["spec"]["scope"] = json!("Galaxy");
        bad["metadata"]["name"] = json!("bars.example.com");
        bad["spec"]["versions"][0]["storage"] = json!(false);
        let fields: Vec<String> = validate_crd(&bad).into_iter().map(|c| c.field).collect();
        assert_eq!(fields, ["spec.scope", "spec.versions", "metadata.name"]);
    }

    /// apiextensions-apiserver validation.go: a non-structural schema, a missing schema and
    /// a CEL rule that does not compile are the CRD's own 422 causes.
    #[test]
    fn crd_schemas_must_be_structural_with_compiling_rules() {
        let crd = |schema: Value| {
            json!({"metadata": {"name": "foos.example.com"}, "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "foos", "kind": "Foo"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema}]}})
        };
        let causes = validate_crd(&crd(json!({"openAPIV3Schema": {"type": "object",
            "properties": {"spec": {"properties": {"a": {"type": "string"}}}}}})));
        assert_eq!(
            causes[0].field,
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].type"
        );
        let causes = validate_crd(&crd(json!({"openAPIV3Schema": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.a ==", "message": "m"}]}})));
        assert_eq!(
            causes[0].field,
            "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule"
        );
        let causes = validate_crd(&crd(Value::Null));
        assert_eq!(causes[0].field, "spec.versions[0].schema.openAPIV3Schema");
        assert_eq!(causes[0].reason, "FieldValueRequired");
    }
}
