//! The names a scaffold is made of, checked once: the project (a cargo package name), and
//! an API kind (group, version, kind) with the module, plural and file names derived from
//! it.

use crate::plural::PluralExceptions;

use super::ScaffoldError;

/// Rust keywords (strict and reserved, 2024 edition): never a module name.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield",
];

fn invalid(what: &'static str, value: &str, reason: impl Into<String>) -> ScaffoldError {
    ScaffoldError::InvalidName {
        what,
        value: value.to_owned(),
        reason: reason.into(),
    }
}

/// A project's names: the cargo package (`my-operator`) and its crate (`my_operator`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectName {
    /// The package and binary name.
    pub package: String,
    /// The library crate's name (`-` → `_`).
    pub krate: String,
}

impl ProjectName {
    /// Checks `name`: lower-case ASCII letters, digits, `-` and `_`, starting with a letter
    /// (a cargo package name that is also a DNS label, as the Lease and image names are).
    pub fn new(name: &str) -> Result<Self, ScaffoldError> {
        let what = "--name";
        if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(invalid(what, name, "must start with a lower-case letter"));
        }
        if let Some(c) = name
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
        {
            return Err(invalid(
                what,
                name,
                format!("{c:?} is not allowed (a-z, 0-9, -, _)"),
            ));
        }
        if name.len() > 63 {
            return Err(invalid(what, name, "longer than 63 characters"));
        }
        let krate = name.replace('-', "_");
        if KEYWORDS.contains(&krate.as_str()) || krate == "test" || krate == "std" {
            return Err(invalid(what, name, "is reserved in Rust"));
        }
        Ok(Self {
            package: name.to_owned(),
            krate,
        })
    }
}

/// One API kind of a project and the names derived from it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ApiKind {
    /// The API group (`example.com`).
    pub group: String,
    /// The group's module and directory (`example`: its first label).
    pub group_mod: String,
    /// The version (`v1alpha1`).
    pub version: String,
    /// The kind (`Widget`).
    pub kind: String,
    /// The kind's module and file stem (`widget`).
    pub kind_mod: String,
    /// The resource's plural (`widgets`), as the generators compute it.
    pub plural: String,
}

impl ApiKind {
    /// Checks the names: `group` a DNS subdomain with at least one dot (a CRD's group),
    /// `version` Kubernetes' `v<N>[(alpha|beta)<M>]`, `kind` an UpperCamelCase identifier.
    pub fn new(group: &str, version: &str, kind: &str) -> Result<Self, ScaffoldError> {
        check_group(group)?;
        check_version(version)?;
        check_kind(kind)?;
        let first = group.split('.').next().unwrap_or(group);
        let group_mod = first.replace('-', "_");
        if KEYWORDS.contains(&group_mod.as_str())
            || group_mod.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(invalid(
                "--group",
                group,
                format!("its first label {first:?} is not a Rust module name"),
            ));
        }
        let kind_mod = snake_case(kind);
        if KEYWORDS.contains(&kind_mod.as_str()) || kind_mod.starts_with("zz_generated") {
            return Err(invalid(
                "--kind",
                kind,
                format!("its module name {kind_mod:?} is reserved"),
            ));
        }
        Ok(Self {
            group: group.to_owned(),
            group_mod,
            version: version.to_owned(),
            kind: kind.to_owned(),
            kind_mod,
            plural: PluralExceptions::default().plural(kind),
        })
    }

    /// The CRD file `kubegen-codegen crd` writes for this kind (`example.com_widgets.yaml`).
    pub fn crd_file(&self) -> String {
        format!("{}_{}.yaml", self.group, self.plural)
    }
}

fn check_group(group: &str) -> Result<(), ScaffoldError> {
    let what = "--group";
    if !group.contains('.') {
        return Err(invalid(
            what,
            group,
            "a CRD's group needs at least one dot (example.com)",
        ));
    }
    if group.len() > 253 {
        return Err(invalid(what, group, "longer than 253 characters"));
    }
    for label in group.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && label.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && label.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && label
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !ok {
            return Err(invalid(
                what,
                group,
                format!("{label:?} is not a DNS label (a-z, 0-9, -)"),
            ));
        }
    }
    Ok(())
}

fn check_version(version: &str) -> Result<(), ScaffoldError> {
    let reason = "want v<N>, v<N>alpha<M> or v<N>beta<M> (v1, v1alpha1, v2beta3)";
    let rest = version
        .strip_prefix('v')
        .ok_or_else(|| invalid("--version", version, reason))?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let (major, tail) = rest.split_at(digits);
    let level = tail
        .strip_prefix("alpha")
        .or_else(|| tail.strip_prefix("beta"))
        .unwrap_or(tail);
    let ok = !major.is_empty()
        && !major.starts_with('0')
        && (tail.is_empty()
            || (level.len() < tail.len()
                && !level.is_empty()
                && !level.starts_with('0')
                && level.chars().all(|c| c.is_ascii_digit())));
    if ok {
        Ok(())
    } else {
        Err(invalid("--version", version, reason))
    }
}

fn check_kind(kind: &str) -> Result<(), ScaffoldError> {
    let what = "--kind";
    if !kind.starts_with(|c: char| c.is_ascii_uppercase()) {
        return Err(invalid(
            what,
            kind,
            "must start with an upper-case letter (UpperCamelCase)",
        ));
    }
    if !kind.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(invalid(
            what,
            kind,
            "only ASCII letters and digits (UpperCamelCase)",
        ));
    }
    if kind.len() > 63 {
        return Err(invalid(what, kind, "longer than 63 characters"));
    }
    Ok(())
}

/// `WidgetSet` → `widget_set`, `HTTPRoute` → `http_route`.
pub fn snake_case(kind: &str) -> String {
    let chars: Vec<char> = kind.chars().collect();
    let mut out = String::with_capacity(kind.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_derive_their_module_plural_and_crd_file() {
        let k = ApiKind::new("example.com", "v1alpha1", "Widget").expect("valid");
        assert_eq!(
            (k.group_mod.as_str(), k.kind_mod.as_str()),
            ("example", "widget")
        );
        assert_eq!(k.plural, "widgets");
        assert_eq!(k.crd_file(), "example.com_widgets.yaml");
        let k = ApiKind::new("my-apps.example.com", "v2beta3", "HTTPRoutePolicy").expect("valid");
        assert_eq!(
            (k.group_mod.as_str(), k.kind_mod.as_str()),
            ("my_apps", "http_route_policy")
        );
        assert_eq!(k.plural, "httproutepolicies");
    }

    #[test]
    fn bad_names_are_refused_with_the_reason() {
        for (g, v, k) in [
            ("example", "v1", "Widget"),
            ("Example.com", "v1", "Widget"),
            ("example..com", "v1", "Widget"),
            ("-x.com", "v1", "Widget"),
            ("type.example.com", "v1", "Widget"),
            ("example.com", "1", "Widget"),
            ("example.com", "v0", "Widget"),
            ("example.com", "v1gamma1", "Widget"),
            ("example.com", "v1alpha", "Widget"),
            ("example.com", "v1alpha01", "Widget"),
            ("example.com", "v1", "widget"),
            ("example.com", "v1", "Wid-get"),
            ("example.com", "v1", "Type"),
        ] {
            let err = ApiKind::new(g, v, k).expect_err(&format!("{g} {v} {k}"));
            assert!(matches!(err, ScaffoldError::InvalidName { .. }), "{err}");
        }
        for v in ["v1", "v12", "v1alpha1", "v2beta10"] {
            ApiKind::new("example.com", v, "Widget").expect(v);
        }
    }

    #[test]
    fn project_names_are_cargo_packages_and_dns_labels() {
        let p = ProjectName::new("my-operator").expect("valid");
        assert_eq!(p.krate, "my_operator");
        for bad in ["", "My-operator", "1op", "op!", "self", "test"] {
            assert!(ProjectName::new(bad).is_err(), "{bad:?}");
        }
    }
}
