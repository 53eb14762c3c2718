//! Reading a marker's value by its [`ValueKind`]: verbs, `+genclient:method` extension
//! specs, booleans, `+k8s:deepcopy-gen` modes; unknown keys in the namespaces this
//! generator owns are errors with a "did you mean" from the vocabulary.

use proc_macro2::Span;

use super::raw::RawMarker;
use super::vocabulary::{self, GENCLIENT, Marker, ValueKind};
use crate::ctxt::Ctxt;
use crate::model::{DeepCopyGen, Extension, Verb};

/// A marker's value, read by its kind.
#[derive(Clone, Debug)]
pub enum Value {
    /// A flag, or a marker whose value is ignored.
    Present,
    /// A string ([`ValueKind::Str`], [`ValueKind::StrOrEmpty`]).
    Str(String),
    /// A boolean.
    Bool(bool),
    /// A verb list.
    Verbs(Vec<Verb>),
    /// An extension method.
    Method(Extension),
    /// A `+k8s:deepcopy-gen` mode.
    DeepCopy(DeepCopyGen),
    /// A number ([`ValueKind::Number`]).
    Number(serde_json::Number),
    /// A count ([`ValueKind::Count`]).
    Count(u64),
    /// A JSON value ([`ValueKind::Json`]).
    Json(serde_json::Value),
    /// JSON values ([`ValueKind::JsonList`]).
    JsonList(Vec<serde_json::Value>),
    /// `key=value` arguments in order ([`ValueKind::Args`]).
    Args(Vec<(String, String)>),
}

fn parse_number(raw: &RawMarker, cx: &Ctxt) -> Option<serde_json::Number> {
    let v = required_value(raw, cx)?;
    match serde_json::from_str::<serde_json::Value>(v) {
        Ok(serde_json::Value::Number(n)) => Some(n),
        _ => {
            cx.error_at(
                raw.span,
                format!("`+{}` expects a number, found `{v}`", raw.key),
            );
            None
        }
    }
}

fn parse_count(raw: &RawMarker, cx: &Ctxt) -> Option<u64> {
    let v = required_value(raw, cx)?;
    match v.parse::<u64>() {
        Ok(n) => Some(n),
        Err(_) => {
            cx.error_at(
                raw.span,
                format!("`+{}` expects a non-negative integer, found `{v}`", raw.key),
            );
            None
        }
    }
}

/// controller-gen's string syntax: `` `raw` `` and `"quoted"` are unquoted, bare text is
/// taken as written.
pub fn unquote(v: &str) -> String {
    if v.len() >= 2 && v.starts_with('`') && v.ends_with('`') {
        return v[1..v.len() - 1].to_owned();
    }
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        return serde_json::from_str::<String>(v).unwrap_or_else(|_| v[1..v.len() - 1].to_owned());
    }
    v.to_owned()
}

/// controller-gen's reading of an untyped value: JSON when it parses as JSON (numbers,
/// booleans, `null`, quoted strings, `[...]`, `{...}`), else the bare text as a string.
pub fn json_value(text: &str) -> serde_json::Value {
    let text = text.trim();
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_owned()))
}

/// Splits `a=1,b="x,y",c` at top-level commas (not inside double quotes, brackets or
/// braces) into `(key, value)` pairs, unquoting quoted values. `Err` names the
/// malformed part.
pub fn split_args(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut escaped) = (0i32, false, false);
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if quoted => escaped = true,
            '"' | '`' => quoted = !quoted,
            '[' | '{' | '(' if !quoted => depth += 1,
            ']' | '}' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err(format!("unterminated quote in `{text}`"));
    }
    parts.push(&text[start..]);
    let mut out = Vec::new();
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!("expected `key=value`, found `{part}`"));
        };
        let v = v.trim();
        let v = if v.len() >= 2
            && ((v.starts_with('"') && v.ends_with('"'))
                || (v.starts_with('`') && v.ends_with('`')))
        {
            if v.starts_with('"') {
                serde_json::from_str::<String>(v).unwrap_or_else(|_| v[1..v.len() - 1].to_owned())
            } else {
                v[1..v.len() - 1].to_owned()
            }
        } else {
            v.to_owned()
        };
        out.push((k.trim().to_owned(), v));
    }
    Ok(out)
}

fn no_value(raw: &RawMarker, cx: &Ctxt) -> Option<Value> {
    match raw.value.as_deref() {
        None => Some(Value::Present),
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

fn parse_deep_copy(raw: &RawMarker, cx: &Ctxt) -> Option<DeepCopyGen> {
    match required_value(raw, cx)? {
        "true" => Some(DeepCopyGen::True),
        "false" => Some(DeepCopyGen::False),
        // `register` has been obsolete since Kubernetes 1.9 and changes nothing.
        "package" | "package,register" => Some(DeepCopyGen::Package),
        other => {
            cx.error_at(
                raw.span,
                format!(
                    "invalid `+{}={other}`: expected `package`, `true` or `false`",
                    raw.key
                ),
            );
            None
        }
    }
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

/// The value of `raw` read as `marker`'s kind; `None` after reporting an error, or for a
/// retired spelling written without a value.
fn read_value(marker: Marker, raw: &RawMarker, cx: &Ctxt) -> Option<Value> {
    match marker.kind {
        ValueKind::GenClient => match raw.value.as_deref() {
            Some(v) if !v.is_empty() => {
                cx.error_at(
                    raw.span,
                    format!(
                        "{GENCLIENT}={v} is invalid, use {GENCLIENT} if you want to generate a client or omit it when you do not"
                    ),
                );
                None
            }
            _ => Some(Value::Present),
        },
        ValueKind::Flag => no_value(raw, cx),
        ValueKind::Str => required_value(raw, cx).map(|v| Value::Str(v.to_owned())),
        // The empty string is a value here (the core group).
        ValueKind::StrOrEmpty => match raw.value.as_deref() {
            Some(v) => Some(Value::Str(v.trim().to_owned())),
            None => required_value(raw, cx).map(|_| Value::Present),
        },
        ValueKind::Bool => parse_bool(raw, cx).map(Value::Bool),
        ValueKind::Verbs => parse_verbs(raw, cx).map(Value::Verbs),
        ValueKind::Method => parse_method(raw, cx).map(Value::Method),
        ValueKind::DeepCopyGen => parse_deep_copy(raw, cx).map(Value::DeepCopy),
        ValueKind::Any => Some(Value::Present),
        ValueKind::Number => parse_number(raw, cx).map(Value::Number),
        ValueKind::Count => parse_count(raw, cx).map(Value::Count),
        ValueKind::Strings => required_value(raw, cx).map(|v| Value::Str(unquote(v))),
        ValueKind::Text => required_value(raw, cx).map(|v| Value::Str(unquote(v))),
        ValueKind::Json => required_value(raw, cx).map(|v| Value::Json(json_value(v))),
        ValueKind::JsonList => {
            required_value(raw, cx).map(|v| Value::JsonList(v.split(';').map(json_value).collect()))
        }
        ValueKind::OptArgs if raw.value.as_deref().is_none_or(str::is_empty) => {
            Some(Value::Args(Vec::new()))
        }
        ValueKind::Args | ValueKind::OptArgs => {
            let v = required_value(raw, cx)?;
            match split_args(v) {
                Ok(args) => Some(Value::Args(args)),
                Err(e) => {
                    cx.error_at(raw.span, format!("`+{}`: {e}", raw.key));
                    None
                }
            }
        }
        ValueKind::Renamed(new) => {
            if let Some(v) = raw.value.as_deref().filter(|v| !v.is_empty()) {
                cx.error_at(
                    raw.span,
                    format!("+{}={v} is invalid, use +{new} instead", raw.key),
                );
            }
            None
        }
    }
}

/// Interprets one raw marker; errors go to `cx`. `None` for markers that are not ours
/// (or that were invalid).
pub fn interpret(raw: &RawMarker, cx: &Ctxt) -> Option<(Marker, Value)> {
    let key = raw.key.as_str();
    // controller-gen's argument syntax puts the first argument's name after a colon:
    // `+kubebuilder:printcolumn:name="Ready",type=string` is `+kubebuilder:printcolumn`
    // with `name="Ready",type=string`.
    if vocabulary::by_key(key).is_none()
        && let Some(marker) = vocabulary::ALL.iter().find(|m| {
            matches!(m.kind, ValueKind::Args | ValueKind::OptArgs)
                && key.strip_prefix(m.key).is_some_and(|r| r.starts_with(':'))
        })
    {
        let first = &key[marker.key.len() + 1..];
        let joined = RawMarker {
            key: marker.key.to_owned(),
            value: Some(format!("{first}={}", raw.value.as_deref().unwrap_or(""))),
            span: raw.span,
            attr: raw.attr.clone(),
        };
        return read_value(*marker, &joined, cx).map(|value| (*marker, value));
    }
    let Some(marker) = vocabulary::by_key(key) else {
        let suggestion = vocabulary::suggest_key(key);
        if vocabulary::is_owned(key) {
            let hint = suggestion
                .map(|s| format!("; did you mean `+{s}`?"))
                .unwrap_or_default();
            cx.error_at(raw.span, format!("unknown marker `+{key}`{hint}"));
        } else if let Some(s) = suggestion.filter(|_| key.len() >= 6) {
            // Not our namespace, but so close to one of our keys that it is a typo.
            cx.error_at(
                raw.span,
                format!("unknown marker `+{key}`; did you mean `+{s}`?"),
            );
        }
        return None;
    };
    read_value(marker, raw, cx).map(|value| (marker, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::raw::parse_marker_line;
    use crate::markers::vocabulary::{
        CONVERSION_WEBHOOK, DEPRECATED_VERSION, METHOD, NO_STATUS, RBAC, WEBHOOK,
    };

    fn parse_one(line: &str) -> (Option<(Marker, Value)>, Vec<String>) {
        let cx = Ctxt::new();
        let (key, value) = parse_marker_line(line).unwrap();
        let raw = RawMarker {
            key: key.into(),
            value: value.map(Into::into),
            span: Span::call_site(),
            attr: None,
        };
        let m = interpret(&raw, &cx);
        let errs = match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        };
        (m, errs)
    }

    #[test]
    fn method_marker_parses_every_key() {
        let (m, errs) = parse_one(
            "+genclient:method=UpdateScale,verb=update,subresource=scale,input=Scale,result=autoscaling::Scale",
        );
        assert!(errs.is_empty(), "{errs:?}");
        let Some((METHOD, Value::Method(ext))) = m else {
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
    fn values_are_read_by_their_kind() {
        let (m, errs) = parse_one("+genclient:noStatus");
        assert!(errs.is_empty() && matches!(m, Some((NO_STATUS, Value::Present))));
        let (_, errs) = parse_one("+genclient:noStatus=yes");
        assert_eq!(errs, ["`+genclient:noStatus` takes no value, found `=yes`"]);
        let (m, _) = parse_one("+groupName=");
        assert!(matches!(m, Some((_, Value::Str(g))) if g.is_empty()));
        let (_, errs) = parse_one("+groupName");
        assert_eq!(errs, ["`+groupName` needs a value: `+groupName=...`"]);
        let (_, errs) = parse_one("+kubegen:resourceImpl=maybe");
        assert_eq!(
            errs,
            ["`+kubegen:resourceImpl` expects `true` or `false`, found `maybe`"]
        );
        let (m, _) = parse_one("+k8s:deepcopy-gen=package,register");
        assert!(matches!(
            m,
            Some((_, Value::DeepCopy(DeepCopyGen::Package)))
        ));
        let (m, errs) = parse_one("+k8s:deepcopy-gen:interfaces=k8s.io/x.Object");
        assert!(errs.is_empty() && matches!(m, Some((_, Value::Present))));
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
        let (_, errs) = parse_one("+kubegen:frobnicate");
        assert_eq!(errs, ["unknown marker `+kubegen:frobnicate`"]);
        let (_, errs) = parse_one("+kubebuilder:validation:Minimun=1");
        assert_eq!(
            errs,
            [
                "unknown marker `+kubebuilder:validation:Minimun`; did you mean `+kubebuilder:validation:Minimum`?"
            ]
        );
        // controller-gen's markers this generator reads are ours now, in both spellings.
        let (m, errs) = parse_one("+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get");
        assert!(errs.is_empty(), "{errs:?}");
        assert!(matches!(m, Some((RBAC, Value::Args(a))) if a.len() == 3));
        let (m, errs) = parse_one("+kubebuilder:deprecatedversion");
        assert!(errs.is_empty(), "{errs:?}");
        assert!(matches!(m, Some((DEPRECATED_VERSION, Value::Args(a))) if a.is_empty()));
        let (m, _) = parse_one(r#"+kubebuilder:deprecatedversion:warning="use v2""#);
        assert!(
            matches!(m, Some((DEPRECATED_VERSION, Value::Args(a))) if a == [("warning".to_owned(), "use v2".to_owned())])
        );
        let (_, errs) = parse_one("+kubebuilder:unservedversion=yes");
        assert_eq!(errs.len(), 1, "{errs:?}");
        let (m, errs) = parse_one("+kubebuilder:webhook:path=/validate,mutating=false");
        assert!(errs.is_empty(), "{errs:?}");
        assert!(matches!(m, Some((WEBHOOK, Value::Args(a))) if a.len() == 2));
        let (m, errs) = parse_one("+kubebuilder:webhook:conversion");
        assert!(errs.is_empty(), "{errs:?}");
        assert!(matches!(m, Some((CONVERSION_WEBHOOK, Value::Present))));
        for other in [
            "+kubebuilder:scaffold:imports",
            "+k8s:openapi-gen=true",
            "+readonly",
        ] {
            let (m, errs) = parse_one(other);
            assert!(m.is_none() && errs.is_empty(), "{other}: {errs:?}");
        }
    }

    #[test]
    fn crd_marker_values_are_read_by_kind() {
        let (m, errs) = parse_one("+kubebuilder:validation:Minimum=-1.5");
        assert!(errs.is_empty());
        assert!(matches!(m, Some((_, Value::Number(n))) if n.as_f64() == Some(-1.5)));
        let (_, errs) = parse_one("+kubebuilder:validation:Maximum=ten");
        assert_eq!(
            errs,
            ["`+kubebuilder:validation:Maximum` expects a number, found `ten`"]
        );
        let (_, errs) = parse_one("+kubebuilder:validation:MaxLength=-1");
        assert_eq!(
            errs,
            ["`+kubebuilder:validation:MaxLength` expects a non-negative integer, found `-1`"]
        );
        let (m, _) = parse_one("+kubebuilder:validation:Enum=a;\"b\";3");
        let Some((_, Value::JsonList(vs))) = m else {
            panic!("{m:?}")
        };
        assert_eq!(
            vs,
            [
                serde_json::json!("a"),
                serde_json::json!("b"),
                serde_json::json!(3)
            ]
        );
        let (m, _) = parse_one(
            "+kubebuilder:validation:XValidation:rule=\"self.a, self.b\",message=\"a,b\"",
        );
        let Some((_, Value::Args(args))) = m else {
            panic!("{m:?}")
        };
        assert_eq!(
            args,
            [
                ("rule".to_owned(), "self.a, self.b".to_owned()),
                ("message".to_owned(), "a,b".to_owned())
            ]
        );
        let (_, errs) = parse_one("+kubebuilder:printcolumn:name=\"x");
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains("unterminated quote"));
    }

    #[test]
    fn old_style_markers_are_rejected_with_the_new_spelling() {
        let (_, errs) = parse_one("+genclient=true");
        assert!(errs[0].starts_with("+genclient=true is invalid"));
        let (m, errs) = parse_one("+genclient=");
        assert!(errs.is_empty() && m.is_some());
        let (_, errs) = parse_one("+nonNamespaced=true");
        assert_eq!(
            errs,
            ["+nonNamespaced=true is invalid, use +genclient:nonNamespaced instead"]
        );
        let (_, errs) = parse_one("+readonly=true");
        assert_eq!(
            errs,
            ["+readonly=true is invalid, use +genclient:readonly instead"]
        );
    }
}
