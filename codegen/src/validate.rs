//! Semantic checks on folded markers, type shapes and whole packages. Every check
//! reports to the [`Ctxt`] and carries on, so all problems surface together.

use std::collections::BTreeMap;

use proc_macro2::Span;

use crate::ctxt::Ctxt;
use crate::markers::vocabulary::{
    DEEPCOPY_GEN, GENCLIENT, NAMESPACED, NO_VERBS, NON_NAMESPACED, ONLY_VERBS, READONLY, SKIP_VERBS,
};
use crate::markers::{TypeMarkers, Value};
use crate::model::{DeepCopyGen, Extension, Package, ResourceDef};

/// Conflicts among one item's markers (duplicates and placement are checked where they
/// are read, [`TypeMarkers`]).
pub fn type_markers(m: &TypeMarkers, cx: &Ctxt) {
    if let (Some(_), Some(span)) = (m.span(NAMESPACED), m.span(NON_NAMESPACED)) {
        cx.error_at(
            span,
            format!("`namespaced` conflicts with `{NON_NAMESPACED}`"),
        );
    }
    let (only_verbs, readonly) = (m.verb_list(ONLY_VERBS), m.span(READONLY));
    if let Some((skip, span)) = m.verb_list(SKIP_VERBS)
        && (only_verbs.is_some() || readonly.is_some())
    {
        let only = if readonly.is_some() {
            READONLY
        } else {
            ONLY_VERBS
        };
        let verbs: Vec<&str> = skip.iter().map(|v| v.as_str()).collect();
        cx.error_at(
            span,
            format!(
                "`{SKIP_VERBS}={}` cannot be combined with `{only}`: list the verbs in one of them",
                verbs.join(",")
            ),
        );
    }
    if let Some(span) = m.span(NO_VERBS)
        && (only_verbs.is_some() || m.span(SKIP_VERBS).is_some() || readonly.is_some())
    {
        cx.error_at(
            span,
            format!("`{NO_VERBS}` cannot be combined with onlyVerbs, skipVerbs or readonly"),
        );
    }
    let methods: Vec<&Extension> = m.methods().collect();
    for (i, ext) in methods.iter().enumerate() {
        if methods[..i].iter().any(|e| e.name == ext.name) {
            cx.error_at(
                ext.span,
                format!("duplicate extension method `{}`", ext.name),
            );
        }
    }
    for found in m.all(DEEPCOPY_GEN) {
        if matches!(found.value, Value::DeepCopy(DeepCopyGen::Package)) {
            cx.error_at(
                found.span,
                format!("`{DEEPCOPY_GEN}=package` is a package marker: put it in the version module's mod.rs (`//! {DEEPCOPY_GEN}=package`); types take `true` or `false`"),
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
        let span = m.span(GENCLIENT).unwrap_or_else(|| ident.span());
        cx.error_at(
            span,
            format!(
                "`{name}` is a list type: {GENCLIENT} belongs on the item type `{}`, not on its list",
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
