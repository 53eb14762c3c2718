//! The structural-schema check a CRD version must pass (apiextensions-apiserver
//! `pkg/apiserver/schema/validation.go` `ValidateStructural`, and the list-type checks of
//! `pkg/apis/apiextensions/validation`; CRD docs "Specifying a structural schema"):
//! every specified field has a non-empty `type` (except under int-or-string /
//! preserve-unknown-fields), `properties` and `additionalProperties` exclude each other,
//! `additionalProperties: false` is not used, value validations in `allOf`/`anyOf`/
//! `oneOf`/`not` add no types, defaults or nullability, embedded resources are objects,
//! `metadata` at the root only restricts `name` and `generateName`, `set` lists hold
//! scalars and `map` lists objects whose keys are required or defaulted.

use serde_json::Value;

use super::causes::{ErrorType, FieldError};
use super::model::{Additional, ListType, Node};

/// Returns every structural violation of `node` (the `openAPIV3Schema`), with paths under
/// `prefix` (e.g. `spec.versions[0].schema.openAPIV3Schema`).
pub fn check(node: &Node, prefix: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if node.ty.as_deref() != Some("object") {
        errs.push(FieldError::new(
            ErrorType::Invalid,
            &format!("{prefix}.type"),
            Some(Value::String(node.ty.clone().unwrap_or_default())),
            "must be object at the root",
        ));
    }
    if let Some(meta) = node.properties.get("metadata") {
        for k in meta.properties.keys() {
            if k != "name" && k != "generateName" {
                errs.push(FieldError::new(
                    ErrorType::Forbidden,
                    &format!("{prefix}.properties[metadata].properties[{k}]"),
                    None,
                    "must not be specified",
                ));
            }
        }
    }
    walk(node, prefix, Ctx::Specified, &mut errs, 0);
    errs
}

#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// An object field / array items / additionalProperties of the structural part.
    Specified,
    /// Inside `allOf`/`anyOf`/`oneOf`/`not`: value validations only.
    Junctor,
    /// Inside the junctors of an `x-kubernetes-int-or-string` node.
    IntOrString,
}

fn walk(node: &Node, path: &str, ctx: Ctx, errs: &mut Vec<FieldError>, depth: usize) {
    if depth > 128 {
        return;
    }
    let forbid = |errs: &mut Vec<FieldError>, what: &str| {
        errs.push(FieldError::new(
            ErrorType::Forbidden,
            &format!("{path}.{what}"),
            None,
            "must be empty to be structural",
        ))
    };
    match ctx {
        Ctx::Specified => {
            if node.ty.is_none() && !node.int_or_string && !node.preserve_unknown_fields {
                errs.push(FieldError::required(
                    &format!("{path}.type"),
                    "must not be empty for specified object fields",
                ));
            }
        }
        Ctx::Junctor | Ctx::IntOrString => {
            // under x-kubernetes-int-or-string, `anyOf: [{type: integer}, {type: string}]`
            // is the documented spelling (CRD docs "IntOrString").
            let int_or_string_type =
                ctx == Ctx::IntOrString && matches!(node.ty.as_deref(), Some("integer" | "string"));
            if node.ty.is_some() && !int_or_string_type {
                forbid(errs, "type");
            }
            if node.default.is_some() {
                forbid(errs, "default");
            }
            if node.nullable {
                forbid(errs, "nullable");
            }
            if node.additional.is_some() {
                forbid(errs, "additionalProperties");
            }
            if node.preserve_unknown_fields {
                forbid(errs, "x-kubernetes-preserve-unknown-fields");
            }
            if node.embedded_resource {
                forbid(errs, "x-kubernetes-embedded-resource");
            }
            if node.list_type.is_some() {
                forbid(errs, "x-kubernetes-list-type");
            }
        }
    }
    if node.int_or_string
        && let Some(t) = &node.ty
    {
        errs.push(FieldError::invalid(
            &format!("{path}.type"),
            &Value::String(t.clone()),
            "must be empty if x-kubernetes-int-or-string is true",
        ));
    }
    if !node.properties.is_empty() && matches!(node.additional, Some(Additional::Schema(_))) {
        errs.push(FieldError::new(
            ErrorType::Forbidden,
            &format!("{path}.additionalProperties"),
            None,
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if matches!(node.additional, Some(Additional::Bool(false))) {
        errs.push(FieldError::new(
            ErrorType::Forbidden,
            &format!("{path}.additionalProperties"),
            None,
            "must not be used",
        ));
    }
    if node.embedded_resource && ctx == Ctx::Specified {
        if node.ty.as_deref() != Some("object") {
            errs.push(FieldError::required(
                &format!("{path}.type"),
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        }
        if node.properties.is_empty() && !node.preserve_unknown_fields {
            errs.push(FieldError::required(
                &format!("{path}.properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            ));
        }
    }
    if node.ty.as_deref() == Some("array") && ctx == Ctx::Specified && node.items.is_none() {
        errs.push(FieldError::required(
            &format!("{path}.items"),
            "must be specified",
        ));
    }
    match node.list_type {
        Some(ListType::Map) => {
            let items = node.items.as_deref();
            if items.and_then(|i| i.ty.as_deref()) != Some("object") {
                errs.push(FieldError::invalid(
                    &format!("{path}.items.type"),
                    &Value::String(items.and_then(|i| i.ty.clone()).unwrap_or_default()),
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            }
            if node.list_map_keys.is_empty() {
                errs.push(FieldError::required(
                    &format!("{path}.x-kubernetes-list-map-keys"),
                    "must not be empty if x-kubernetes-list-type is map",
                ));
            }
            if let Some(items) = items {
                for k in &node.list_map_keys {
                    match items.properties.get(k) {
                        None => errs.push(FieldError::invalid(
                            &format!("{path}.x-kubernetes-list-map-keys"),
                            &Value::from(node.list_map_keys.clone()),
                            format!("entries must all be names of item properties: {k} is not"),
                        )),
                        Some(p) => {
                            if !items.required.contains(k) && p.default.is_none() {
                                errs.push(FieldError::required(
                                    &format!("{path}.items.properties[{k}].default"),
                                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                                ));
                            }
                        }
                    }
                }
            }
        }
        Some(ListType::Set) => {
            if let Some(items) = node.items.as_deref()
                && items.ty.as_deref() == Some("object")
                && items.map_type.as_deref() != Some("atomic")
            {
                errs.push(FieldError::invalid(
                    &format!("{path}.items.x-kubernetes-map-type"),
                    &Value::String(items.map_type.clone().unwrap_or_default()),
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                ));
            }
        }
        _ => {
            if !node.list_map_keys.is_empty() {
                errs.push(FieldError::new(
                    ErrorType::Forbidden,
                    &format!("{path}.x-kubernetes-list-map-keys"),
                    None,
                    "must be empty if x-kubernetes-list-type is not map",
                ));
            }
        }
    }
    if let Some(mt) = &node.map_type
        && mt != "granular"
        && mt != "atomic"
    {
        errs.push(FieldError::new(
            ErrorType::NotSupported,
            &format!("{path}.x-kubernetes-map-type"),
            Some(Value::String(mt.clone())),
            "supported values: \"granular\", \"atomic\"",
        ));
    }
    for (k, p) in &node.properties {
        walk(p, &format!("{path}.properties[{k}]"), ctx, errs, depth + 1);
    }
    if let Some(Additional::Schema(s)) = &node.additional {
        walk(
            s,
            &format!("{path}.additionalProperties"),
            ctx,
            errs,
            depth + 1,
        );
    }
    if let Some(items) = &node.items {
        walk(items, &format!("{path}.items"), ctx, errs, depth + 1);
    }
    let junctor = if node.int_or_string {
        Ctx::IntOrString
    } else {
        Ctx::Junctor
    };
    for (key, list) in [
        ("allOf", &node.all_of),
        ("anyOf", &node.any_of),
        ("oneOf", &node.one_of),
    ] {
        for (i, s) in list.iter().enumerate() {
            walk(s, &format!("{path}.{key}[{i}]"), junctor, errs, depth + 1);
        }
    }
    if let Some(n) = &node.not {
        walk(n, &format!("{path}.not"), junctor, errs, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msgs(schema: Value) -> Vec<String> {
        let n = Node::parse(&schema, "s").expect("parses");
        check(&n, "s").iter().map(ToString::to_string).collect()
    }

    /// CRD docs "IntOrString": `anyOf: [{type: integer}, {type: string}]` under
    /// `x-kubernetes-int-or-string` is structural; a type beside it is not.
    #[test]
    fn int_or_string_spelling_is_structural() {
        assert_eq!(
            msgs(
                json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]}}})
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            msgs(
                json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true, "type": "string"}}})
            ),
            vec![
                "s.properties[p].type: Invalid value: \"string\": must be empty if x-kubernetes-int-or-string is true"
            ]
        );
    }

    /// pkg/apis/apiextensions/validation: map-list keys must be required or defaulted,
    /// set items of object type must be atomic, map-type must be granular/atomic, root
    /// must be an object and metadata may only constrain name/generateName.
    #[test]
    fn list_map_set_and_metadata_rules() {
        let got = msgs(json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
            "m": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                  "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
            "s": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}},
            "t": {"type": "object", "x-kubernetes-map-type": "weird"}}}));
        for want in [
            "s.properties[metadata].properties[labels]: Forbidden: must not be specified",
            "s.properties[m].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            "s.properties[s].items.x-kubernetes-map-type: Invalid value: \"\": must be atomic as item of a list with x-kubernetes-list-type=set",
            "s.properties[t].x-kubernetes-map-type: Unsupported value: \"weird\": supported values: \"granular\", \"atomic\"",
        ] {
            assert!(
                got.contains(&want.to_string()),
                "missing {want} in {got:#?}"
            );
        }
        assert_eq!(
            msgs(json!({"type": "string"})),
            vec!["s.type: Invalid value: \"string\": must be object at the root"]
        );
    }
}
