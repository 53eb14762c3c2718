//! Markers: client-go's comment tags read from doc comments, and the same keys written
//! as `#[resource(...)]` attribute arguments.
//!
//! `syn` sees `/// +genclient:noStatus` as `#[doc = " +genclient:noStatus"]` and a
//! module's `//! +groupName=x` as an inner `#![doc = ...]`. A marker is a doc line whose
//! trimmed text starts with `+`, followed by a key without whitespace and an optional
//! `=value`. Keys this generator owns (`genclient*`, `groupName`, `groupGoName`,
//! `resourceName`, `k8s:deepcopy-gen*`, `kubegen:*`) are checked strictly: an unknown key in
//! those namespaces is an error, and a key one or two typos away from a known one gets a
//! "did you mean" error. Other markers (`+optional`, `+kubebuilder:...`) are ignored.
//!
//! Attribute keys map onto marker keys: `group` → `groupName`, `plural` →
//! `resourceName`, `version` → `kubegen:version`, `kind` → `kubegen:kind`,
//! `namespaced` → `kubegen:namespaced`, `resource_impl` → `kubegen:resourceImpl`,
//! `deepcopy` → `k8s:deepcopy-gen`, `genclient` → `genclient`, and every `genclient:`
//! key by its name (`noStatus` or `no_status`, `onlyVerbs = "get,list"`,
//! `method = "Scale,verb=get,subresource=scale"`). kube's `inherit` key is recognised
//! (the type then already implements `Resource`).

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::ctxt::Ctxt;
use crate::model::{DeepCopyGen, Extension, Verb};

/// A marker as written: key, optional value, and where it was found.
#[derive(Clone, Debug)]
pub struct RawMarker {
    /// The key (`genclient:onlyVerbs`).
    pub key: String,
    /// The text after `=`, if any.
    pub value: Option<String>,
    /// The span of the doc attribute or attribute argument.
    pub span: Span,
}

/// A recognised marker.
#[derive(Clone, Debug)]
pub enum Marker {
    /// `+genclient`.
    GenClient,
    /// `+genclient:nonNamespaced`.
    NonNamespaced,
    /// `#[resource(namespaced)]`.
    Namespaced,
    /// `+genclient:noStatus`.
    NoStatus,
    /// `+genclient:noVerbs`.
    NoVerbs,
    /// `+genclient:readonly`.
    Readonly,
    /// `+genclient:onlyVerbs=...`.
    OnlyVerbs(Vec<Verb>),
    /// `+genclient:skipVerbs=...`.
    SkipVerbs(Vec<Verb>),
    /// `+genclient:method=...`.
    Method(Extension),
    /// `+groupName=` / `group = ""`.
    GroupName(String),
    /// `+groupGoName=`.
    GroupGoName(String),
    /// `+kubegen:version=` / `version = ""`.
    Version(String),
    /// `+kubegen:kind=` / `kind = ""`.
    Kind(String),
    /// `+resourceName=` / `plural = ""`.
    ResourceName(String),
    /// `+k8s:deepcopy-gen=`.
    DeepCopyGen(DeepCopyGen),
    /// `+kubegen:resourceImpl=true|false`.
    ResourceImpl(bool),
    /// kube's `#[resource(inherit = ...)]`: a `Resource` impl exists already.
    Inherit,
    /// A known marker with no meaning in Rust (`+k8s:deepcopy-gen:interfaces=...`).
    Ignored,
}

/// The keys this generator owns, for "did you mean" suggestions.
const KNOWN_KEYS: &[&str] = &[
    "genclient",
    "genclient:nonNamespaced",
    "genclient:noStatus",
    "genclient:noVerbs",
    "genclient:readonly",
    "genclient:onlyVerbs",
    "genclient:skipVerbs",
    "genclient:method",
    "groupName",
    "groupGoName",
    "resourceName",
    "k8s:deepcopy-gen",
    "k8s:deepcopy-gen:interfaces",
    "k8s:deepcopy-gen:nonpointer-interfaces",
    "kubegen:version",
    "kubegen:kind",
    "kubegen:namespaced",
    "kubegen:resourceImpl",
];

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
                });
            }
        }
    }
    out
}

/// Attribute key → marker key.
fn attr_key_to_marker(key: &str) -> Option<&'static str> {
    Some(match key {
        "group" => "groupName",
        "group_go_name" | "groupGoName" => "groupGoName",
        "plural" => "resourceName",
        "version" => "kubegen:version",
        "kind" => "kubegen:kind",
        "namespaced" => "kubegen:namespaced",
        "resource_impl" | "resourceImpl" => "kubegen:resourceImpl",
        "deepcopy" => "k8s:deepcopy-gen",
        "genclient" => "genclient",
        "non_namespaced" | "nonNamespaced" => "genclient:nonNamespaced",
        "no_status" | "noStatus" => "genclient:noStatus",
        "no_verbs" | "noVerbs" => "genclient:noVerbs",
        "readonly" => "genclient:readonly",
        "only_verbs" | "onlyVerbs" => "genclient:onlyVerbs",
        "skip_verbs" | "skipVerbs" => "genclient:skipVerbs",
        "method" => "genclient:method",
        "inherit" => "kubegen:inherit",
        _ => return None,
    })
}

const ATTR_KEYS: &[&str] = &[
    "group",
    "version",
    "kind",
    "plural",
    "namespaced",
    "genclient",
    "non_namespaced",
    "no_status",
    "no_verbs",
    "readonly",
    "only_verbs",
    "skip_verbs",
    "method",
    "deepcopy",
    "resource_impl",
    "group_go_name",
];

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
            let Some(key) = attr_key_to_marker(&name) else {
                let hint = suggestion(&name, ATTR_KEYS)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                cx.error_spanned_by(
                    &meta.path,
                    format!("unknown key `{name}` in #[resource(...)]{hint}"),
                );
                // Skip the value so parsing continues with the next key.
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
                return Ok(());
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
                key: key.to_owned(),
                value,
                span: meta.path.span(),
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
                if meta.path.is_ident("inherit") {
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

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn suggestion<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (levenshtein(&key.to_lowercase(), &k.to_lowercase()), *k))
        .filter(|(d, k)| *d <= 2 && *d < k.len() / 2 + 1)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn owned_namespace(key: &str) -> bool {
    key.starts_with("genclient")
        || key.starts_with("k8s:deepcopy-gen")
        || key.starts_with("kubegen:")
        || matches!(key, "groupName" | "groupGoName" | "resourceName")
}

fn no_value(raw: &RawMarker, marker: Marker, cx: &Ctxt) -> Option<Marker> {
    match raw.value.as_deref() {
        None => Some(marker),
        Some(v) => {
            cx.error_at(
                raw.span,
                format!("`+{}` takes no value, found `={v}`", raw.key),
            );
            None
        }
    }
}

fn required_value<'a>(raw: &'a RawMarker, cx: &Ctxt) -> Option<&'a str> {
    match raw.value.as_deref().map(str::trim) {
        Some(v) if !v.is_empty() => Some(v),
        _ => {
            cx.error_at(
                raw.span,
                format!("`+{}` needs a value: `+{}=...`", raw.key, raw.key),
            );
            None
        }
    }
}

fn parse_bool(raw: &RawMarker, cx: &Ctxt) -> Option<bool> {
    match required_value(raw, cx)? {
        "true" => Some(true),
        "false" => Some(false),
        other => {
            cx.error_at(
                raw.span,
                format!("`+{}` expects `true` or `false`, found `{other}`", raw.key),
            );
            None
        }
    }
}

fn parse_verbs(raw: &RawMarker, cx: &Ctxt) -> Option<Vec<Verb>> {
    let value = required_value(raw, cx)?;
    let mut verbs = Vec::new();
    let mut ok = true;
    for part in value.split(',').map(str::trim) {
        match Verb::parse(part) {
            Some(v) => verbs.push(v),
            None => {
                ok = false;
                cx.error_at(
                    raw.span,
                    format!(
                        "unknown verb `{part}` in `+{}` (supported verbs: {})",
                        raw.key,
                        Verb::all_verbs()
                    ),
                );
            }
        }
    }
    ok.then_some(verbs)
}

fn parse_type_path(text: &str, what: &str, name: &str, span: Span, cx: &Ctxt) -> Option<syn::Path> {
    match syn::parse_str::<syn::Path>(text) {
        Ok(path) => Some(path),
        Err(_) => {
            cx.error_at(
                span,
                format!("{name}: {what} type `{text}` is not a Rust type path"),
            );
            None
        }
    }
}

/// Parses `Name,verb=get[,subresource=s][,input=T][,result=T]` (client-gen's rules).
fn parse_method(raw: &RawMarker, cx: &Ctxt) -> Option<Extension> {
    let value = raw.value.as_deref().unwrap_or("");
    let span = raw.span;
    let mut parts = value.split(',');
    let name = parts.next().unwrap_or("").trim();
    if name.is_empty() {
        cx.error_at(
            span,
            "must specify a method name (`+genclient:method=Foo,verb=create`)",
        );
        return None;
    }
    if syn::parse_str::<syn::Ident>(name).is_err() {
        cx.error_at(span, format!("method name `{name}` is not an identifier"));
        return None;
    }
    let (mut verb, mut subresource, mut input, mut result) = (None, None, None, None);
    let mut ok = true;
    for part in parts {
        let Some((key, val)) = part.split_once('=') else {
            cx.error_at(
                span,
                format!("invalid extension tag specification `{part}`"),
            );
            ok = false;
            continue;
        };
        let (key, val) = (key.trim(), val.trim());
        if val.is_empty() {
            cx.error_at(
                span,
                format!("empty value of `{key}` for `{name}` extension"),
            );
            ok = false;
            continue;
        }
        match key {
            "verb" => match Verb::parse(val) {
                Some(v) => verb = Some(v),
                None => {
                    cx.error_at(
                        span,
                        format!(
                            "{name}: unknown verb `{val}` (supported verbs: {})",
                            Verb::all_verbs()
                        ),
                    );
                    ok = false;
                }
            },
            "subresource" => subresource = Some(val.to_owned()),
            "input" => {
                input = parse_type_path(val, "input", name, span, cx).or_else(|| {
                    ok = false;
                    None
                })
            }
            "result" => {
                result = parse_type_path(val, "result", name, span, cx).or_else(|| {
                    ok = false;
                    None
                })
            }
            other => {
                cx.error_at(
                    span,
                    format!("unknown extension configuration key `{other}`"),
                );
                ok = false;
            }
        }
    }
    if !ok {
        return None;
    }
    let Some(verb) = verb else {
        cx.error_at(
            span,
            format!("verb type must be specified (use `+genclient:method={name},verb=create`)"),
        );
        return None;
    };
    if !verb.supports_extension() {
        cx.error_at(
            span,
            format!("{name}: verb `{verb}` is not supported by the extension generator"),
        );
        return None;
    }
    if result.is_some() && !verb.supports_result_override() {
        cx.error_at(
            span,
            format!(
                "{name}: result type is not supported for `{verb}` verbs (supported verbs: {})",
                Verb::result_override_verbs()
            ),
        );
        return None;
    }
    if input.is_some() && !verb.supports_input_override() {
        cx.error_at(
            span,
            format!(
                "{name}: input type is not supported for `{verb}` verbs (supported verbs: {})",
                Verb::input_override_verbs()
            ),
        );
        return None;
    }
    Some(Extension {
        name: name.to_owned(),
        verb,
        subresource,
        input,
        result,
        span,
    })
}

/// Interprets one raw marker; errors go to `cx`. `None` for markers that are not ours
/// (or that were invalid).
pub fn parse_marker(raw: &RawMarker, cx: &Ctxt) -> Option<Marker> {
    let key = raw.key.as_str();
    match key {
        "genclient" => match raw.value.as_deref() {
            Some(v) if !v.is_empty() => {
                cx.error_at(
                    raw.span,
                    format!(
                        "+genclient={v} is invalid, use +genclient if you want to generate a client or omit it when you do not"
                    ),
                );
                None
            }
            _ => Some(Marker::GenClient),
        },
        "genclient:nonNamespaced" => no_value(raw, Marker::NonNamespaced, cx),
        "kubegen:namespaced" => no_value(raw, Marker::Namespaced, cx),
        "genclient:noStatus" => no_value(raw, Marker::NoStatus, cx),
        "genclient:noVerbs" => no_value(raw, Marker::NoVerbs, cx),
        "genclient:readonly" => no_value(raw, Marker::Readonly, cx),
        "genclient:onlyVerbs" => parse_verbs(raw, cx).map(Marker::OnlyVerbs),
        "genclient:skipVerbs" => parse_verbs(raw, cx).map(Marker::SkipVerbs),
        "genclient:method" => parse_method(raw, cx).map(Marker::Method),
        "groupName" => match raw.value.as_deref() {
            // The core group is the empty string.
            Some(v) => Some(Marker::GroupName(v.trim().to_owned())),
            None => required_value(raw, cx).map(|_| Marker::Ignored),
        },
        "groupGoName" => required_value(raw, cx).map(|v| Marker::GroupGoName(v.to_owned())),
        "resourceName" => required_value(raw, cx).map(|v| Marker::ResourceName(v.to_owned())),
        "kubegen:version" => required_value(raw, cx).map(|v| Marker::Version(v.to_owned())),
        "kubegen:kind" => required_value(raw, cx).map(|v| Marker::Kind(v.to_owned())),
        "kubegen:resourceImpl" => parse_bool(raw, cx).map(Marker::ResourceImpl),
        "kubegen:inherit" => Some(Marker::Inherit),
        "k8s:deepcopy-gen" => match required_value(raw, cx)? {
            "true" => Some(Marker::DeepCopyGen(DeepCopyGen::True)),
            "false" => Some(Marker::DeepCopyGen(DeepCopyGen::False)),
            // `register` has been obsolete since Kubernetes 1.9 and changes nothing.
            "package" | "package,register" => Some(Marker::DeepCopyGen(DeepCopyGen::Package)),
            other => {
                cx.error_at(
                    raw.span,
                    format!(
                        "invalid `+k8s:deepcopy-gen={other}`: expected `package`, `true` or `false`"
                    ),
                );
                None
            }
        },
        "k8s:deepcopy-gen:interfaces" | "k8s:deepcopy-gen:nonpointer-interfaces" => {
            Some(Marker::Ignored)
        }
        "nonNamespaced" | "readonly" if raw.value.as_deref().is_some_and(|v| !v.is_empty()) => {
            cx.error_at(
                raw.span,
                format!(
                    "+{key}={} is invalid, use +genclient:{key} instead",
                    raw.value.as_deref().unwrap_or_default()
                ),
            );
            None
        }
        _ if owned_namespace(key) => {
            let hint = suggestion(key, KNOWN_KEYS)
                .map(|s| format!("; did you mean `+{s}`?"))
                .unwrap_or_default();
            cx.error_at(raw.span, format!("unknown marker `+{key}`{hint}"));
            None
        }
        _ => {
            if let Some(s) = suggestion(key, KNOWN_KEYS).filter(|_| key.len() >= 6) {
                cx.error_at(
                    raw.span,
                    format!("unknown marker `+{key}`; did you mean `+{s}`?"),
                );
            }
            None
        }
    }
}

/// Every recognised marker on an item: doc markers first, then `#[resource(...)]` keys,
/// each with its span.
pub fn item_markers(attrs: &[syn::Attribute], cx: &Ctxt) -> Vec<(Marker, Span)> {
    let mut raw = doc_markers(attrs);
    raw.extend(attr_markers(attrs, cx));
    raw.iter()
        .filter_map(|r| parse_marker(r, cx).map(|m| (m, r.span)))
        .collect()
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

    fn parse_one(line: &str) -> (Option<Marker>, Vec<String>) {
        let cx = Ctxt::new();
        let (key, value) = parse_marker_line(line).unwrap();
        let raw = RawMarker {
            key: key.into(),
            value: value.map(Into::into),
            span: Span::call_site(),
        };
        let m = parse_marker(&raw, &cx);
        (m, messages(cx))
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
    fn method_marker_parses_every_key() {
        let (m, errs) = parse_one(
            "+genclient:method=UpdateScale,verb=update,subresource=scale,input=Scale,result=autoscaling::Scale",
        );
        assert!(errs.is_empty(), "{errs:?}");
        let Some(Marker::Method(ext)) = m else {
            panic!("not a method: {m:?}")
        };
        assert_eq!(ext.name, "UpdateScale");
        assert_eq!(ext.verb, Verb::Update);
        assert_eq!(ext.subresource.as_deref(), Some("scale"));
        assert!(ext.input.is_some() && ext.result.is_some());
    }

    #[test]
    fn method_marker_rejects_client_gen_violations() {
        for (line, want) in [
            (
                "+genclient:method=Get,verb=get,input=Scale",
                "input type is not supported for `get`",
            ),
            (
                "+genclient:method=Ac,verb=applyStatus,result=S",
                "result type is not supported",
            ),
            (
                "+genclient:method=Del,verb=delete",
                "verb `delete` is not supported by the extension",
            ),
            (
                "+genclient:method=W,verb=watch",
                "verb `watch` is not supported",
            ),
            ("+genclient:method=Foo", "verb type must be specified"),
            ("+genclient:method=,verb=get", "must specify a method name"),
            (
                "+genclient:method=Foo,verb=get,color=red",
                "unknown extension configuration key `color`",
            ),
            (
                "+genclient:method=Foo,verb",
                "invalid extension tag specification `verb`",
            ),
            ("+genclient:method=Foo,verb=", "empty value of `verb`"),
            ("+genclient:method=Foo,verb=frob", "unknown verb `frob`"),
        ] {
            let (m, errs) = parse_one(line);
            assert!(m.is_none(), "{line}");
            assert!(errs.iter().any(|e| e.contains(want)), "{line}: {errs:?}");
        }
    }

    #[test]
    fn unknown_markers_in_owned_namespaces_are_errors_with_suggestions() {
        let (_, errs) = parse_one("+genclient:nostatus");
        assert_eq!(
            errs,
            ["unknown marker `+genclient:nostatus`; did you mean `+genclient:noStatus`?"]
        );
        let (_, errs) = parse_one("+genclinet");
        assert_eq!(
            errs,
            ["unknown marker `+genclinet`; did you mean `+genclient`?"]
        );
        let (m, errs) = parse_one("+optional");
        assert!(m.is_none() && errs.is_empty());
        let (m, errs) = parse_one("+kubebuilder:validation:Minimum=1");
        assert!(m.is_none() && errs.is_empty());
    }

    #[test]
    fn old_style_markers_are_rejected_with_the_new_spelling() {
        let (_, errs) = parse_one("+genclient=true");
        assert!(errs[0].starts_with("+genclient=true is invalid"));
        let (_, errs) = parse_one("+nonNamespaced=true");
        assert_eq!(
            errs,
            ["+nonNamespaced=true is invalid, use +genclient:nonNamespaced instead"]
        );
    }

    #[test]
    fn attribute_keys_map_to_marker_keys() {
        let item: syn::ItemStruct = syn::parse_quote! {
            #[resource(group = "g.io", version = "v1", no_status, onlyVerbs = "get", deepcopy = false)]
            struct Foo;
        };
        let cx = Ctxt::new();
        let keys: Vec<(String, Option<String>)> = attr_markers(&item.attrs, &cx)
            .into_iter()
            .map(|m| (m.key, m.value))
            .collect();
        assert!(messages(cx).is_empty());
        assert_eq!(
            keys,
            [
                ("groupName".to_string(), Some("g.io".to_string())),
                ("kubegen:version".into(), Some("v1".into())),
                ("genclient:noStatus".into(), None),
                ("genclient:onlyVerbs".into(), Some("get".into())),
                ("k8s:deepcopy-gen".into(), Some("false".into())),
            ]
        );
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
}
