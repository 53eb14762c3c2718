//! A request's query string, decoded (kube-apiserver reads it with `url.ParseQuery`):
//! percent escapes and `+` undone, the last value of a repeated key kept.

use std::collections::HashMap;

/// The decoded query parameters of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Query(HashMap<String, String>);

impl Query {
    /// Parses `q` (the part after `?`, if any).
    pub(crate) fn parse(q: Option<&str>) -> Self {
        let mut out = HashMap::new();
        for pair in q.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            out.insert(percent_decode(k), percent_decode(v));
        }
        Query(out)
    }

    /// The value of `key`, if present (possibly empty).
    pub(crate) fn get(&self, key: &str) -> Option<&String> {
        self.0.get(key)
    }

    /// The value of `key` unless absent or empty.
    pub(crate) fn non_empty(&self, key: &str) -> Option<&String> {
        self.0.get(key).filter(|s| !s.is_empty())
    }

    /// Whether `key` is `true` or `1`.
    pub(crate) fn flag(&self, key: &str) -> bool {
        self.0.get(key).is_some_and(|v| v == "true" || v == "1")
    }
}

/// Undoes `%XX` escapes and `+` (a malformed escape is kept as written; bytes that are
/// not UTF-8 become U+FFFD).
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_keeps_the_last_value() {
        let q = Query::parse(Some(
            "labelSelector=app%3Dweb+x&limit=1&limit=2&watch=true&e=",
        ));
        assert_eq!(
            q.get("labelSelector").map(String::as_str),
            Some("app=web x")
        );
        assert_eq!(q.get("limit").map(String::as_str), Some("2"));
        assert!(q.flag("watch") && !q.flag("limit"));
        assert_eq!(q.get("e").map(String::as_str), Some(""));
        assert_eq!(q.non_empty("e"), None);
        assert_eq!(percent_decode("100%zz"), "100%zz");
        assert_eq!(Query::parse(None), Query::default());
    }
}
