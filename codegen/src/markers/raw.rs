//! Markers as written: doc-comment lines (`/// +genclient:noStatus`) and
//! `#[resource(...)]` arguments, before their values are read.
//!
//! `syn` sees `/// +genclient:noStatus` as `#[doc = " +genclient:noStatus"]` and a
//! module's `//! +groupName=x` as an inner `#![doc = ...]`. A marker is a doc line whose
//! trimmed text starts with `+`, followed by a key without whitespace and an optional
//! `=value`. An attribute argument maps to its marker key through the
//! [vocabulary](super::vocabulary#constants) (`group = "x"` is `+groupName=x`).

use proc_macro2::Span;
use syn::spanned::Spanned;

use super::vocabulary;
use crate::ctxt::Ctxt;

/// A marker as written: key, optional value, and where it was found.
#[derive(Clone, Debug)]
pub struct RawMarker {
    /// The marker key (`genclient:onlyVerbs`), also for attribute arguments.
    pub key: String,
    /// The text after `=`, if any.
    pub value: Option<String>,
    /// The span of the doc attribute or attribute argument.
    pub span: Span,
    /// The `#[resource(...)]` key it was written as, or `None` for a doc comment.
    pub attr: Option<String>,
}

impl RawMarker {
    /// The marker as the user spelled it, for messages: `+groupName` or `group`.
    pub fn written(&self) -> String {
        match &self.attr {
            Some(attr) => attr.clone(),
            None => format!("+{}", self.key),
        }
    }
}

/// Splits one doc line into a marker key and value, or `None` when it is not a marker.
///
/// Never panics, whatever the input.
pub fn parse_marker_line(line: &str) -> Option<(&str, Option<&str>)> {
    let rest = line.trim().strip_prefix('+')?;
    let (key, value) = match rest.split_once('=') {
        Some((k, v)) => (k, Some(v.trim())),
        None => (rest.trim_end(), None),
    };
    if key.is_empty() || key.chars().any(char::is_whitespace) {
        return None;
    }
    Some((key, value))
}

/// The markers in the doc comments among `attrs` (outer `///` or inner `//!`).
pub fn doc_markers(attrs: &[syn::Attribute]) -> Vec<RawMarker> {
    let mut out = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &nv.value
        else {
            continue;
        };
        for line in text.value().lines() {
            if let Some((key, value)) = parse_marker_line(line) {
                out.push(RawMarker {
                    key: key.to_owned(),
                    value: value.map(str::to_owned),
                    span: attr.span(),
                    attr: None,
                });
            }
        }
    }
    out
}

/// Skips an argument's value (`= expr` or `(...)`) so parsing continues with the next key.
fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.input.peek(syn::Token![=]) {
                let _: syn::Expr = inner.value()?.parse()?;
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// The markers written as `#[resource(...)]` arguments, translated to marker keys.
/// Malformed arguments are reported to `cx`.
pub fn attr_markers(attrs: &[syn::Attribute], cx: &Ctxt) -> Vec<RawMarker> {
    let mut out = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("resource") {
            continue;
        }
        if let syn::Meta::Path(path) = &attr.meta {
            cx.error_spanned_by(path, "expected `#[resource(key = value, ...)]`");
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let Some(name) = meta.path.get_ident().map(ToString::to_string) else {
                return Err(meta.error("expected a key such as `group` or `namespaced`"));
            };
            let Some(marker) = vocabulary::by_attr(&name) else {
                let hint = vocabulary::suggest_attr(&name)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                cx.error_spanned_by(
                    &meta.path,
                    format!("unknown key `{name}` in #[resource(...)]{hint}"),
                );
                return skip_value(&meta);
            };
            let value = if meta.input.peek(syn::Token![=]) {
                let lit: syn::Lit = meta.value()?.parse()?;
                Some(match lit {
                    syn::Lit::Str(s) => s.value(),
                    syn::Lit::Bool(b) => b.value.to_string(),
                    other => {
                        return Err(syn::Error::new(
                            other.span(),
                            format!("expected a string or bool literal for `{name}`"),
                        ));
                    }
                })
            } else {
                None
            };
            out.push(RawMarker {
                key: marker.key.to_owned(),
                value,
                span: meta.path.span(),
                attr: Some(name),
            });
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    out
}

/// Whether `#[resource(...)]` carries kube's `inherit` key (without parsing the rest).
pub fn has_inherit(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("resource"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|meta| {
                if meta.path.get_ident().is_some_and(|i| {
                    vocabulary::by_attr(&i.to_string()) == Some(vocabulary::INHERIT)
                }) {
                    found = true;
                }
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                Ok(())
            });
            found
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(cx: Ctxt) -> Vec<String> {
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn marker_lines_split_key_and_value() {
        assert_eq!(parse_marker_line(" +genclient"), Some(("genclient", None)));
        assert_eq!(
            parse_marker_line("+genclient:onlyVerbs=get,list "),
            Some(("genclient:onlyVerbs", Some("get,list")))
        );
        assert_eq!(
            parse_marker_line("+groupName="),
            Some(("groupName", Some("")))
        );
        assert_eq!(parse_marker_line("a + b"), None);
        assert_eq!(parse_marker_line("+ 1 is positive"), None);
        assert_eq!(parse_marker_line("+"), None);
    }

    #[test]
    fn doc_attributes_yield_markers_from_every_line() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// Foo is a thing.
            /// +genclient
            #[doc = " +genclient:noStatus\n +optional"]
            struct Foo;
        };
        let keys: Vec<String> = doc_markers(&item.attrs)
            .into_iter()
            .map(|m| m.key)
            .collect();
        assert_eq!(keys, ["genclient", "genclient:noStatus", "optional"]);
    }

    #[test]
    fn attribute_keys_map_to_marker_keys() {
        let item: syn::ItemStruct = syn::parse_quote! {
            #[resource(group = "g.io", version = "v1", no_status, onlyVerbs = "get", deepcopy = false)]
            struct Foo;
        };
        let cx = Ctxt::new();
        let raw = attr_markers(&item.attrs, &cx);
        assert!(messages(cx).is_empty());
        let keys: Vec<(&str, Option<&str>)> = raw
            .iter()
            .map(|m| (m.key.as_str(), m.value.as_deref()))
            .collect();
        assert_eq!(
            keys,
            [
                ("groupName", Some("g.io")),
                ("kubegen:version", Some("v1")),
                ("genclient:noStatus", None),
                ("genclient:onlyVerbs", Some("get")),
                ("k8s:deepcopy-gen", Some("false")),
            ]
        );
        assert_eq!(raw[0].written(), "group");
        let doc: Vec<syn::Attribute> = vec![syn::parse_quote!(#[doc = " +groupName=g"])];
        assert_eq!(doc_markers(&doc)[0].written(), "+groupName");
    }

    #[test]
    fn unknown_attribute_keys_are_reported_and_parsing_continues() {
        let item: syn::ItemStruct = syn::parse_quote! {
            #[resource(gruop = "g.io", shortname = "f", namespaced)]
            struct Foo;
        };
        let cx = Ctxt::new();
        let raw = attr_markers(&item.attrs, &cx);
        assert_eq!(raw.len(), 1);
        assert_eq!(
            messages(cx),
            [
                "unknown key `gruop` in #[resource(...)]; did you mean `group`?",
                "unknown key `shortname` in #[resource(...)]",
            ]
        );
    }

    #[test]
    fn inherit_is_found_without_reading_the_rest() {
        let item: syn::ItemStruct = syn::parse_quote! {
            #[resource(inherit = "ConfigMap", whatever = 5)]
            struct Foo;
        };
        assert!(has_inherit(&item.attrs));
        let item: syn::ItemStruct = syn::parse_quote! {
            #[resource(group = "g")]
            struct Foo;
        };
        assert!(!has_inherit(&item.attrs));
    }
}
