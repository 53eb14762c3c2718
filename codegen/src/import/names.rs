//! Rust names for what a CRD schema calls by JSON names: fields (camelCase →
//! snake_case, a `#[serde(rename)]` only when serde's `rename_all = "camelCase"` would
//! not give the JSON name back), types (the parent's name + the field's, PascalCase) and
//! enum variants (the value in PascalCase), all valid identifiers, never keywords, and
//! unique within their scope.

use std::collections::BTreeSet;

use crate::crd::serde_attrs::RenameRule;

/// Rust's strict and reserved keywords (2024 edition), which a generated identifier
/// gets a trailing `_` for (raw identifiers cannot spell `self`, `crate` ...).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Type names the generated module already uses (its imports and the prelude): a CRD's
/// kind or a nested type never takes one.
pub const RESERVED_TYPE_NAMES: &[&str] = &[
    "BTreeMap",
    "ByteString",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "Deserialize",
    "Eq",
    "Hash",
    "IntOrString",
    "ObjectMeta",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Self",
    "Serialize",
    "String",
    "Time",
    "Value",
    "Vec",
    "Box",
];

/// Splits a JSON name into words: at non-alphanumeric characters, at a lower-case letter
/// or digit followed by an upper-case one (`tlsConfig`), and before the last capital of
/// an acronym followed by a lower-case letter (`HTTPRoute` → `HTTP`, `Route`).
pub fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `PascalCase` of a JSON name, each word capitalised and the rest lower-cased (so an
/// acronym is `Http`, as Rust's naming convention and clippy's `upper_case_acronyms`
/// want); empty when the name has no alphanumeric character.
pub fn pascal(name: &str) -> String {
    words(name)
        .iter()
        .map(|w| {
            let mut cs = w.chars();
            match cs.next() {
                Some(first) => {
                    first.to_ascii_uppercase().to_string() + &cs.as_str().to_ascii_lowercase()
                }
                None => String::new(),
            }
        })
        .collect()
}

/// `snake_case` of a JSON name (`ipAddresses` → `ip_addresses`, `URL` → `url`), a
/// valid identifier that is not a keyword.
pub fn snake(name: &str) -> String {
    let mut s = words(name)
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("_");
    if s.is_empty() {
        s = "field".to_owned();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// Whether serde needs an explicit `#[serde(rename = ...)]` for a field named
/// `rust_name` of a `rename_all = "camelCase"` struct to read and write `json_name`.
pub fn needs_rename(rust_name: &str, json_name: &str) -> bool {
    RenameRule::Camel.field(rust_name) != json_name
}

/// Hands out unique names within one scope (a module's types, a struct's fields, an
/// enum's variants): a taken name gets the smallest free numeric suffix.
#[derive(Clone, Debug, Default)]
pub struct Namer {
    taken: BTreeSet<String>,
}

impl Namer {
    /// A scope where `reserved` are already taken.
    pub fn with_reserved(reserved: &[&str]) -> Self {
        Self {
            taken: reserved.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// `want`, or `want2`, `want3` ... whichever is free first; then taken.
    pub fn unique(&mut self, want: &str) -> String {
        let mut name = want.to_owned();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{want}{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// A type name (`PascalCase`, starting with a letter) for a kind or a nested type.
pub fn type_name(parts: &[&str]) -> String {
    let mut s: String = parts.iter().map(|p| pascal(p)).collect();
    if s.is_empty() {
        s = "Unnamed".to_owned();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'T');
    }
    if s == "Self" {
        s.push('_');
    }
    s
}

/// A variant name for a string enum value (`ECDSA` → `Ecdsa`, `""` → `Empty`,
/// `1.2` → `V12`).
pub fn variant_name(value: &str) -> String {
    let mut s = pascal(value);
    if s.is_empty() {
        s = if value.is_empty() { "Empty" } else { "Value" }.to_owned();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'V');
    }
    if s == "Self" {
        s.push('_');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_snake_case_and_rename_only_when_serde_would_differ() {
        let cases = [
            ("tlsConfig", "tls_config", false),
            ("ipAddresses", "ip_addresses", false),
            ("URL", "url", true),
            ("caBundleURL", "ca_bundle_url", true),
            ("type", "type_", false),
            ("self", "self_", false),
            ("x-forwarded-for", "x_forwarded_for", true),
            ("3d", "_3d", false),
            ("$ref", "ref_", true),
            ("pkcs12", "pkcs12", false),
            ("emailSANs", "email_sa_ns", true),
        ];
        for (json, rust, rename) in cases {
            assert_eq!(snake(json), rust, "{json}");
            assert_eq!(needs_rename(rust, json), rename, "{json}");
        }
    }

    #[test]
    fn types_and_variants_are_pascal_case_without_upper_case_acronyms() {
        assert_eq!(type_name(&["Certificate", "spec"]), "CertificateSpec");
        assert_eq!(type_name(&["Gateway", "tlsConfig"]), "GatewayTlsConfig");
        assert_eq!(type_name(&["HTTPRoute"]), "HttpRoute");
        assert_eq!(variant_name("ECDSA"), "Ecdsa");
        assert_eq!(variant_name("digital signature"), "DigitalSignature");
        assert_eq!(variant_name(""), "Empty");
        assert_eq!(variant_name("*"), "Value");
        assert_eq!(variant_name("1.2"), "V12");
        assert_eq!(variant_name("self"), "Self_");
        assert_eq!(type_name(&["self"]), "Self_");
    }

    #[test]
    fn namer_suffixes_taken_names() {
        let mut n = Namer::with_reserved(&["Time"]);
        assert_eq!(n.unique("Time"), "Time2");
        assert_eq!(n.unique("A"), "A");
        assert_eq!(n.unique("A"), "A2");
        assert_eq!(n.unique("A"), "A3");
    }
}
