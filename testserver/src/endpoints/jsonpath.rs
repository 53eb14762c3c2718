//! The JSONPath subset CRD `additionalPrinterColumns` use (client-go `util/jsonpath` as
//! apiextensions-apiserver's tableconvertor runs it): `.field`, `['field']`, `[n]`, `[*]`
//! and filters `[?(@.path=="value")]` / `!=`.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    All,
    Filter {
        path: Vec<Step>,
        equal: bool,
        value: Value,
    },
}

fn parse(path: &str) -> Option<Vec<Step>> {
    let p = path.trim();
    let p = p
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(p);
    let p = p.strip_prefix('$').unwrap_or(p);
    let b = p.as_bytes();
    let mut i = 0;
    let mut steps = Vec::new();
    while i < b.len() {
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                if j > start {
                    steps.push(Step::Field(p[start..j].to_string()));
                }
                i = j;
            }
            b'[' => {
                let close = find_close(p, i)?;
                let inner = p[i + 1..close].trim();
                steps.push(bracket(inner)?);
                i = close + 1;
            }
            _ => {
                // a leading bare name
                let start = i;
                let mut j = i;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                steps.push(Step::Field(p[start..j].to_string()));
                i = j;
            }
        }
    }
    Some(steps)
}

fn find_close(p: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut quote = None;
    for (k, c) in p[open..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + k);
                }
            }
            _ => {}
        }
    }
    None
}

fn unquote(s: &str) -> Option<String> {
    let s = s.trim();
    for q in ['\'', '"'] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return Some(inner.to_string());
        }
    }
    None
}

fn bracket(inner: &str) -> Option<Step> {
    if inner == "*" {
        return Some(Step::All);
    }
    if let Ok(n) = inner.parse::<i64>() {
        return Some(Step::Index(n));
    }
    if let Some(name) = unquote(inner) {
        return Some(Step::Field(name));
    }
    let f = inner.strip_prefix("?(")?.strip_suffix(')')?.trim();
    let (lhs, rhs, equal) = if let Some((l, r)) = f.split_once("==") {
        (l, r, true)
    } else {
        let (l, r) = f.split_once("!=")?;
        (l, r, false)
    };
    let path = parse(lhs.trim().strip_prefix('@')?)?;
    let rhs = rhs.trim();
    let value = match unquote(rhs) {
        Some(s) => Value::String(s),
        None => serde_json::from_str(rhs).ok()?,
    };
    Some(Step::Filter { path, equal, value })
}

fn eval<'a>(steps: &[Step], v: &'a Value, out: &mut Vec<&'a Value>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(v);
        return;
    };
    match step {
        Step::Field(name) => {
            if let Some(x) = v.get(name) {
                eval(rest, x, out);
            }
        }
        Step::Index(n) => {
            if let Some(a) = v.as_array() {
                let idx = if *n < 0 { a.len() as i64 + n } else { *n };
                if let Some(x) = usize::try_from(idx).ok().and_then(|i| a.get(i)) {
                    eval(rest, x, out);
                }
            }
        }
        Step::All => match v {
            Value::Array(a) => a.iter().for_each(|x| eval(rest, x, out)),
            Value::Object(m) => m.values().for_each(|x| eval(rest, x, out)),
            _ => {}
        },
        Step::Filter { path, equal, value } => {
            if let Some(a) = v.as_array() {
                for x in a {
                    let mut found = Vec::new();
                    eval(path, x, &mut found);
                    let hit = found.contains(&value);
                    if hit == *equal && (!found.is_empty() || !*equal) {
                        eval(rest, x, out);
                    }
                }
            }
        }
    }
}

/// The first value `path` selects in `v`, if any (`None` for an unparsable path too).
pub fn first(path: &str, v: &Value) -> Option<Value> {
    let steps = parse(path)?;
    let mut out = Vec::new();
    eval(&steps, v, &mut out);
    out.first().map(|x| (*x).clone())
}

/// A value as jsonpath prints it: strings bare, everything else as JSON.
pub fn print(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn printer_column_paths() {
        let obj = json!({"spec": {"replicas": 3, "tags": ["a", "b"], "x.y": 1},
            "status": {"conditions": [{"type": "Synced", "status": "False"},
                                      {"type": "Ready", "status": "True"}]}});
        assert_eq!(first(".spec.replicas", &obj), Some(json!(3)));
        assert_eq!(first(".spec.tags[1]", &obj), Some(json!("b")));
        assert_eq!(first(".spec['x.y']", &obj), Some(json!(1)));
        assert_eq!(
            first(".status.conditions[?(@.type==\"Ready\")].status", &obj),
            Some(json!("True"))
        );
        assert_eq!(
            first(".status.conditions[?(@.type=='Synced')].status", &obj),
            Some(json!("False"))
        );
        assert_eq!(first(".spec.missing", &obj), None);
        assert_eq!(
            first(".status.conditions[*].type", &obj),
            Some(json!("Synced"))
        );
        assert_eq!(first("{.spec.replicas}", &obj), Some(json!(3)));
    }
}
