//! A JSON value as block-style YAML, deterministically (keys in the value's order, which
//! is sorted for `serde_json::Map`): strings plain when YAML would read them back as the
//! same string, else double-quoted with JSON escapes (valid YAML).

use serde_json::Value;

/// Whether `s` reads back as the same string when written plain.
fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == '_' || first == '/') {
        return false;
    }
    if s.ends_with(' ') || s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " ._/-()'+=,;".contains(c))
    {
        return false;
    }
    // YAML 1.1 booleans and nulls read as non-strings.
    !matches!(
        s.to_ascii_lowercase().as_str(),
        "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
    )
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if plain_ok(s) => s.clone(),
        Value::String(s) => serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(m) if m.is_empty() => "{}".into(),
        _ => String::new(),
    }
}

fn is_scalar(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => true,
    }
}

fn write(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let key = scalar(&Value::String(k.clone()));
                if is_scalar(x) {
                    out.push_str(&format!("{pad}{key}: {}\n", scalar(x)));
                } else {
                    out.push_str(&format!("{pad}{key}:\n"));
                    let child = if x.is_array() { indent } else { indent + 2 };
                    write(out, x, child);
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for x in a {
                if is_scalar(x) {
                    out.push_str(&format!("{pad}- {}\n", scalar(x)));
                } else {
                    let mut inner = String::new();
                    write(&mut inner, x, indent + 2);
                    // The first line of the item goes after "- ".
                    let inner = inner.strip_prefix(&format!("{pad}  ")).unwrap_or(&inner);
                    out.push_str(&format!("{pad}- {inner}"));
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}

/// `v` as a YAML document.
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    write(&mut out, v, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_values_render_as_block_yaml() {
        let v = json!({"a": {"b": [1, {"c": "x", "d": []}], "e": {}}, "f": "true", "g": "a: b"});
        assert_eq!(
            to_yaml(&v),
            "a:\n  b:\n  - 1\n  - c: x\n    d: []\n  e: {}\nf: \"true\"\ng: \"a: b\"\n"
        );
    }

    #[test]
    fn strings_that_yaml_would_retype_are_quoted() {
        for s in [
            "", "yes", "No", "1", "-1", "a #b", "x\ny", " lead", "[a]", "*x", "{a}",
        ] {
            assert!(!plain_ok(s), "{s:?}");
        }
        for s in [
            "string",
            "int64",
            "date-time",
            "Namespaced",
            ".spec.replicas",
        ] {
            assert_eq!(plain_ok(s), !s.starts_with('.'), "{s:?}");
        }
    }
}
