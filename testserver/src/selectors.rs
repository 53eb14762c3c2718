//! Label and field selectors in the query-string syntax kube-apiserver accepts.
//!
//! Labels: `a`, `!a`, `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a>1`, `a<1`,
//! comma-separated and all required. Fields: `f=v`, `f==v`, `f!=v`, comma-separated.

use std::collections::BTreeMap;

use serde_json::Value;

/// A malformed selector (reported as 400 BadRequest).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// The text could not be parsed.
    #[error("unable to parse requirement: {0}")]
    Parse(String),
    /// A label key or value is not valid.
    #[error("invalid label {0}")]
    InvalidLabel(String),
    /// The field is not selectable on this resource.
    #[error("field label not supported: {0}")]
    UnsupportedField(String),
}

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelRequirement {
    /// `key`
    Exists(String),
    /// `!key`
    DoesNotExist(String),
    /// `key=value` / `key==value`
    Equals(String, String),
    /// `key!=value`
    NotEquals(String, String),
    /// `key in (a,b)`
    In(String, Vec<String>),
    /// `key notin (a,b)`
    NotIn(String, Vec<String>),
    /// `key>n`
    GreaterThan(String, i64),
    /// `key<n`
    LessThan(String, i64),
}

/// A parsed label selector: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// The requirements, all of which must match.
    pub requirements: Vec<LabelRequirement>,
}

impl LabelSelector {
    /// Parses the `labelSelector` query parameter.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut parser = LabelParser {
            chars: text.chars().collect(),
            pos: 0,
        };
        let mut requirements = Vec::new();
        parser.skip_ws();
        if parser.at_end() {
            return Ok(LabelSelector { requirements });
        }
        loop {
            requirements.push(parser.requirement()?);
            parser.skip_ws();
            if parser.at_end() {
                break;
            }
            if !parser.eat(',') {
                return Err(SelectorError::Parse(format!(
                    "expected ',' at position {} in {text:?}",
                    parser.pos
                )));
            }
        }
        Ok(LabelSelector { requirements })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| match r {
            LabelRequirement::Exists(k) => labels.contains_key(k),
            LabelRequirement::DoesNotExist(k) => !labels.contains_key(k),
            LabelRequirement::Equals(k, v) => labels.get(k) == Some(v),
            LabelRequirement::NotEquals(k, v) => labels.get(k) != Some(v),
            LabelRequirement::In(k, vs) => labels.get(k).is_some_and(|l| vs.contains(l)),
            LabelRequirement::NotIn(k, vs) => labels.get(k).is_none_or(|l| !vs.contains(l)),
            LabelRequirement::GreaterThan(k, n) => labels
                .get(k)
                .and_then(|l| l.parse::<i64>().ok())
                .is_some_and(|l| l > *n),
            LabelRequirement::LessThan(k, n) => labels
                .get(k)
                .and_then(|l| l.parse::<i64>().ok())
                .is_some_and(|l| l < *n),
        })
    }

    /// Whether the object's `metadata.labels` satisfy the selector.
    pub fn matches_object(&self, obj: &Value) -> bool {
        if self.is_empty() {
            return true;
        }
        let labels: BTreeMap<String, String> = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        self.matches(&labels)
    }
}

struct LabelParser {
    chars: Vec<char>,
    pos: usize,
}

impl LabelParser {
    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        if self.pos + n <= self.chars.len()
            && self.chars[self.pos..self.pos + n]
                .iter()
                .copied()
                .eq(s.chars())
        {
            self.pos += n;
            true
        } else {
            false
        }
    }

    /// A key or value: everything up to a delimiter.
    fn word(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_whitespace() || matches!(c, ',' | '=' | '!' | '(' | ')' | '<' | '>') {
                break;
            }
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn requirement(&mut self) -> Result<LabelRequirement, SelectorError> {
        self.skip_ws();
        if self.eat('!') {
            self.skip_ws();
            let key = self.word();
            validate_key(&key)?;
            return Ok(LabelRequirement::DoesNotExist(key));
        }
        let key = self.word();
        validate_key(&key)?;
        self.skip_ws();
        if self.at_end() || self.peek() == Some(',') {
            return Ok(LabelRequirement::Exists(key));
        }
        if self.eat_str("==") || self.eat('=') {
            self.skip_ws();
            let value = self.word();
            validate_value(&value)?;
            return Ok(LabelRequirement::Equals(key, value));
        }
        if self.eat_str("!=") {
            self.skip_ws();
            let value = self.word();
            validate_value(&value)?;
            return Ok(LabelRequirement::NotEquals(key, value));
        }
        if self.eat('>') || self.eat('<') {
            let greater = self.chars[self.pos - 1] == '>';
            self.skip_ws();
            let value = self.word();
            let n: i64 = value
                .parse()
                .map_err(|_| SelectorError::Parse(format!("{value:?} is not an integer")))?;
            return Ok(if greater {
                LabelRequirement::GreaterThan(key, n)
            } else {
                LabelRequirement::LessThan(key, n)
            });
        }
        let op = self.word();
        let values = match op.as_str() {
            "in" | "notin" => self.value_set()?,
            other => {
                return Err(SelectorError::Parse(format!(
                    "unknown operator {other:?} after key {key:?}"
                )));
            }
        };
        Ok(if op == "in" {
            LabelRequirement::In(key, values)
        } else {
            LabelRequirement::NotIn(key, values)
        })
    }

    fn value_set(&mut self) -> Result<Vec<String>, SelectorError> {
        self.skip_ws();
        if !self.eat('(') {
            return Err(SelectorError::Parse(
                "expected '(' after set operator".into(),
            ));
        }
        let mut values = Vec::new();
        loop {
            self.skip_ws();
            let value = self.word();
            validate_value(&value)?;
            values.push(value);
            self.skip_ws();
            if self.eat(')') {
                break;
            }
            if !self.eat(',') {
                return Err(SelectorError::Parse(
                    "expected ',' or ')' in value set".into(),
                ));
            }
        }
        Ok(values)
    }
}

/// Validates a label key (`[prefix/]name`).
pub fn validate_key(key: &str) -> Result<(), SelectorError> {
    if crate::validation::is_label_key(key) {
        Ok(())
    } else {
        Err(SelectorError::InvalidLabel(format!("key {key:?}")))
    }
}

/// Validates a label value (may be empty).
pub fn validate_value(value: &str) -> Result<(), SelectorError> {
    if crate::validation::is_label_value(value) {
        Ok(())
    } else {
        Err(SelectorError::InvalidLabel(format!("value {value:?}")))
    }
}

/// One field requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// Dotted field path, e.g. `status.phase`.
    pub field: String,
    /// The value to compare with.
    pub value: String,
    /// `!=` rather than `=`.
    pub negated: bool,
}

/// A parsed field selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// Requirements, all of which must hold.
    pub requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` parameter, checking each field against `supported`
    /// (`metadata.name` and `metadata.namespace` are always supported).
    pub fn parse(text: &str, supported: &[String]) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        for part in split_unescaped_commas(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (field, value, negated) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, false)
            } else {
                return Err(SelectorError::Parse(format!(
                    "invalid field selector requirement {part:?}"
                )));
            };
            let field = field.trim().to_string();
            if field != "metadata.name"
                && field != "metadata.namespace"
                && !supported.contains(&field)
            {
                return Err(SelectorError::UnsupportedField(field));
            }
            requirements.push(FieldRequirement {
                field,
                value: unescape(value.trim()),
                negated,
            });
        }
        Ok(FieldSelector { requirements })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether the object satisfies every requirement.
    pub fn matches_object(&self, obj: &Value) -> bool {
        self.requirements.iter().all(|r| {
            let actual = field_value(obj, &r.field);
            (actual == r.value) != r.negated
        })
    }
}

fn split_unescaped_commas(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            current.push('\\');
            current.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The string value of a dotted field in an object, as field selectors see it (missing is `""`).
pub fn field_value(obj: &Value, field: &str) -> String {
    let mut cur = obj;
    for part in field.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => {
                // Booleans default to false for selector purposes.
                return match field {
                    "spec.unschedulable" | "spec.hostNetwork" => "false".into(),
                    _ => String::new(),
                };
            }
        }
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Object(m) if field == "source" => m
            .get("component")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_every_operator() {
        let s = LabelSelector::parse(
            "app=web, tier==fe,env!=prod,x in (a, b),y notin (c),z,!gone,n>3,m<2",
        )
        .unwrap();
        assert_eq!(s.requirements.len(), 9);
        let l = labels(&[
            ("app", "web"),
            ("tier", "fe"),
            ("env", "dev"),
            ("x", "b"),
            ("y", "d"),
            ("z", ""),
            ("n", "4"),
            ("m", "1"),
        ]);
        assert!(s.matches(&l));
        let mut l2 = l.clone();
        l2.insert("gone".into(), "1".into());
        assert!(!s.matches(&l2));
    }

    #[test]
    fn notin_matches_missing_key_but_in_does_not() {
        assert!(
            LabelSelector::parse("a notin (x)")
                .unwrap()
                .matches(&labels(&[]))
        );
        assert!(
            !LabelSelector::parse("a in (x)")
                .unwrap()
                .matches(&labels(&[]))
        );
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["a in x", "a=(", "a b", "a in (x", "-bad=1", "a=b c"] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn field_selector_rejects_unknown_fields() {
        assert!(matches!(
            FieldSelector::parse("spec.foo=1", &[]),
            Err(SelectorError::UnsupportedField(_))
        ));
        let s = FieldSelector::parse(
            "status.phase!=Running,metadata.name=a",
            &["status.phase".to_string()],
        )
        .unwrap();
        let obj = serde_json::json!({"metadata": {"name": "a"}, "status": {"phase": "Pending"}});
        assert!(s.matches_object(&obj));
    }

    proptest! {
        #[test]
        fn equality_selector_round_trips(key in "[a-z][a-z0-9]{0,10}", value in "[a-z0-9]{1,10}") {
            let s = LabelSelector::parse(&format!("{key}={value}")).unwrap();
            let l = labels(&[(&key, &value)]);
            prop_assert!(s.matches(&l));
            let n = LabelSelector::parse(&format!("{key}!={value}")).unwrap();
            prop_assert!(!n.matches(&l));
        }

        #[test]
        fn parser_never_panics(text in ".{0,40}") {
            let _ = LabelSelector::parse(&text);
            let _ = FieldSelector::parse(&text, &[]);
        }
    }
}
