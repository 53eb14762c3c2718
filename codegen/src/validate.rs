//! Semantic checks on folded markers, type shapes and whole packages. Every check
//! reports to the [`Ctxt`] and carries on, so all problems surface together.

use std::collections::BTreeMap;

use proc_macro2::Span;

use crate::ctxt::Ctxt;
use crate::lower::TypeMarkers;
use crate::model::{DeepCopyGen, Package, ResourceDef};

fn duplicates<T>(cx: &Ctxt, name: &str, values: &[(T, Span)]) {
    for (_, span) in values.iter().skip(1) {
        cx.error_at(*span, format!("duplicate `{name}`"));
    }
}

/// Conflicts and duplicates among one item's markers.
pub fn type_markers(m: &TypeMarkers, cx: &Ctxt) {
    duplicates(cx, "group", &m.group);
    duplicates(cx, "version", &m.version);
    duplicates(cx, "kind", &m.kind);
    duplicates(cx, "plural", &m.plural);
    duplicates(cx, "groupGoName", &m.group_go_name);
    duplicates(cx, "k8s:deepcopy-gen", &m.deep_copy);
    duplicates(cx, "resourceImpl", &m.resource_impl);
    if let (Some(_), Some(span)) = (m.namespaced, m.non_namespaced) {
        cx.error_at(
            span,
            "`namespaced` conflicts with `+genclient:nonNamespaced`",
        );
    }
    if let Some((skip, span)) = &m.skip_verbs
        && (m.only_verbs.is_some() || m.readonly.is_some())
    {
        let only = if m.readonly.is_some() {
            "+genclient:readonly"
        } else {
            "+genclient:onlyVerbs"
        };
        let verbs: Vec<&str> = skip.iter().map(|v| v.as_str()).collect();
        cx.error_at(
            *span,
            format!(
                "`+genclient:skipVerbs={}` cannot be combined with `{only}`: list the verbs in one of them",
                verbs.join(",")
            ),
        );
    }
    if let Some(span) = m.no_verbs
        && (m.only_verbs.is_some() || m.skip_verbs.is_some() || m.readonly.is_some())
    {
        cx.error_at(
            span,
            "`+genclient:noVerbs` cannot be combined with onlyVerbs, skipVerbs or readonly",
        );
    }
    for (i, ext) in m.methods.iter().enumerate() {
        if m.methods[..i].iter().any(|e| e.name == ext.name) {
            cx.error_at(
                ext.span,
                format!("duplicate extension method `{}`", ext.name),
            );
        }
    }
    for (value, span) in &m.deep_copy {
        if *value == DeepCopyGen::Package {
            cx.error_at(
                *span,
                "`+k8s:deepcopy-gen=package` is a package marker: put it in the version module's mod.rs (`//! +k8s:deepcopy-gen=package`); types take `true` or `false`",
            );
        }
    }
}

/// A resource type must be a non-generic struct with named fields and a `metadata`
/// field, and must not be a list type.
pub fn resource_shape(input: &syn::DeriveInput, m: &TypeMarkers, cx: &Ctxt) {
    let ident = &input.ident;
    let name = ident.to_string();
    if name.len() > 4 && name.ends_with("List") {
        let span = m.genclient.unwrap_or_else(|| ident.span());
        cx.error_at(
            span,
            format!(
                "`{name}` is a list type: +genclient belongs on the item type `{}`, not on its list",
                &name[..name.len() - 4]
            ),
        );
        return;
    }
    let named = match &input.data {
        syn::Data::Struct(s) => match &s.fields {
            syn::Fields::Named(fields) => Some(fields),
            _ => None,
        },
        _ => None,
    };
    let Some(fields) = named else {
        cx.error_at(
            ident.span(),
            format!(
                "resource `{name}` must be a struct with named fields (metadata, spec, status)"
            ),
        );
        return;
    };
    if let Some(param) = input.generics.params.first() {
        cx.error_spanned_by(param, format!("resource `{name}` cannot be generic"));
    }
    if !fields
        .named
        .iter()
        .any(|f| f.ident.as_ref().is_some_and(|i| i == "metadata"))
    {
        cx.error_at(
            ident.span(),
            format!(
                "resource `{name}` has no `metadata` field: add `pub metadata: ObjectMeta` (k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)"
            ),
        );
    }
}

fn dns_like(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && !s.starts_with(['-', '.'])
        && !s.ends_with(['-', '.'])
}

/// Group, version, kind and plural must be valid Kubernetes names.
pub fn resource_names(r: &ResourceDef, span: Span, cx: &Ctxt) {
    if !r.group.is_empty() && !dns_like(&r.group) {
        cx.error_at(
            span,
            format!(
                "invalid group `{}`: expected a lower-case DNS subdomain such as `example.com`",
                r.group
            ),
        );
    }
    if !dns_like(&r.version) || r.version.contains('.') {
        cx.error_at(
            span,
            format!(
                "invalid version `{}`: expected a lower-case name such as `v1alpha1`",
                r.version
            ),
        );
    }
    if syn::parse_str::<syn::Ident>(&r.kind).is_err()
        || !r.kind.starts_with(|c: char| c.is_ascii_uppercase())
    {
        cx.error_at(
            span,
            format!("invalid kind `{}`: expected an UpperCamelCase name", r.kind),
        );
    }
    // A resource name is a DNS-1035 label: it starts with a letter (and must, since
    // accessors are named after it).
    if !dns_like(&r.plural)
        || r.plural.contains('.')
        || !r.plural.starts_with(|c: char| c.is_ascii_lowercase())
    {
        cx.error_at(
            span,
            format!(
                "invalid plural `{}`: expected a lower-case name such as `foos`",
                r.plural
            ),
        );
    }
}

/// Package-wide rules: plurals are unique within a group/version. Returns, for each
/// offending type, its index in `pkg.types` and the message.
pub fn package_problems(pkg: &Package) -> Vec<(usize, String)> {
    let mut seen: BTreeMap<&str, &syn::Ident> = BTreeMap::new();
    let mut problems = Vec::new();
    for (i, ty) in pkg.types.iter().enumerate() {
        let Some(r) = &ty.resource else { continue };
        if let Some(previous) = seen.insert(r.plural.as_str(), &ty.ident) {
            problems.push((
                i,
                format!(
                    "duplicate plural `{}`: `{}` and `{previous}` both map to it; set `+resourceName=` on one of them",
                    r.plural, ty.ident
                ),
            ));
        }
    }
    problems
}

/// [`package_problems`] reported to `cx`, spanned at the offending types.
pub fn package(pkg: &Package, cx: &Ctxt) {
    for (i, message) in package_problems(pkg) {
        cx.error_at(pkg.types[i].ident.span(), message);
    }
}
