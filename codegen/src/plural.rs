//! Resource names from kinds: code-generator's (gengo's) pluralisation rules, with
//! exceptions (`--plural-exceptions Kind:Plural`, `+resourceName=`).
//!
//! Rules, applied to the kind's last letters: an exception wins; a name shorter than two
//! characters is kept; `s`/`x`/`z` → `+es`; consonant + `y` → `ies`; `ch`/`sh` → `+es`;
//! `fe` → `ves`; `f` → `ves`; anything else → `+s`. The result is all lower case, as the
//! REST resource name is. The default exception is `Endpoints:Endpoints`.

use std::collections::BTreeMap;

use thiserror::Error;

/// A malformed `Kind:Plural` exception.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PluralError {
    /// The text was not `Kind:Plural` with both sides non-empty.
    #[error("invalid plural exception `{0}`: expected `Kind:Plural`")]
    Malformed(String),
}

/// Kind → plural overrides (`Endpoints` → `endpoints`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluralExceptions {
    map: BTreeMap<String, String>,
}

impl Default for PluralExceptions {
    /// client-gen's default list: `Endpoints:Endpoints`.
    fn default() -> Self {
        let mut map = BTreeMap::new();
        map.insert("Endpoints".to_owned(), "Endpoints".to_owned());
        Self { map }
    }
}

impl PluralExceptions {
    /// No exceptions at all (not even the default `Endpoints`).
    pub fn empty() -> Self {
        Self {
            map: BTreeMap::new(),
        }
    }

    /// Adds `kind` → `plural`.
    pub fn insert(&mut self, kind: impl Into<String>, plural: impl Into<String>) {
        self.map.insert(kind.into(), plural.into());
    }

    /// Parses and adds one `Kind:Plural` pair (the CLI's `--plural-exceptions` syntax).
    pub fn add_spec(&mut self, spec: &str) -> Result<(), PluralError> {
        let (kind, plural) = spec
            .split_once(':')
            .map(|(k, p)| (k.trim(), p.trim()))
            .filter(|(k, p)| !k.is_empty() && !p.is_empty())
            .ok_or_else(|| PluralError::Malformed(spec.to_owned()))?;
        self.insert(kind, plural);
        Ok(())
    }

    /// The lower-case plural of `kind`.
    pub fn plural(&self, kind: &str) -> String {
        if let Some(plural) = self.map.get(kind) {
            return plural.to_lowercase();
        }
        pluralize(kind).to_lowercase()
    }
}

fn is_consonant(c: char) -> bool {
    "bcdfghjklmnpqrstvwxyz".contains(c)
}

/// The plural of `singular` by gengo's rules, preserving case (no exceptions applied).
pub fn pluralize(singular: &str) -> String {
    let chars: Vec<char> = singular.chars().collect();
    let [.., second_last, last] = chars.as_slice() else {
        return singular.to_owned();
    };
    let stem = |drop: usize| chars[..chars.len() - drop].iter().collect::<String>();
    match last {
        's' | 'x' | 'z' => format!("{singular}es"),
        'y' if is_consonant(*second_last) => format!("{}ies", stem(1)),
        'h' if matches!(second_last, 'c' | 's') => format!("{singular}es"),
        'e' if *second_last == 'f' => format!("{}ves", stem(2)),
        'f' => format!("{}ves", stem(1)),
        _ => format!("{singular}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plural_follows_gengo_rules() {
        let ex = PluralExceptions::default();
        for (kind, plural) in [
            ("Pod", "pods"),
            ("Ingress", "ingresses"),
            ("Box", "boxes"),
            ("Quiz", "quizes"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Batch", "batches"),
            ("Mesh", "meshes"),
            ("Graph", "graphs"),
            ("Knife", "knives"),
            ("Leaf", "leaves"),
            ("Safe", "saves"),
            ("Foo", "foos"),
            ("NetworkPolicy", "networkpolicies"),
            ("PriorityLevelConfiguration", "prioritylevelconfigurations"),
            ("X", "x"),
            ("Endpoints", "endpoints"),
        ] {
            assert_eq!(ex.plural(kind), plural, "{kind}");
        }
    }

    #[test]
    fn exceptions_override_rules_and_are_lowercased() {
        let mut ex = PluralExceptions::empty();
        assert_eq!(ex.plural("Endpoints"), "endpointses");
        ex.add_spec("Fish:Fish").unwrap();
        assert_eq!(ex.plural("Fish"), "fish");
    }

    #[test]
    fn malformed_exception_specs_are_rejected() {
        let mut ex = PluralExceptions::empty();
        for bad in ["", "Fish", ":fish", "Fish:", " : "] {
            assert_eq!(
                ex.add_spec(bad),
                Err(PluralError::Malformed(bad.to_owned()))
            );
        }
    }

    #[test]
    fn non_ascii_names_do_not_panic() {
        assert_eq!(pluralize("Ñandú"), "Ñandús");
        assert_eq!(pluralize("é"), "é");
    }
}
