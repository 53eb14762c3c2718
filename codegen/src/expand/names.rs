//! Rust names of generated items: `FooClient`, `new_foo_informer`, the `foos` accessor.

use proc_macro2::Ident;
use quote::format_ident;

use crate::model::ResourceDef;
use crate::plural::pluralize;

/// `CronJob` → `cron_job`; `GetScale` → `get_scale`; `HTTPRoute` → `http_route`.
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if *c == '-' || *c == '.' {
            out.push('_');
        } else {
            out.push(*c);
        }
    }
    out
}

/// `samplecontroller` → `Samplecontroller`; `v1alpha1` → `V1alpha1`.
#[cfg(feature = "files")]
pub fn upper_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// An identifier, as a raw identifier when it is a Rust keyword.
pub fn ident(name: &str) -> Ident {
    if syn::parse_str::<Ident>(name).is_ok() {
        format_ident!("{}", name)
    } else {
        format_ident!("r#{}", name)
    }
}

/// The accessor of a resource on a group-version client, lister or informer group:
/// client-gen's plural of the kind in snake case (`replica_sets`), or the resource name
/// when an exception or `+resourceName=` overrides the plural.
pub fn accessor(r: &ResourceDef) -> Ident {
    let by_kind = pluralize(&r.kind);
    if by_kind.to_lowercase() == r.plural {
        ident(&snake(&by_kind))
    } else {
        ident(&snake(&r.plural))
    }
}

/// `FooClient`.
pub fn client(kind: &Ident) -> Ident {
    format_ident!("{}Client", kind)
}

/// `FooLister`.
pub fn lister(kind: &Ident) -> Ident {
    format_ident!("{}Lister", kind)
}

/// `FooNamespaceLister`.
pub fn namespace_lister(kind: &Ident) -> Ident {
    format_ident!("{}NamespaceLister", kind)
}

/// `FooInformer`.
pub fn informer(kind: &Ident) -> Ident {
    format_ident!("{}Informer", kind)
}

/// `new_foo_informer` and `new_filtered_foo_informer`.
pub fn informer_constructors(kind: &Ident) -> (Ident, Ident) {
    let snake = snake(&kind.to_string());
    (
        format_ident!("new_{}_informer", snake),
        format_ident!("new_filtered_{}_informer", snake),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_splits_words_and_acronyms() {
        assert_eq!(snake("GetScale"), "get_scale");
        assert_eq!(snake("CronJob"), "cron_job");
        assert_eq!(snake("HTTPRoute"), "http_route");
        assert_eq!(snake("ReplicaSets"), "replica_sets");
        assert_eq!(snake("foo"), "foo");
        assert_eq!(snake("IPAddress"), "ip_address");
        assert_eq!(snake("V1alpha1"), "v1alpha1");
    }

    #[test]
    fn keywords_become_raw_identifiers() {
        assert_eq!(ident("type").to_string(), "r#type");
        assert_eq!(ident("foos").to_string(), "foos");
    }
}
