//! controller-gen's field and type markers (`sigs.k8s.io/controller-tools/pkg/crd/markers`
//! `validation.go`, `topology.go`) applied to a schema: `+kubebuilder:validation:*`,
//! `+kubebuilder:default`, `+listType`, `+listMapKey`. Array-only markers on an array
//! field apply to the array, as controller-gen does; a marker that does not fit the
//! schema's type (a `MinLength` on an integer) is an error, since kube-apiserver would
//! reject the CRD.

use serde_json::{Value, json};

use crate::ctxt::Ctxt;
use crate::markers::Found;
use crate::markers::value::Value as MarkerValue;
use crate::markers::vocabulary::{
    DEFAULT, EMBEDDED_RESOURCE, ENUM, EXCLUSIVE_MAXIMUM, EXCLUSIVE_MINIMUM, FORMAT, LIST_MAP_KEY,
    LIST_TYPE, MAP_TYPE, MAX_ITEMS, MAX_LENGTH, MAX_PROPERTIES, MAXIMUM, MIN_ITEMS, MIN_LENGTH,
    MIN_PROPERTIES, MINIMUM, MULTIPLE_OF, PATTERN, PRESERVE_UNKNOWN, UNIQUE_ITEMS, X_INT_OR_STRING,
    X_VALIDATION,
};

fn type_of(schema: &Value) -> Option<&str> {
    schema.get("type").and_then(Value::as_str)
}

/// Applies `markers` to `schema`; misplaced or malformed markers are reported to `cx`.
pub fn apply<'m>(schema: &mut Value, markers: impl Iterator<Item = &'m Found>, cx: &Ctxt) {
    let mut map_keys: Vec<Value> = Vec::new();
    let mut rules: Vec<Value> = Vec::new();
    for f in markers {
        let ty = type_of(schema).map(str::to_owned);
        let want = |types: &[&str]| -> bool {
            let int_or_string = schema.get("x-kubernetes-int-or-string").is_some();
            // A derive's hole is checked when the type it stands for is derived.
            let ok = super::template::is_hole(schema)
                || ty.as_deref().is_some_and(|t| types.contains(&t))
                || (int_or_string && types.iter().any(|t| *t == "string" || *t == "integer"));
            if !ok {
                cx.error_at(
                    f.span,
                    format!(
                        "`{}` applies to {} schemas, not to `{}`",
                        f.written,
                        types.join("/"),
                        ty.as_deref().unwrap_or("untyped")
                    ),
                );
            }
            ok
        };
        let (key, value): (&str, Value) = match (f.marker, &f.value) {
            (MINIMUM, MarkerValue::Number(n)) if want(&["integer", "number"]) => {
                ("minimum", json!(n))
            }
            (MAXIMUM, MarkerValue::Number(n)) if want(&["integer", "number"]) => {
                ("maximum", json!(n))
            }
            (MULTIPLE_OF, MarkerValue::Number(n)) if want(&["integer", "number"]) => {
                ("multipleOf", json!(n))
            }
            (EXCLUSIVE_MINIMUM, MarkerValue::Bool(b)) if want(&["integer", "number"]) => {
                ("exclusiveMinimum", json!(b))
            }
            (EXCLUSIVE_MAXIMUM, MarkerValue::Bool(b)) if want(&["integer", "number"]) => {
                ("exclusiveMaximum", json!(b))
            }
            (MIN_LENGTH, MarkerValue::Count(n)) if want(&["string"]) => ("minLength", json!(n)),
            (MAX_LENGTH, MarkerValue::Count(n)) if want(&["string"]) => ("maxLength", json!(n)),
            (PATTERN, MarkerValue::Str(p)) if want(&["string"]) => ("pattern", json!(p)),
            (FORMAT, MarkerValue::Str(p)) => ("format", json!(p)),
            (ENUM, MarkerValue::JsonList(vs)) => ("enum", json!(vs)),
            (MIN_ITEMS, MarkerValue::Count(n)) if want(&["array"]) => ("minItems", json!(n)),
            (MAX_ITEMS, MarkerValue::Count(n)) if want(&["array"]) => ("maxItems", json!(n)),
            (UNIQUE_ITEMS, MarkerValue::Bool(b)) if want(&["array"]) => ("uniqueItems", json!(b)),
            (MIN_PROPERTIES, MarkerValue::Count(n)) if want(&["object"]) => {
                ("minProperties", json!(n))
            }
            (MAX_PROPERTIES, MarkerValue::Count(n)) if want(&["object"]) => {
                ("maxProperties", json!(n))
            }
            (DEFAULT, MarkerValue::Json(v)) => ("default", v.clone()),
            (PRESERVE_UNKNOWN, _) => ("x-kubernetes-preserve-unknown-fields", json!(true)),
            (EMBEDDED_RESOURCE, _) => {
                // An embedded object (a RawExtension-like `serde_json::Value`) is an object.
                if ty.is_none()
                    && let Value::Object(m) = schema
                {
                    m.insert("type".into(), json!("object"));
                } else if !want(&["object"]) {
                    continue;
                }
                ("x-kubernetes-embedded-resource", json!(true))
            }
            (X_INT_OR_STRING, _) => {
                if let Value::Object(m) = schema {
                    m.remove("type");
                    m.remove("format");
                    m.remove("x-kubernetes-preserve-unknown-fields");
                }
                ("x-kubernetes-int-or-string", json!(true))
            }
            (MAP_TYPE, MarkerValue::Str(t)) if want(&["object"]) => {
                if !matches!(t.as_str(), "atomic" | "granular") {
                    cx.error_at(
                        f.span,
                        format!("`+mapType={t}`: expected `atomic` or `granular`"),
                    );
                    continue;
                }
                ("x-kubernetes-map-type", json!(t))
            }
            (LIST_TYPE, MarkerValue::Str(t)) if want(&["array"]) => {
                if !matches!(t.as_str(), "atomic" | "set" | "map") {
                    cx.error_at(
                        f.span,
                        format!("`+listType={t}`: expected `atomic`, `set` or `map`"),
                    );
                    continue;
                }
                ("x-kubernetes-list-type", json!(t))
            }
            (LIST_MAP_KEY, MarkerValue::Str(k)) => {
                map_keys.push(json!(k));
                continue;
            }
            (X_VALIDATION, MarkerValue::Args(args)) => {
                let mut rule = serde_json::Map::new();
                for (k, v) in args {
                    let key = match k.as_str() {
                        "rule" => "rule",
                        "message" => "message",
                        "messageExpression" => "messageExpression",
                        "reason" => "reason",
                        "fieldPath" => "fieldPath",
                        other => {
                            cx.error_at(
                                f.span,
                                format!(
                                    "`{}`: unknown argument `{other}` (expected rule, message, messageExpression, reason, fieldPath)",
                                    f.written
                                ),
                            );
                            continue;
                        }
                    };
                    rule.insert(key.to_owned(), json!(v));
                }
                if !rule.contains_key("rule") {
                    cx.error_at(f.span, format!("`{}` needs `rule=...`", f.written));
                    continue;
                }
                rules.push(Value::Object(rule));
                continue;
            }
            _ => continue,
        };
        if let Value::Object(m) = schema {
            m.insert(key.to_owned(), value);
        }
    }
    let Value::Object(m) = schema else { return };
    if !map_keys.is_empty() {
        m.insert("x-kubernetes-list-map-keys".into(), Value::Array(map_keys));
    }
    if !rules.is_empty() {
        // A field's rules come after its type's.
        match m.get_mut("x-kubernetes-validations") {
            Some(Value::Array(existing)) => existing.extend(rules),
            _ => {
                m.insert("x-kubernetes-validations".into(), Value::Array(rules));
            }
        }
    }
}
