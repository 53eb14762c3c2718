//! Name and label validation (apimachinery's `validation` package): RFC 1123 names, the
//! per-resource name rule, label keys and values, and the metadata checks every write
//! runs. A leaf module: it imports nothing from this crate but the error causes.

use serde_json::Value;

use crate::errors::Cause;

/// How an object name is validated (kube-apiserver's per-resource `ValidateName`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// RFC 1123 subdomain: lowercase alphanumerics, `-` and `.`, at most 253 characters.
    Subdomain,
    /// RFC 1123 label: lowercase alphanumerics and `-`, at most 63 characters.
    Label,
    /// Anything that can be a path segment (`/` and `%` excluded, not `.` or `..`).
    PathSegment,
}

/// RFC 1123 subdomain.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(|part| is_label_chars(part, 253))
}

/// RFC 1123 label.
pub fn is_dns1123_label(s: &str) -> bool {
    is_label_chars(s, 63)
}

fn is_label_chars(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_name_part(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// A qualified name as label keys use it: `[prefix/]name`, the prefix a DNS subdomain,
/// the name at most 63 alphanumerics, `-`, `_` and `.`.
pub fn is_label_key(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    prefix.is_none_or(is_dns1123_subdomain) && is_name_part(name, 63)
}

/// A label value: empty, or at most 63 alphanumerics, `-`, `_` and `.`.
pub fn is_label_value(value: &str) -> bool {
    value.is_empty() || is_name_part(value, 63)
}

/// Validates `name` under `rule`; returns the 422 causes.
pub fn validate_name(name: &str, rule: NameRule, field: &str) -> Vec<Cause> {
    let ok = match rule {
        NameRule::Subdomain => is_dns1123_subdomain(name),
        NameRule::Label => is_dns1123_label(name),
        NameRule::PathSegment => {
            !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '%'])
        }
    };
    if ok {
        Vec::new()
    } else {
        let msg = match rule {
            NameRule::Subdomain => format!(
                "Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
            ),
            NameRule::Label => format!(
                "Invalid value: \"{name}\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
            ),
            NameRule::PathSegment => {
                format!("Invalid value: \"{name}\": may not contain '/' or '%'")
            }
        };
        vec![Cause::invalid(field, msg)]
    }
}

/// Validates labels and annotations keys/values; returns the 422 causes.
pub fn validate_labels(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(labels) = obj.pointer("/metadata/labels") {
        match labels.as_object() {
            Some(map) => {
                for (k, v) in map {
                    if !is_label_key(k) {
                        causes.push(Cause::invalid(
                            "metadata.labels",
                            format!("Invalid value: \"{k}\": name part must be a valid label key"),
                        ));
                    }
                    match v.as_str() {
                        Some(s) if is_label_value(s) => {}
                        _ => causes.push(Cause::invalid(
                            "metadata.labels",
                            format!("Invalid value: {v}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'"),
                        )),
                    }
                }
            }
            None if labels.is_null() => {}
            None => causes.push(Cause::invalid("metadata.labels", "must be an object")),
        }
    }
    if let Some(ann) = obj.pointer("/metadata/annotations") {
        let ok = ann.is_null()
            || ann
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_string));
        if !ok {
            causes.push(Cause::invalid(
                "metadata.annotations",
                "must be a map of strings",
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn subdomain_and_label_rules() {
        assert!(is_dns1123_subdomain("a.b-c.d"));
        assert!(!is_dns1123_subdomain("A"));
        assert!(!is_dns1123_subdomain("a..b"));
        assert!(is_dns1123_label("abc-1"));
        assert!(!is_dns1123_label("a.b"));
        assert!(!validate_name("x/y", NameRule::PathSegment, "metadata.name").is_empty());
        assert!(validate_name("a.b", NameRule::Subdomain, "metadata.name").is_empty());
    }

    #[test]
    fn label_keys_values_and_metadata() {
        assert!(is_label_key("example.com/app"));
        assert!(is_label_key("app_1.x"));
        assert!(!is_label_key("Bad Prefix/app"));
        assert!(!is_label_key("-app"));
        assert!(is_label_value(""));
        assert!(!is_label_value(&"x".repeat(64)));
        let bad = json!({"metadata": {"labels": {"ok": "-no"}, "annotations": {"a": 1}}});
        assert_eq!(validate_labels(&bad).len(), 2);
        assert!(validate_labels(&json!({"metadata": {"labels": {"a": "b"}}})).is_empty());
    }
}
