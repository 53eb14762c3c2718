//! A schema node's constraints as the markers that give them back
//! (`crate::crd::validation` reads them): `minimum` → `+kubebuilder:validation:Minimum=`,
//! `x-kubernetes-list-type` → `+listType=` ... Values are written so the marker reader
//! returns them unchanged: strings as JSON strings (with backticks as `\u0060`, since the
//! argument splitter treats a backtick as a quote), defaults as compact JSON.

use serde_json::{Map, Value};

/// A JSON string literal that the marker reader's `unquote` / `split_args` read back
/// as `s`.
pub fn quoted(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_else(|_| format!("\"{s}\""))
        .replace('`', "\\u0060")
}

/// Compact JSON on one line (backticks escaped as in [`quoted`]).
fn json(v: &Value) -> String {
    v.to_string().replace('`', "\\u0060")
}

/// The keys of a schema node that [`markers`] turns into markers.
pub const KEYS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "enum",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "default",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-map-type",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
];

/// The markers for the constraints of `node`, except the keys in `consumed` (what the
/// Rust type already says: a `format` that chose `i32`, an `enum` that became a Rust
/// enum ...). Values a marker cannot hold are returned as notes instead.
pub fn markers(node: &Map<String, Value>, consumed: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for key in KEYS {
        if consumed.contains(key) {
            continue;
        }
        let Some(v) = node.get(*key) else { continue };
        let number = |name: &str, out: &mut Vec<String>, notes: &mut Vec<String>| match v {
            Value::Number(n) => out.push(format!("kubebuilder:validation:{name}={n}")),
            other => notes.push(format!("`{key}: {other}` is not a number")),
        };
        match *key {
            "minimum" => number("Minimum", &mut out, &mut notes),
            "maximum" => number("Maximum", &mut out, &mut notes),
            "multipleOf" => number("MultipleOf", &mut out, &mut notes),
            "minLength" => number("MinLength", &mut out, &mut notes),
            "maxLength" => number("MaxLength", &mut out, &mut notes),
            "minItems" => number("MinItems", &mut out, &mut notes),
            "maxItems" => number("MaxItems", &mut out, &mut notes),
            "minProperties" => number("MinProperties", &mut out, &mut notes),
            "maxProperties" => number("MaxProperties", &mut out, &mut notes),
            "exclusiveMinimum" | "exclusiveMaximum" | "uniqueItems" => {
                let name = match *key {
                    "exclusiveMinimum" => "ExclusiveMinimum",
                    "exclusiveMaximum" => "ExclusiveMaximum",
                    _ => "UniqueItems",
                };
                match v {
                    Value::Bool(b) => out.push(format!("kubebuilder:validation:{name}={b}")),
                    other => notes.push(format!("`{key}: {other}` is not a boolean")),
                }
            }
            "pattern" | "format" => {
                let name = if *key == "pattern" {
                    "Pattern"
                } else {
                    "Format"
                };
                match v {
                    Value::String(s) => {
                        out.push(format!("kubebuilder:validation:{name}={}", quoted(s)));
                    }
                    other => notes.push(format!("`{key}: {other}` is not a string")),
                }
            }
            "enum" => match v {
                Value::Array(values) => {
                    let texts: Vec<String> = values.iter().map(json).collect();
                    if texts.iter().any(|t| t.contains(';')) {
                        notes.push(
                            "an `enum` value contains `;`, which the Enum marker cannot hold"
                                .to_owned(),
                        );
                    } else {
                        out.push(format!("kubebuilder:validation:Enum={}", texts.join(";")));
                    }
                }
                other => notes.push(format!("`enum: {other}` is not a list")),
            },
            "default" => out.push(format!("kubebuilder:default={}", json(v))),
            "x-kubernetes-preserve-unknown-fields" if v == &Value::Bool(true) => {
                out.push("kubebuilder:pruning:PreserveUnknownFields".to_owned());
            }
            "x-kubernetes-embedded-resource" if v == &Value::Bool(true) => {
                out.push("kubebuilder:validation:EmbeddedResource".to_owned());
            }
            "x-kubernetes-map-type" | "x-kubernetes-list-type" => {
                let name = if *key == "x-kubernetes-map-type" {
                    "mapType"
                } else {
                    "listType"
                };
                match v {
                    Value::String(s) => out.push(format!("{name}={s}")),
                    other => notes.push(format!("`{key}: {other}` is not a string")),
                }
            }
            "x-kubernetes-list-map-keys" => match v {
                Value::Array(keys) => {
                    for k in keys {
                        match k {
                            Value::String(s) => out.push(format!("listMapKey={s}")),
                            other => notes.push(format!("list map key `{other}` is not a string")),
                        }
                    }
                }
                other => notes.push(format!("`{key}: {other}` is not a list")),
            },
            "x-kubernetes-validations" => match v {
                Value::Array(rules) => {
                    for rule in rules {
                        match rule_marker(rule) {
                            Ok(m) => out.push(m),
                            Err(e) => notes.push(e),
                        }
                    }
                }
                other => notes.push(format!("`{key}: {other}` is not a list")),
            },
            _ => {}
        }
    }
    (out, notes)
}

/// One `x-kubernetes-validations` rule as `+kubebuilder:validation:XValidation:...`.
fn rule_marker(rule: &Value) -> Result<String, String> {
    let Value::Object(m) = rule else {
        return Err(format!("validation rule `{rule}` is not an object"));
    };
    let mut args = Vec::new();
    for key in [
        "rule",
        "message",
        "messageExpression",
        "reason",
        "fieldPath",
    ] {
        match m.get(key) {
            Some(Value::String(s)) => args.push(format!("{key}={}", quoted(s))),
            Some(other) => return Err(format!("validation rule `{key}: {other}` is not a string")),
            None => {}
        }
    }
    if let Some(extra) = m.keys().find(|k| {
        !matches!(
            k.as_str(),
            "rule" | "message" | "messageExpression" | "reason" | "fieldPath"
        )
    }) {
        return Err(format!(
            "validation rule key `{extra}` has no XValidation argument"
        ));
    }
    if !m.contains_key("rule") {
        return Err("a validation rule without `rule`".to_owned());
    }
    Ok(format!(
        "kubebuilder:validation:XValidation:{}",
        args.join(",")
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ctxt::Ctxt;
    use crate::markers::TypeMarkers;

    /// The markers read back by the marker parser and applied by the CRD generator give
    /// the constraints they were made from.
    #[test]
    fn markers_read_back_to_the_same_constraints() {
        let node = json!({
            "type": "string",
            "minLength": 1, "maxLength": 253,
            "pattern": "^[a-z`]+(\\.[a-z]+)*$",
            "default": "a,b",
            "enum": ["a", "b`c"],
            "x-kubernetes-validations": [
                {"rule": "self.size() > 0 && self != \"x,y\"", "message": "no `x`", "reason": "FieldValueInvalid"}
            ],
        });
        let Value::Object(m) = &node else {
            unreachable!()
        };
        let (lines, notes) = markers(m, &[]);
        assert!(notes.is_empty(), "{notes:?}");
        let docs: Vec<syn::Attribute> = lines
            .iter()
            .map(|l| {
                let text = format!(" +{l}");
                syn::parse_quote!(#[doc = #text])
            })
            .collect();
        let cx = Ctxt::new();
        let found = TypeMarkers::from_field_attrs(&docs, &cx);
        let mut schema = json!({"type": "string"});
        crate::crd::validation::apply(&mut schema, found.iter(), &cx);
        cx.check().expect("markers parse");
        assert_eq!(schema, node);
    }

    #[test]
    fn unknown_rule_keys_are_notes() {
        let node = json!({"x-kubernetes-validations": [{"rule": "true", "optionalOldSelf": true}]});
        let Value::Object(m) = &node else {
            unreachable!()
        };
        let (lines, notes) = markers(m, &[]);
        assert!(lines.is_empty());
        assert_eq!(notes.len(), 1, "{notes:?}");
    }
}
