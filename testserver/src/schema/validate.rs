//! OpenAPI v3 value validation of an object against its structural schema, the subset
//! kube-apiserver enforces for custom resources (kube-openapi `pkg/validation/validate`,
//! errors converted by apiextensions-apiserver `pkg/apiserver/validation/validation.go`):
//! type, nullable, int-or-string, format, enum, minimum/maximum (exclusive too),
//! multipleOf, min/maxLength, pattern, min/maxItems, uniqueItems, min/maxProperties,
//! required, additionalProperties, allOf/anyOf/oneOf/not, and list types.

use base64::Engine as _;
use serde_json::Value;

use super::causes::{ErrorType, FieldError};
use super::lists::validate_list;
use super::model::{Additional, Node};

const MAX_DEPTH: usize = 256;

/// Validates `value` at `path` (empty for the object root) against `node`, appending
/// errors. The root `apiVersion`, `kind` and `metadata` are the API machinery's, not the
/// schema's, and are skipped at `path == ""` (and in embedded resources).
pub fn validate(node: &Node, value: &Value, path: &str, errs: &mut Vec<FieldError>) {
    walk(node, value, path, errs, 0);
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn body_name(path: &str) -> &str {
    if path.is_empty() { "body" } else { path }
}

fn type_matches(node: &Node, value: &Value) -> bool {
    if node.int_or_string {
        return value.is_string() || is_integer(value);
    }
    match node.ty.as_deref() {
        None | Some("") => true,
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("number") => value.is_number(),
        Some("integer") => is_integer(value),
        Some(_) => true,
    }
}

fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn walk(node: &Node, value: &Value, path: &str, errs: &mut Vec<FieldError>, depth: usize) {
    if depth > MAX_DEPTH {
        errs.push(FieldError::invalid(path, value, "nested too deeply"));
        return;
    }
    if value.is_null() {
        if node.nullable || (node.ty.is_none() && !node.int_or_string) {
            return;
        }
        let ty = node.ty.as_deref().unwrap_or("string");
        errs.push(FieldError::new(
            ErrorType::TypeInvalid,
            path,
            Some(Value::String("null".into())),
            format!("{} in body must be of type {ty}: \"null\"", body_name(path)),
        ));
        return;
    }
    if !type_matches(node, value) {
        let ty = if node.int_or_string {
            "integer,string".to_owned()
        } else {
            node.ty.clone().unwrap_or_default()
        };
        errs.push(FieldError::new(
            ErrorType::TypeInvalid,
            path,
            Some(value.clone()),
            format!(
                "{} in body must be of type {ty}: {}",
                body_name(path),
                json_type_name(value)
            ),
        ));
        return;
    }
    common(node, value, path, errs, depth);
    match value {
        Value::Object(map) => {
            let root_like = path.is_empty() || node.embedded_resource;
            if node.embedded_resource {
                embedded(map, path, errs);
            }
            for req in &node.required {
                if !map.contains_key(req) {
                    errs.push(FieldError::required(&child(path, req), ""));
                }
            }
            if let Some(max) = node.max_properties
                && map.len() as u64 > max
            {
                errs.push(FieldError::new(
                    ErrorType::TooMany,
                    path,
                    Some(Value::from(map.len())),
                    format!("must have at most {max} items"),
                ));
            }
            if let Some(min) = node.min_properties
                && (map.len() as u64) < min
            {
                errs.push(FieldError::invalid(
                    path,
                    value,
                    format!(
                        "{} in body should have at least {min} properties",
                        body_name(path)
                    ),
                ));
            }
            for (k, v) in map {
                if root_like && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if k == "metadata"
                        && let (Some(meta), Some(Value::Object(m))) =
                            (node.properties.get("metadata"), Some(v))
                    {
                        // only metadata.name / generateName constraints apply (CRD docs:
                        // "Specifying a structural schema", metadata restrictions).
                        for f in ["name", "generateName"] {
                            if let (Some(s), Some(fv)) = (meta.properties.get(f), m.get(f)) {
                                walk(s, fv, &child(&child(path, "metadata"), f), errs, depth + 1);
                            }
                        }
                    }
                    continue;
                }
                let p = child(path, k);
                match node.properties.get(k) {
                    Some(s) => walk(s, v, &p, errs, depth + 1),
                    None => match &node.additional {
                        Some(Additional::Schema(s)) => walk(s, v, &p, errs, depth + 1),
                        Some(Additional::Bool(false)) if !node.preserve_unknown_fields => {
                            errs.push(FieldError::invalid(
                                &p,
                                v,
                                format!("{p} in body is a forbidden property"),
                            ));
                        }
                        _ => {}
                    },
                }
            }
        }
        Value::Array(items) => {
            if let Some(max) = node.max_items
                && items.len() as u64 > max
            {
                errs.push(FieldError::new(
                    ErrorType::TooMany,
                    path,
                    Some(Value::from(items.len())),
                    format!("must have at most {max} items"),
                ));
            }
            if let Some(min) = node.min_items
                && (items.len() as u64) < min
            {
                errs.push(FieldError::invalid(
                    path,
                    value,
                    format!(
                        "{} in body should have at least {min} items",
                        body_name(path)
                    ),
                ));
            }
            if node.unique_items
                && items
                    .iter()
                    .enumerate()
                    .any(|(i, it)| items[..i].contains(it))
            {
                errs.push(FieldError::invalid(
                    path,
                    value,
                    format!("{} in body shouldn't contain duplicates", body_name(path)),
                ));
            }
            validate_list(node, items, path, errs);
            if let Some(item_schema) = &node.items {
                for (i, it) in items.iter().enumerate() {
                    walk(item_schema, it, &format!("{path}[{i}]"), errs, depth + 1);
                }
            }
        }
        Value::String(s) => {
            let chars = s.chars().count() as u64;
            if let Some(max) = node.max_length
                && chars > max
            {
                let unit = if max == 1 { "byte" } else { "bytes" };
                errs.push(FieldError::new(
                    ErrorType::TooLong,
                    path,
                    Some(value.clone()),
                    format!("may not be more than {max} {unit}"),
                ));
            }
            if let Some(min) = node.min_length
                && chars < min
            {
                errs.push(FieldError::invalid(
                    path,
                    value,
                    format!(
                        "{} in body should be at least {min} chars long",
                        body_name(path)
                    ),
                ));
            }
            if let Some((src, re)) = &node.pattern
                && !re.is_match(s)
            {
                errs.push(FieldError::invalid(
                    path,
                    value,
                    format!("{} in body should match '{src}'", body_name(path)),
                ));
            }
            if let Some(fmt) = &node.format
                && !format_ok(fmt, s)
            {
                errs.push(FieldError::new(
                    ErrorType::TypeInvalid,
                    path,
                    Some(value.clone()),
                    format!(
                        "{} in body must be of type {fmt}: {}",
                        body_name(path),
                        super::causes::go_value(value)
                    ),
                ));
            }
        }
        Value::Number(n) => {
            let Some(f) = n.as_f64() else { return };
            let show = |x: f64| super::causes::go_value(&serde_json::json!(x));
            if let Some(max) = node.maximum {
                if node.exclusive_maximum && f >= max {
                    errs.push(FieldError::invalid(
                        path,
                        value,
                        format!(
                            "{} in body should be less than {}",
                            body_name(path),
                            show(max)
                        ),
                    ));
                } else if f > max {
                    errs.push(FieldError::invalid(
                        path,
                        value,
                        format!(
                            "{} in body should be less than or equal to {}",
                            body_name(path),
                            show(max)
                        ),
                    ));
                }
            }
            if let Some(min) = node.minimum {
                if node.exclusive_minimum && f <= min {
                    errs.push(FieldError::invalid(
                        path,
                        value,
                        format!(
                            "{} in body should be greater than {}",
                            body_name(path),
                            show(min)
                        ),
                    ));
                } else if f < min {
                    errs.push(FieldError::invalid(
                        path,
                        value,
                        format!(
                            "{} in body should be greater than or equal to {}",
                            body_name(path),
                            show(min)
                        ),
                    ));
                }
            }
            if let Some(m) = node.multiple_of
                && m > 0.0
            {
                let q = f / m;
                if (q - q.round()).abs() > 1e-9 {
                    errs.push(FieldError::invalid(
                        path,
                        value,
                        format!(
                            "{} in body should be a multiple of {}",
                            body_name(path),
                            show(m)
                        ),
                    ));
                }
            }
            if node.format.as_deref() == Some("int32")
                && let Some(i) = n.as_i64()
                && i32::try_from(i).is_err()
            {
                errs.push(FieldError::new(
                    ErrorType::TypeInvalid,
                    path,
                    Some(value.clone()),
                    format!(
                        "{} in body must be of type int32: {}",
                        body_name(path),
                        super::causes::go_value(value)
                    ),
                ));
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// enum and the combinators (`common` validators of kube-openapi).
fn common(node: &Node, value: &Value, path: &str, errs: &mut Vec<FieldError>, depth: usize) {
    if let Some(allowed) = &node.enumeration
        && !allowed.contains(value)
    {
        let shown: Vec<String> = allowed
            .iter()
            .map(|v| match v {
                Value::String(s) => super::causes::go_value(&Value::String(s.clone())),
                other => super::causes::go_value(&Value::String(other.to_string())),
            })
            .collect();
        errs.push(FieldError::new(
            ErrorType::NotSupported,
            path,
            Some(value.clone()),
            format!("supported values: {}", shown.join(", ")),
        ));
    }
    for s in &node.all_of {
        walk(s, value, path, errs, depth + 1);
    }
    let passes = |s: &Node| {
        let mut e = vec![];
        walk(s, value, path, &mut e, depth + 1);
        e.is_empty()
    };
    if !node.any_of.is_empty() && !node.any_of.iter().any(passes) {
        errs.push(FieldError::invalid(
            path,
            value,
            format!(
                "{} in body must validate at least one schema (anyOf)",
                body_name(path)
            ),
        ));
    }
    if !node.one_of.is_empty() && node.one_of.iter().filter(|s| passes(s)).count() != 1 {
        errs.push(FieldError::invalid(
            path,
            value,
            format!(
                "{} in body must validate one and only one schema (oneOf)",
                body_name(path)
            ),
        ));
    }
    if let Some(n) = &node.not
        && passes(n)
    {
        errs.push(FieldError::invalid(
            path,
            value,
            format!(
                "{} in body must not validate the schema (not)",
                body_name(path)
            ),
        ));
    }
}

fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "\"null\"",
        Value::Bool(_) => "\"boolean\"",
        Value::Number(n) if n.is_f64() => "\"number\"",
        Value::Number(_) => "\"integer\"",
        Value::String(_) => "\"string\"",
        Value::Array(_) => "\"array\"",
        Value::Object(_) => "\"object\"",
    }
}

/// The string formats kube-apiserver checks for CRDs (apiextensions-apiserver
/// `pkg/apiserver/validation/formats.go` supported list); unknown formats pass.
pub fn format_ok(format: &str, s: &str) -> bool {
    match format {
        "date-time" | "datetime" => s.parse::<jiff::Timestamp>().is_ok(),
        "date" => s.len() == 10 && s.parse::<jiff::civil::Date>().is_ok(),
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => s.len() == 36 && uuid::Uuid::parse_str(s).is_ok(),
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => s.split_once('/').is_some_and(|(ip, bits)| {
            let max = if ip.parse::<std::net::Ipv4Addr>().is_ok() {
                32
            } else if ip.parse::<std::net::Ipv6Addr>().is_ok() {
                128
            } else {
                return false;
            };
            bits.parse::<u8>().is_ok_and(|b| b <= max)
        }),
        "hostname" => {
            !s.is_empty()
                && s.len() <= 255
                && s.split('.').all(|l| {
                    !l.is_empty()
                        && l.len() <= 63
                        && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                        && !l.starts_with('-')
                        && !l.ends_with('-')
                })
        }
        "mac" => {
            let parts: Vec<&str> = s.split([':', '-']).collect();
            matches!(parts.len(), 6 | 8 | 20)
                && parts
                    .iter()
                    .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
        }
        _ => true,
    }
}

/// An `x-kubernetes-embedded-resource` object needs `apiVersion` and `kind`
/// (apiextensions-apiserver `pkg/apiserver/schema/objectmeta/validation.go`,
/// `validateEmbeddedResource`).
fn embedded(map: &serde_json::Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    for key in ["apiVersion", "kind"] {
        let p = child(path, key);
        match map.get(key) {
            None => errs.push(FieldError::required(&p, "must not be empty")),
            Some(Value::String(s)) if s.is_empty() => errs.push(FieldError::invalid(
                &p,
                &Value::String(String::new()),
                "must not be empty",
            )),
            Some(Value::String(s)) if key == "apiVersion" && s.matches('/').count() > 1 => errs
                .push(FieldError::invalid(
                    &p,
                    &Value::String(s.clone()),
                    format!("unexpected GroupVersion string: {s}"),
                )),
            Some(Value::String(_)) => {}
            Some(other) => errs.push(FieldError::invalid(&p, other, "must be a string")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errs(schema: Value, value: Value) -> Vec<String> {
        let n = Node::parse(&schema, "").expect("schema parses");
        let mut e = vec![];
        validate(&n, &value, "", &mut e);
        e.iter().map(ToString::to_string).collect()
    }

    /// objectmeta/validation.go `validateEmbeddedResource`: apiVersion and kind required.
    #[test]
    fn embedded_resource_needs_apiversion_and_kind() {
        let schema = json!({"type": "object", "properties": {"tpl": {"type": "object",
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}});
        assert_eq!(
            errs(
                schema.clone(),
                json!({"tpl": {"apiVersion": "v1", "kind": "Pod"}})
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            errs(schema.clone(), json!({"tpl": {"kind": ""}})),
            vec![
                "tpl.apiVersion: Required value: must not be empty",
                "tpl.kind: Invalid value: \"\": must not be empty"
            ]
        );
        assert_eq!(
            errs(schema, json!({"tpl": {"apiVersion": 1, "kind": "K"}})),
            vec!["tpl.apiVersion: Invalid value: 1: must be a string"]
        );
    }

    /// CRD docs "IntOrString" and "Defaulting and Nullable": int-or-string accepts both,
    /// `nullable` admits null, a non-nullable null is a type error.
    #[test]
    fn int_or_string_and_nullable() {
        let schema = json!({"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "opt": {"type": "string", "nullable": true},
            "req": {"type": "string"}}});
        assert_eq!(
            errs(schema.clone(), json!({"port": 80, "opt": null})),
            Vec::<String>::new()
        );
        assert_eq!(
            errs(schema.clone(), json!({"port": "http"})),
            Vec::<String>::new()
        );
        assert_eq!(
            errs(schema, json!({"req": null})),
            vec!["req: Invalid value: \"null\": req in body must be of type string: \"null\""]
        );
    }

    /// Formats kube-apiserver checks for CRDs (formats.go): date, byte, uuid, ipv4/6,
    /// cidr, hostname, mac; unknown formats pass.
    #[test]
    fn formats() {
        for (f, good, bad) in [
            ("date", "2024-02-29", "2024-02-30"),
            ("date-time", "2024-01-01T00:00:00Z", "2024-01-01"),
            ("byte", "aGVsbG8=", "not base64!"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
            ("ipv4", "10.0.0.1", "10.0.0.256"),
            ("ipv6", "fd00::1", "fd00:::1"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("hostname", "a.example.com", "-a.example.com"),
            ("mac", "00:1a:2b:3c:4d:5e", "00:1a"),
        ] {
            assert!(format_ok(f, good), "{f} {good}");
            assert!(!format_ok(f, bad), "{f} {bad}");
        }
        assert!(format_ok("something-else", "anything"));
    }
}
