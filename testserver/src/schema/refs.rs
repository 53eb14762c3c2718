//! Schemas of an OpenAPI document (`components.schemas` of kube-apiserver's `/openapi/v3`,
//! `$defs` of a JSON Schema such as k8s-openapi's `schemars` output): `$ref`s are inlined
//! so one type's schema becomes one self-contained tree for [`Node::parse`] — what
//! unknown-field detection of built-in kinds needs. The published Kubernetes documents wrap
//! a described reference as `allOf: [{$ref}]`; that wrapper is unwrapped too. A recursive
//! reference (JSONSchemaProps) becomes an open schema that accepts anything.

use serde_json::{Map, Value};

use super::model::{Node, ParseError};

/// The definitions a `$ref` may point into, from an OpenAPI v3 document or JSON Schema.
pub fn definitions(document: &Value) -> Map<String, Value> {
    for ptr in ["/components/schemas", "/$defs", "/definitions"] {
        if let Some(Value::Object(m)) = document.pointer(ptr) {
            return m.clone();
        }
    }
    Map::new()
}

/// The parsed schema of definition `name` (e.g. `io.k8s.api.apps.v1.Deployment`).
pub fn node_for(defs: &Map<String, Value>, name: &str) -> Result<Node, ParseError> {
    let schema = defs.get(name).ok_or_else(|| ParseError {
        path: name.to_owned(),
        message: "no such definition".into(),
    })?;
    let mut stack = vec![name.to_owned()];
    Node::parse(&inline(schema, defs, &mut stack), name)
}

fn ref_name(r: &str) -> Option<&str> {
    ["#/components/schemas/", "#/$defs/", "#/definitions/"]
        .iter()
        .find_map(|p| r.strip_prefix(p))
}

/// Inlines every `$ref` below `schema`.
pub fn inline(schema: &Value, defs: &Map<String, Value>, stack: &mut Vec<String>) -> Value {
    let Value::Object(obj) = schema else {
        return schema.clone();
    };
    // In a built-in type's document an object with neither properties nor
    // additionalProperties is free-form (RawExtension, `type: object` JSON fields):
    // unknown-field detection must not look inside it.
    if obj.get("type").and_then(Value::as_str) == Some("object")
        && !obj.contains_key("properties")
        && !obj.contains_key("additionalProperties")
    {
        let mut open = obj.clone();
        open.insert(
            "x-kubernetes-preserve-unknown-fields".into(),
            Value::Bool(true),
        );
        return Value::Object(open);
    }
    if let Some(name) = obj.get("$ref").and_then(Value::as_str).and_then(ref_name) {
        return resolve(name, obj, defs, stack);
    }
    // `allOf: [{$ref: X}]` beside a description/default: the reference itself.
    if let Some(Value::Array(all)) = obj.get("allOf")
        && all.len() == 1
        && let Some(name) = all[0]
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(ref_name)
    {
        let mut rest = obj.clone();
        rest.remove("allOf");
        return resolve(name, &rest, defs, stack);
    }
    let mut out = Map::new();
    for (k, v) in obj {
        let v = match k.as_str() {
            "properties" | "patternProperties" => match v {
                Value::Object(props) => Value::Object(
                    props
                        .iter()
                        .map(|(pk, pv)| (pk.clone(), inline(pv, defs, stack)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" | "additionalProperties" | "not" => inline(v, defs, stack),
            "allOf" | "anyOf" | "oneOf" => match v {
                Value::Array(a) => Value::Array(a.iter().map(|s| inline(s, defs, stack)).collect()),
                other => other.clone(),
            },
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

fn resolve(
    name: &str,
    beside: &Map<String, Value>,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
) -> Value {
    let mut resolved = if stack.iter().any(|s| s == name) || stack.len() > 64 {
        serde_json::json!({"x-kubernetes-preserve-unknown-fields": true})
    } else if let Some(target) = defs.get(name) {
        stack.push(name.to_owned());
        let v = inline(target, defs, stack);
        stack.pop();
        v
    } else {
        serde_json::json!({"x-kubernetes-preserve-unknown-fields": true})
    };
    if let Value::Object(r) = &mut resolved {
        for (k, v) in beside {
            if k != "$ref" {
                r.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::prune::prune;
    use serde_json::json;

    /// The shape of kube-apiserver's `/openapi/v3/apis/apps/v1` (`components.schemas`,
    /// `allOf: [{$ref}]` for described fields, maps as `additionalProperties`), reduced to a
    /// few fields: references resolve, and pruning then names unknown fields as
    /// fieldValidation reports them for built-in kinds (field_validation.go e2e:
    /// `unknown field "spec.foo"`).
    #[test]
    fn resolves_refs_and_finds_unknown_fields() {
        let doc = json!({"components": {"schemas": {
            "io.k8s.api.apps.v1.Deployment": {"type": "object", "properties": {
                "spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}], "description": "spec", "default": {}}}},
            "io.k8s.api.apps.v1.DeploymentSpec": {"type": "object", "properties": {
                "replicas": {"type": "integer", "format": "int32"},
                "selector": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"},
                "raw": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.runtime.RawExtension"}}},
            "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object", "description": "free-form"},
            "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector": {"type": "object", "properties": {
                "matchLabels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}}}},
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps": {"type": "object", "properties": {
                "items": {"$ref": "#/components/schemas/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"}}}}}});
        let defs = definitions(&doc);
        let n = node_for(&defs, "io.k8s.api.apps.v1.Deployment").expect("resolves");
        let mut obj = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 1, "foo": 1, "raw": {"any": {"thing": 1}}, "selector": {"matchLabels": {"a": "b"}, "bar": 2}}});
        assert_eq!(prune(&n, &mut obj), vec!["spec.foo", "spec.selector.bar"]);
        assert_eq!(obj["spec"]["raw"], json!({"any": {"thing": 1}}));
        // recursive references stop at an open schema instead of looping
        let r = node_for(
            &defs,
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        )
        .expect("resolves");
        assert!(r.properties["items"].preserve_unknown_fields);
        assert!(node_for(&defs, "nope").is_err());
    }
}
