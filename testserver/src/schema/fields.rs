//! Server-side field validation (`fieldValidation=Strict|Warn|Ignore` on create, update
//! and patch; KEP-2885, e2e `test/e2e/apimachinery/field_validation.go`): unknown fields
//! (what pruning drops, or what a built-in type does not declare) and duplicate fields
//! (which vanish once the body is parsed, so they are found while parsing the raw bytes).

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::causes::{ErrorType, FieldError, Invalid};

/// The `fieldValidation` directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop unknown fields silently.
    Ignore,
    /// Drop them and answer a `Warning` header per field (the default).
    #[default]
    Warn,
    /// Refuse the request (400 on create and update).
    Strict,
}

impl FieldValidation {
    /// Parses the query parameter (`None` or empty = `Warn`). Any other value is refused
    /// as apimachinery's `ValidateCreateOptions` / `ValidateUpdateOptions` /
    /// `ValidatePatchOptions` do: the caller answers
    /// `err.to_api_error("meta.k8s.io", "CreateOptions", "")` (422,
    /// `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: ...`).
    pub fn parse(param: Option<&str>) -> Result<FieldValidation, Invalid> {
        match param.unwrap_or("") {
            "" | "Warn" => Ok(FieldValidation::Warn),
            "Strict" => Ok(FieldValidation::Strict),
            "Ignore" => Ok(FieldValidation::Ignore),
            other => Err(Invalid {
                errors: vec![FieldError::new(
                    ErrorType::NotSupported,
                    "fieldValidation",
                    Some(Value::String(other.to_owned())),
                    "supported values: \"Ignore\", \"Strict\", \"Warn\"",
                )],
            }),
        }
    }
}

/// What strict decoding found in a body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldReport {
    /// Paths of unknown fields (`spec.x`).
    pub unknown: Vec<String>,
    /// Paths of duplicated fields (`spec.y`).
    pub duplicates: Vec<String>,
}

impl FieldReport {
    /// The messages, `unknown field "spec.x"` then `duplicate field "spec.y"`.
    pub fn messages(&self) -> Vec<String> {
        self.unknown
            .iter()
            .map(|p| format!("unknown field \"{p}\""))
            .chain(
                self.duplicates
                    .iter()
                    .map(|p| format!("duplicate field \"{p}\"")),
            )
            .collect()
    }

    /// Applies `mode`: `Ok(warnings)` (one `Warning` header each under `Warn`, none under
    /// `Ignore`), or under `Strict` the error message kube-apiserver's strict decoder gives:
    /// `strict decoding error: unknown field "spec.x", duplicate field "spec.y"` (the
    /// caller answers 400 BadRequest on create/update, or what `handlers/patch.go` uses).
    pub fn outcome(&self, mode: FieldValidation) -> Result<Vec<String>, String> {
        let msgs = self.messages();
        match mode {
            FieldValidation::Ignore => Ok(Vec::new()),
            FieldValidation::Warn => Ok(msgs),
            FieldValidation::Strict if msgs.is_empty() => Ok(Vec::new()),
            FieldValidation::Strict => Err(format!("strict decoding error: {}", msgs.join(", "))),
        }
    }
}

/// Parses a JSON body, recording every duplicated key's path. The value keeps the last
/// occurrence, as Go's decoder does.
pub fn parse_with_duplicates(bytes: &[u8]) -> Result<(Value, Vec<String>), serde_json::Error> {
    let mut dups = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Seed {
        path: String::new(),
        dups: &mut dups,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, dups))
}

struct Seed<'a> {
    path: String,
    dups: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let seed = Seed {
                path: format!("{}[{}]", self.path, out.len()),
                dups: &mut *self.dups,
            };
            match seq.next_element_seed(seed)? {
                Some(v) => out.push(v),
                None => break,
            }
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if out.contains_key(&key) && !self.dups.contains(&path) {
                self.dups.push(path.clone());
            }
            let v = map.next_value_seed(Seed {
                path,
                dups: &mut *self.dups,
            })?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// field_validation.go e2e: duplicates are reported by path and the last value wins.
    #[test]
    fn duplicates_found_in_raw_bytes() {
        let body = br#"{"spec": {"y": 1, "y": 2, "l": [{"a": 1, "a": 2}]}, "spec2": {}}"#;
        let (v, dups) = parse_with_duplicates(body).expect("valid json");
        assert_eq!(dups, vec!["spec.y", "spec.l[0].a"]);
        assert_eq!(v, json!({"spec": {"y": 2, "l": [{"a": 2}]}, "spec2": {}}));
    }

    /// KEP-2885: Strict refuses with every field named, Warn warns per field, Ignore is
    /// silent; an unknown directive is refused.
    #[test]
    fn modes() {
        let r = FieldReport {
            unknown: vec!["spec.x".into()],
            duplicates: vec!["spec.y".into()],
        };
        assert_eq!(
            r.outcome(FieldValidation::Strict),
            Err(
                "strict decoding error: unknown field \"spec.x\", duplicate field \"spec.y\""
                    .into()
            )
        );
        assert_eq!(
            r.outcome(FieldValidation::Warn),
            Ok(vec![
                "unknown field \"spec.x\"".into(),
                "duplicate field \"spec.y\"".into()
            ])
        );
        assert_eq!(r.outcome(FieldValidation::Ignore), Ok(vec![]));
        assert_eq!(FieldValidation::parse(None), Ok(FieldValidation::Warn));
        assert_eq!(
            FieldValidation::parse(Some("Strict")),
            Ok(FieldValidation::Strict)
        );
        let bad = FieldValidation::parse(Some("strict")).expect_err("case matters");
        assert_eq!(
            bad.to_api_error("meta.k8s.io", "CreateOptions", "").message,
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported values: \"Ignore\", \"Strict\", \"Warn\""
        );
    }

    /// Bad JSON is an error, never a panic.
    #[test]
    fn bad_json_is_an_error() {
        assert!(parse_with_duplicates(b"{\"a\": ").is_err());
        assert!(parse_with_duplicates(b"{} x").is_err());
    }

    proptest::proptest! {
        /// Arbitrary bytes never panic the duplicate-aware parser, and valid JSON parses to
        /// what serde_json parses.
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
                        text in "[\\[\\]{}:,\" a-c0-9]{0,40}") {
            let _ = parse_with_duplicates(&bytes);
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                let (w, _) = parse_with_duplicates(text.as_bytes()).expect("valid JSON parses");
                proptest::prop_assert_eq!(w, v);
            }
        }
    }
}
