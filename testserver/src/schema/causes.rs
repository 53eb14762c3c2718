//! Field errors as kube-apiserver reports them: apimachinery's `field.Error`
//! (`pkg/util/validation/field/errors.go`: type, field path, bad value, detail) and their
//! aggregation into a 422 `Invalid` status (`apierrors.NewInvalid`: `Kind.group "name" is
//! invalid: ...`, one `details.causes[]` entry per error).

use serde_json::Value;

use crate::errors::{ApiError, Cause, Reason};

/// `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    /// `FieldValueRequired` — "Required value".
    Required,
    /// `FieldValueInvalid` — "Invalid value".
    Invalid,
    /// `FieldValueTypeInvalid` — "Invalid value" (wrong JSON type or format).
    TypeInvalid,
    /// `FieldValueNotSupported` — "Unsupported value" (enum).
    NotSupported,
    /// `FieldValueDuplicate` — "Duplicate value".
    Duplicate,
    /// `FieldValueForbidden` — "Forbidden".
    Forbidden,
    /// `FieldValueTooLong` — "Too long".
    TooLong,
    /// `FieldValueTooMany` — "Too many".
    TooMany,
    /// `InternalError` — "Internal error".
    Internal,
}

impl ErrorType {
    /// The `details.causes[].reason` string.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
        }
    }

    fn label(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }

    /// Types whose body never shows the bad value (`ErrorBody` in field/errors.go).
    fn omits_value(self) -> bool {
        matches!(
            self,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        )
    }
}

/// One field error (`field.Error`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// The error type.
    pub kind: ErrorType,
    /// Field path, e.g. `spec.ports[0].port`.
    pub field: String,
    /// The offending value (`None` = omitted from the message).
    pub value: Option<Value>,
    /// Extra detail after the value.
    pub detail: String,
}

impl FieldError {
    /// A `field.Invalid(path, value, detail)`.
    pub fn invalid(field: &str, value: &Value, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, Some(value.clone()), detail)
    }

    /// A `field.Required(path, detail)`.
    pub fn required(field: &str, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, None, detail)
    }

    /// An error of any type.
    pub fn new(
        kind: ErrorType,
        field: &str,
        value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            kind,
            field: field.to_owned(),
            value,
            detail: detail.into(),
        }
    }

    /// `ErrorBody()`: `Invalid value: 11: spec.replicas in body should be ...`.
    pub fn body(&self) -> String {
        let mut s = self.kind.label().to_owned();
        if !self.kind.omits_value()
            && let Some(v) = &self.value
        {
            s.push_str(": ");
            s.push_str(&go_value(v));
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// The cause entry of a Status.
    pub fn cause(&self) -> Cause {
        Cause {
            reason: self.kind.reason().to_owned(),
            message: self.body(),
            field: self.field.clone(),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// How Go prints a decoded JSON value in a field error: `%v` for numbers and booleans, `%q`
/// for strings, `%#v` for maps and slices (`map[string]interface {}{"a":1}`), `"null"` for
/// null.
pub fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "\"null\"".into(),
        Value::String(s) => quote(s),
        Value::Bool(_) | Value::Number(_) => go_scalar(v),
        _ => go_syntax(v),
    }
}

/// Go's `%+v` (and `%v`) of a decoded JSON value: `map[a:1 b:[x y]]`, keys sorted, strings
/// bare, numbers as float64, null as `<nil>` (how `handlers/patch.go` prints a strategic
/// merge patch in its strict-validation error).
pub fn go_print(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), go_float),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_print).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_print(&map[k.as_str()])))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn go_scalar(v: &Value) -> String {
    match v {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => go_float(f),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Go's `%v` for a float64: shortest representation, exponent form at >= 1e21 or < 1e-4.
fn go_float(f: f64) -> String {
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e21).contains(&a) {
        let s = format!("{f:e}");
        // Rust: 1e21 / 1.5e-5; Go: 1e+21 / 1.5e-05
        match s.split_once('e') {
            Some((m, e)) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', e),
                };
                format!("{m}e{sign}{digits:0>2}")
            }
            None => s,
        }
    } else {
        f.to_string()
    }
}

fn go_syntax(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::String(s) => quote(s),
        Value::Bool(_) | Value::Number(_) => go_scalar(v),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_syntax).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", quote(k), go_syntax(&map[k.as_str()])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// A failed validation: the field errors, in the order they were found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", aggregate(.errors))]
pub struct Invalid {
    /// Every error.
    pub errors: Vec<FieldError>,
}

/// `utilerrors.NewAggregate(...).Error()`: one message as is, several in `[a, b]`, duplicate
/// messages once.
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut seen = std::collections::HashSet::new();
    let msgs: Vec<String> = errors
        .iter()
        .map(ToString::to_string)
        .filter(|m| seen.insert(m.clone()))
        .collect();
    if msgs.len() == 1 {
        msgs.into_iter().next().unwrap_or_default()
    } else {
        format!("[{}]", msgs.join(", "))
    }
}

impl Invalid {
    /// The 422 kube-apiserver answers: `Kind.group "name" is invalid: <errors>`, with
    /// `details.{name,group,kind,causes}` (`apierrors.NewInvalid`, where `details.kind` is
    /// the Kind, not the resource).
    pub fn to_api_error(&self, group: &str, kind: &str, name: &str) -> ApiError {
        let qualified = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        let mut err = ApiError::new(
            422,
            Reason::Invalid,
            format!(
                "{qualified} {} is invalid: {}",
                quote(name),
                aggregate(&self.errors)
            ),
        );
        err.details.name = Some(name.to_owned());
        err.details.group = Some(group.to_owned());
        err.details.kind = Some(kind.to_owned());
        err.details.causes = self.errors.iter().map(FieldError::cause).collect();
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The message format of issue 17 / apiextensions-apiserver
    /// `pkg/apiserver/validation/validation.go` (maximum → field.Invalid with go-openapi's
    /// `should be less than or equal to`).
    #[test]
    fn invalid_message_matches_kube_apiserver() {
        let e = Invalid {
            errors: vec![FieldError::invalid(
                "spec.replicas",
                &json!(11),
                "spec.replicas in body should be less than or equal to 10",
            )],
        };
        let api = e.to_api_error("example.com", "Foo", "x");
        assert_eq!(api.code, 422);
        assert_eq!(
            api.message,
            "Foo.example.com \"x\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
        );
        assert_eq!(api.details.causes[0].reason, "FieldValueInvalid");
        assert_eq!(api.details.causes[0].field, "spec.replicas");
    }

    /// field/errors.go `ErrorBody`: Required omits the value; several errors aggregate in `[]`.
    #[test]
    fn several_errors_are_bracketed_and_required_omits_value() {
        let e = Invalid {
            errors: vec![
                FieldError::required("spec.a", ""),
                FieldError::invalid("spec.b", &json!("x"), "bad"),
            ],
        };
        assert_eq!(
            e.to_string(),
            "[spec.a: Required value, spec.b: Invalid value: \"x\": bad]"
        );
    }

    /// Go `%#v` / `%v` renderings used in field errors.
    #[test]
    fn go_value_rendering() {
        assert_eq!(
            go_value(&json!({"b": 1, "a": "x"})),
            "map[string]interface {}{\"a\":\"x\", \"b\":1}"
        );
        assert_eq!(go_value(&json!([1, true])), "[]interface {}{1, true}");
        assert_eq!(go_value(&json!(1.5)), "1.5");
        assert_eq!(go_value(&json!(1e21)), "1e+21");
        assert_eq!(go_value(&Value::Null), "\"null\"");
        assert_eq!(
            go_print(&json!({"spec": {"b": [1, "x", null], "a": true, "f": 2.5}})),
            "map[spec:map[a:true b:[1 x <nil>] f:2.5]]"
        );
    }
}
