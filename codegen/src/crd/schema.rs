//! Rust types → structural OpenAPI v3 schemas, as kube-apiserver requires of a CRD
//! (`k8s.io/apiextensions-apiserver/pkg/apiserver/schema/validation.go`,
//! "Specifying a structural schema" in the CRD docs): every node has a `type`, except
//! under `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`; no
//! `$ref`; no `oneOf`/`anyOf` branches with types or properties of their own.
//!
//! What serde reads decides the schema: struct fields by their serde names (and their
//! `alias`es, which make a field optional), `required` for fields that are neither
//! `Option`, `#[serde(default)]` (field or container) nor `+optional`; `skip` fields are
//! absent; `flatten` merges the flattened type's properties; `transparent` is the one
//! field's schema. Tuples, tuple structs and tuple variants are arrays of exactly their length
//! (`minItems` = `maxItems`) whose items are the elements' one schema, int-or-string for
//! integers and strings mixed (with a CEL rule telling which position is which), or an
//! untyped node otherwise.
//!
//! Enums (variant `rename`, `alias`, `skip` and `rename_all` honoured):
//! - unit-only → a string enum;
//! - externally tagged, data variants only → an object with one optional property per
//!   variant and `minProperties` = `maxProperties` = 1;
//! - externally tagged, unit and data variants mixed (`"Recreate"` or
//!   `{"rollingUpdate": {...}}`) → an untyped `x-kubernetes-preserve-unknown-fields`
//!   node: the only structural node accepting both a string and an object, and one
//!   kube-apiserver lets no CEL rule see. `SchemaDeclType`
//!   (`k8s.io/apiserver/pkg/cel/common/schemas.go`) gives an untyped node no CEL type
//!   ("Schemas with XPreserveUnknownFields not exposed unless they are objects"), so a
//!   rule on it is refused at CRD creation (`apiextensions-apiserver/pkg/apiserver/
//!   schema/cel/compilation.go`: "rule declared on schema that does not support
//!   validation rules"), and an ancestor's rule cannot select it (the parent's object
//!   type leaves out properties without a type); `x-kubernetes-int-or-string`, the one
//!   untyped node CEL sees (`dyn`), only admits integers and strings
//!   (`ConvertJSONSchemaPropsWithPostProcess` sets `type: [integer, string]`). Such a
//!   value is kept as sent, unchecked;
//! - internally tagged → one object with the tag (a required string enum) and the union
//!   of the variants' properties, plus a CEL rule per variant requiring its own required
//!   fields when the tag names it (`self.kind != 'Service' || (has(self.name) && ...)`);
//! - adjacently tagged → the tag and the union of the contents, plus a rule per data
//!   variant requiring the content and its required fields;
//! - untagged → the union of the variants (integer-or-string → `x-kubernetes-int-or-string`;
//!   mixed kinds → `x-kubernetes-preserve-unknown-fields`); objects only → their merged
//!   object and a rule that one variant's required fields are all present. An untagged
//!   unit variant (`null`) is an error.
//!
//! Generated rules use only `has`, `size`, `string()`, `==`/`!=`/`in` and field names
//! of letters and digits, so they compile alike in kube-apiserver's cel-go and the test
//! server's kube-cel (which has no `type()` and escapes `_` differently), and they never
//! select a property kube-apiserver gives no CEL type. controller-gen's validation
//! markers on a field or a type are applied last ([`super::validation`]); a type's
//! marker rules follow the generated ones.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};
use syn::spanned::Spanned;

use super::serde_attrs::{Container, Field, Variant};
use super::template::{FLATTEN, HOLE, is_hole};
use super::{k8s, validation};
use crate::ctxt::Ctxt;
use crate::markers::TypeMarkers;
use crate::markers::vocabulary::{
    MAX_DEPTH, OPTIONAL, REQUIRED, SCHEMALESS, VALIDATION_OPTIONAL, VALIDATION_REQUIRED,
};
use crate::model::{Body, TypeDef};
use crate::resolve::{Resolver, substitute};

/// The types a schema may refer to by name: the package's own (CLI), or, for the derive,
/// none: a type defined elsewhere becomes a hole, `{"$kubegen:hole": n, ...}`, that the
/// derived code fills at run time with `<T as kubegen::crd::Schema>::schema()` (the same
/// generator's output for `T`), the placeholder's other keys (the field's description and
/// markers) applied over it.
pub struct Schemas<'a> {
    types: BTreeMap<String, &'a TypeDef>,
    holes: Option<std::cell::RefCell<Vec<Hole>>>,
    cx: &'a Ctxt,
    /// The package's `use` bindings (the CLI; the derive sees no `use` items).
    resolver: Option<&'a Resolver>,
    /// The modules of the types being described, innermost last: a field's type is read
    /// in the module of the type that declares it.
    modules: RefCell<Vec<Vec<syn::Ident>>>,
    /// Recursive types already warned about.
    cut: RefCell<BTreeSet<String>>,
}

/// How a recursive type's cut node describes itself; a field's own description goes first.
const CUT_NOTE: &str = "Recursive:";

/// What the derive leaves to run time: a type defined elsewhere.
#[derive(Clone, Debug, PartialEq)]
pub enum Hole {
    /// `<T as kubegen::crd::Schema>::schema()`.
    Schema(syn::Type),
    /// A bare name that is also a k8s-openapi type's (`Condition`, `Probe`): `T`'s own
    /// `Schema` when `T` implements it, else Kubernetes' schema of that name (this
    /// JSON), which requires `T` to be a k8s-openapi type (`k8s_openapi::DeepMerge`).
    SchemaOrK8s(syn::Type, Value),
}

/// The description of doc comments: marker lines dropped, lines of a paragraph joined
/// with spaces, paragraphs with newlines (`None` when empty).
pub fn description(attrs: &[syn::Attribute]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &nv.value
        else {
            continue;
        };
        // `split`, not `lines`: an empty `///` is a paragraph break.
        for line in s.value().split('\n') {
            let line = line.trim();
            if crate::markers::parse_marker_line(line).is_some() {
                continue;
            }
            if line.is_empty() {
                if !current.is_empty() {
                    paragraphs.push(std::mem::take(&mut current));
                }
            } else {
                if !current.is_empty() {
                    current.push(' ');
                }
                current.push_str(line);
            }
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n"))
}

fn last_ident(path: &syn::Path) -> Option<String> {
    path.segments.last().map(|s| s.ident.to_string())
}

/// The generic arguments of a path's last segment.
pub(crate) fn type_args(path: &syn::Path) -> Vec<&syn::Type> {
    match path.segments.last().map(|s| &s.arguments) {
        Some(syn::PathArguments::AngleBracketed(a)) => a
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Sets `schema`'s description to `d`, keeping a recursive cut's note after it.
fn describe(schema: &mut Value, d: String) {
    let d = match schema.get("description").and_then(Value::as_str) {
        Some(cut) if cut.starts_with(CUT_NOTE) => format!("{d}\n{cut}"),
        _ => d,
    };
    insert(schema, "description", json!(d));
}

/// How many levels of a recursive type are described before the cut: its
/// `+kubegen:maxDepth=N` (at least 1), else 1.
fn max_depth(markers: &TypeMarkers) -> usize {
    markers
        .all(MAX_DEPTH)
        .find_map(|f| match f.value {
            crate::markers::value::Value::Count(n) => usize::try_from(n).ok(),
            _ => None,
        })
        .unwrap_or(1)
        .max(1)
}

/// `Option<T>`'s `T`.
pub fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    if p.qself.is_none() && last_ident(&p.path).as_deref() == Some("Option") {
        type_args(&p.path).first().copied()
    } else {
        None
    }
}

fn insert(schema: &mut Value, key: &str, v: Value) {
    if let Value::Object(m) = schema {
        m.insert(key.to_owned(), v);
    }
}

/// Whether a schema is an object schema with properties (so it can be merged).
fn is_object(v: &Value) -> bool {
    v.get("type") == Some(&json!("object")) && v.get("additionalProperties").is_none()
}

/// The union of object schemas: every property (recursively merged when two variants
/// share it), required only when required by all.
fn merge_objects(parts: &[Value]) -> Value {
    let mut props: Map<String, Value> = Map::new();
    let mut required: Option<Vec<String>> = None;
    for p in parts {
        if let Some(Value::Object(ps)) = p.get("properties") {
            for (k, v) in ps {
                let merged = match props.get(k) {
                    Some(old) => union(&[old.clone(), v.clone()]),
                    None => v.clone(),
                };
                props.insert(k.clone(), merged);
            }
        }
        let req: Vec<String> = p
            .get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        required = Some(match required {
            None => req,
            Some(old) => old.into_iter().filter(|r| req.contains(r)).collect(),
        });
    }
    let mut out = json!({"type": "object"});
    if !props.is_empty() {
        insert(&mut out, "properties", Value::Object(props));
    }
    if let Some(req) = required.filter(|r| !r.is_empty()) {
        insert(&mut out, "required", json!(req));
    }
    out
}

/// One schema accepting what any of `parts` accepts, structurally: same-typed parts
/// merge, integer-or-string is int-or-string, anything else preserves unknown fields.
fn union(parts: &[Value]) -> Value {
    let types: Vec<Option<&Value>> = parts.iter().map(|p| p.get("type")).collect();
    if parts.iter().all(is_object) {
        return merge_objects(parts);
    }
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Value::Object(m) = &mut v {
            m.remove("description");
        }
        v
    };
    if let Some(first) = parts.first()
        && parts.iter().all(|p| strip(p) == strip(first))
    {
        return first.clone();
    }
    let kinds: std::collections::BTreeSet<&str> = types
        .iter()
        .filter_map(|t| t.and_then(Value::as_str))
        .collect();
    if types.iter().all(Option::is_some) && kinds.len() == 1 {
        // Same type, different constraints: the type alone.
        return json!({"type": kinds.iter().next().copied().unwrap_or("object")});
    }
    if types.iter().all(Option::is_some) && kinds.iter().all(|k| matches!(*k, "integer" | "string"))
    {
        return json!({"x-kubernetes-int-or-string": true});
    }
    json!({"x-kubernetes-preserve-unknown-fields": true})
}

/// A variant as serde reads it: its name, aliases, content (`None` for a unit variant)
/// and description.
struct Part {
    name: String,
    aliases: Vec<String>,
    content: Option<Value>,
    description: Option<String>,
}

/// CEL's reserved words, which kube-apiserver escapes as `__word__` (`apiservercel.Escape`).
const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// `self.<name>` can be written as is, the same in every CEL environment: letters and
/// digits, not a reserved word. kube-apiserver escapes a name with `__`, `.`, `-` or `/`
/// (`apiservercel.Escape`), the test server's kube-cel also a single `_` (`a_b` is
/// `a__b` there): rules skip such fields rather than depend on one escaping.
fn cel_selectable(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric())
        && !CEL_RESERVED.contains(&name)
}

/// A CEL string literal.
fn cel_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Whether kube-apiserver gives a property of this schema a CEL type, so that a rule may
/// select it (`SchemaDeclType` in `k8s.io/apiserver/pkg/cel/common/schemas.go` drops the
/// properties it returns nil for: untyped nodes, arrays of them, maps of them). A
/// derive's hole stands for a type's schema, which has a type.
fn cel_visible(s: &Value) -> bool {
    if is_hole(s) || s.get("x-kubernetes-int-or-string") == Some(&json!(true)) {
        return true;
    }
    match s.get("type").and_then(Value::as_str) {
        Some("array") => s.get("items").is_some_and(cel_visible),
        Some("object") => match s.get("additionalProperties") {
            Some(a @ Value::Object(_)) => cel_visible(a),
            _ => true,
        },
        Some(_) => true,
        None => false,
    }
}

/// The required fields of an object schema.
fn required_of(s: &Value) -> Vec<String> {
    s.get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// `has(<on>.a) && has(<on>.b)` for the fields of `fields` that `object` (the schema
/// `on` has) lets a rule select.
fn has_all(on: &str, object: &Value, fields: &[String]) -> Vec<String> {
    fields
        .iter()
        .filter(|f| {
            cel_selectable(f)
                && object
                    .get("properties")
                    .and_then(|p| p.get(f.as_str()))
                    .is_some_and(cel_visible)
        })
        .map(|f| format!("has({on}.{f})"))
        .collect()
}

/// Appends generated rules to a schema's `x-kubernetes-validations`.
fn add_rules(schema: &mut Value, rules: Vec<Value>) {
    let Value::Object(m) = schema else { return };
    if rules.is_empty() {
        return;
    }
    match m.get_mut("x-kubernetes-validations") {
        Some(Value::Array(existing)) => existing.extend(rules),
        _ => {
            m.insert("x-kubernetes-validations".into(), Value::Array(rules));
        }
    }
}

/// Internally tagged (`content` `None`) or adjacently tagged: one rule per variant whose
/// fields the merged object cannot require for every variant: when the tag names the
/// variant, its required fields (the content, and the content's required fields, when
/// adjacently tagged) are present.
fn tagged_rules(schema: &Value, tag: &str, content: Option<&str>, parts: &[Part]) -> Vec<Value> {
    if !cel_selectable(tag) {
        return Vec::new();
    }
    let merged_required = required_of(schema);
    let mut rules = Vec::new();
    for p in parts {
        let Some(c) = &p.content else { continue };
        let checks: Vec<String> = match content {
            None => {
                let need: Vec<String> = required_of(c)
                    .into_iter()
                    .filter(|f| !merged_required.contains(f))
                    .collect();
                has_all("self", schema, &need)
            }
            Some(content) => {
                if !cel_selectable(content) {
                    continue;
                }
                let Some(cs) = schema.get("properties").and_then(|p| p.get(content)) else {
                    continue;
                };
                if !cel_visible(cs) {
                    continue;
                }
                let mut checks = vec![format!("has(self.{content})")];
                if is_object(cs) && is_object(c) {
                    let need: Vec<String> = required_of(c)
                        .into_iter()
                        .filter(|f| !required_of(cs).contains(f))
                        .collect();
                    checks.extend(has_all(&format!("self.{content}"), cs, &need));
                }
                checks
            }
        };
        if checks.is_empty() {
            continue;
        }
        let names: Vec<String> = std::iter::once(&p.name)
            .chain(&p.aliases)
            .map(|n| cel_str(n))
            .collect();
        let when = match names.as_slice() {
            [one] => format!("self.{tag} != {one}"),
            _ => format!("!(self.{tag} in [{}])", names.join(", ")),
        };
        let fields: Vec<String> = checks
            .iter()
            .map(|c| {
                c.trim_start_matches("has(self.")
                    .trim_end_matches(')')
                    .to_owned()
            })
            .collect();
        rules.push(json!({
            "rule": format!("{when} || ({})", checks.join(" && ")),
            "message": format!("{tag} {:?} requires {}", p.name, fields.join(", ")),
        }));
    }
    rules
}

/// Untagged variants that are all objects: a rule that some variant's required fields
/// are all present (serde tries the variants in order and fails when none matches).
fn untagged_rule(schema: &Value, parts: &[Part]) -> Vec<Value> {
    let mut alternatives = Vec::new();
    let mut described = Vec::new();
    for p in parts {
        let Some(c) = &p.content else {
            return Vec::new();
        };
        let required = required_of(c);
        let checks = has_all("self", schema, &required);
        if checks.is_empty() || checks.len() != required.len() {
            // A variant without (checkable) required fields matches any object.
            return Vec::new();
        }
        alternatives.push(format!("({})", checks.join(" && ")));
        described.push(format!("{} ({})", p.name, required.join(", ")));
    }
    if alternatives.len() < 2 {
        return Vec::new();
    }
    vec![json!({
        "rule": alternatives.join(" || "),
        "message": format!("must have the required fields of one of {}", described.join(", ")),
    })]
}

impl<'a> Schemas<'a> {
    /// Schemas over `types` (a package's types); problems go to `cx`.
    pub fn new(types: impl IntoIterator<Item = &'a TypeDef>, cx: &'a Ctxt) -> Self {
        Self {
            types: types
                .into_iter()
                .map(|t| (t.ident.to_string(), t))
                .collect(),
            holes: None,
            cx,
            resolver: None,
            modules: RefCell::default(),
            cut: RefCell::default(),
        }
    }

    /// Field types are read through the `use` items of their files (`metav1::ObjectMeta`,
    /// renamed imports, the package's re-exports): [`crate::resolve`].
    pub fn with_resolver(mut self, resolver: &'a Resolver) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Schemas for a derive: only `ty` itself is known; other named types are holes.
    pub fn for_derive(ty: &'a TypeDef, cx: &'a Ctxt) -> Self {
        Self {
            types: BTreeMap::from([(ty.ident.to_string(), ty)]),
            holes: Some(std::cell::RefCell::new(Vec::new())),
            cx,
            resolver: None,
            modules: RefCell::default(),
            cut: RefCell::default(),
        }
    }

    /// The holes, in hole order (derive mode).
    pub fn take_holes(&self) -> Vec<Hole> {
        self.holes.as_ref().map(|h| h.take()).unwrap_or_default()
    }

    /// The schema of a named type of the package, its type-level markers applied.
    pub fn named(&self, ty: &TypeDef, stack: &mut Vec<String>) -> Value {
        let name = ty.ident.to_string();
        let markers = TypeMarkers::from_attrs(&ty.attrs, self.cx);
        let depth = stack.iter().filter(|n| **n == name).count();
        if depth > 0 && depth >= max_depth(&markers) {
            return self.cut(ty, stack);
        }
        stack.push(name);
        self.modules.borrow_mut().push(ty.module.clone());
        let container = Container::from_attrs(&ty.attrs, self.cx);
        let mut schema = match &ty.body {
            Body::Struct(fields) => self.structure(ty, fields, &container, stack),
            Body::Enum(variants) => self.enumeration(ty, variants, &container, stack),
            Body::Union | Body::Alias(_) => {
                self.cx.error_at(
                    ty.ident.span(),
                    format!("`{}`: no schema for a union or type alias", ty.ident),
                );
                json!({"type": "object"})
            }
        };
        stack.pop();
        self.modules.borrow_mut().pop();
        if let Some(d) = description(&ty.attrs) {
            insert(&mut schema, "description", json!(d));
        }
        validation::apply(
            &mut schema,
            markers.iter().filter(|f| f.marker != MAX_DEPTH),
            self.cx,
        );
        schema
    }

    /// Where a recursive type meets itself again (`stack` holds the way there): a node
    /// that keeps unknown fields (an object for a struct with fields, untyped otherwise,
    /// both structural), described as cut, and a warning naming the cycle, once per
    /// type. kube-apiserver has no `$ref`, so a schema cannot recurse; below the cut
    /// the values are stored as written and not checked.
    fn cut(&self, ty: &TypeDef, stack: &[String]) -> Value {
        let name = ty.ident.to_string();
        if self.cut.borrow_mut().insert(name.clone()) {
            let from = stack.iter().position(|n| *n == name).unwrap_or(0);
            let mut cycle = stack[from..].to_vec();
            cycle.push(name.clone());
            self.cx.warn_at(
                ty.ident.span(),
                format!(
                    "`{name}` contains itself ({}): its schema is cut there with a node that keeps unknown fields; `+kubegen:maxDepth=N` on `{name}` describes N levels first",
                    cycle.join(" → ")
                ),
            );
        }
        let note = format!(
            "{CUT_NOTE} a `{name}` again; its fields are not described or checked below this depth (`+kubegen:maxDepth` on `{name}` describes more levels)."
        );
        match &ty.body {
            Body::Struct(syn::Fields::Named(_)) => json!({
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": true,
                "description": note,
            }),
            _ => json!({"x-kubernetes-preserve-unknown-fields": true, "description": note}),
        }
    }

    fn structure(
        &self,
        ty: &TypeDef,
        fields: &syn::Fields,
        container: &Container,
        stack: &mut Vec<String>,
    ) -> Value {
        if container.transparent {
            // serde reads the one field that is not skipped as the whole value.
            let kept: Vec<&syn::Field> = fields
                .iter()
                .filter(|f| !Field::from_attrs(&f.attrs, self.cx).skip)
                .collect();
            if let [f] = kept.as_slice() {
                return self.field_schema(f, stack).0;
            }
            self.cx.error_at(
                ty.ident.span(),
                format!(
                    "`{}`: `#[serde(transparent)]` needs exactly one field that is not skipped",
                    ty.ident
                ),
            );
            return json!({"type": "object"});
        }
        match fields {
            syn::Fields::Named(named) => {
                let mut props = Map::new();
                let mut required = Vec::new();
                let mut flattened = Vec::new();
                for f in &named.named {
                    let attrs = Field::from_attrs(&f.attrs, self.cx);
                    if attrs.skip {
                        continue;
                    }
                    let Some(ident) = &f.ident else { continue };
                    let rust_name = ident.to_string();
                    let rust_name = rust_name.strip_prefix("r#").unwrap_or(&rust_name);
                    let (fs, optional) = self.field_schema(f, stack);
                    if attrs.flatten {
                        flattened.push((fs, optional || attrs.default, f.ty.span()));
                        continue;
                    }
                    let name = attrs.rename.clone().unwrap_or_else(|| {
                        container
                            .rename_all
                            .map_or_else(|| rust_name.to_owned(), |r| r.field(rust_name))
                    });
                    let markers = TypeMarkers::from_field_attrs(&f.attrs, self.cx);
                    let forced_required = markers.span(REQUIRED).is_some()
                        || markers.span(VALIDATION_REQUIRED).is_some();
                    let forced_optional = markers.span(OPTIONAL).is_some()
                        || markers.span(VALIDATION_OPTIONAL).is_some();
                    // A field read under an alias may be absent under its own name.
                    let is_required = forced_required
                        || !(optional
                            || attrs.default
                            || container.default
                            || forced_optional
                            || !attrs.aliases.is_empty());
                    if is_required {
                        required.push(name.clone());
                    }
                    for alias in &attrs.aliases {
                        props.insert(alias.clone(), fs.clone());
                    }
                    props.insert(name, fs);
                }
                let mut schema = json!({"type": "object"});
                for (fs, optional, span) in flattened {
                    if fs.get("additionalProperties").is_some()
                        || fs.get("x-kubernetes-preserve-unknown-fields").is_some()
                    {
                        // A flattened map takes every other key: unknown fields are data.
                        insert(
                            &mut schema,
                            "x-kubernetes-preserve-unknown-fields",
                            json!(true),
                        );
                        continue;
                    }
                    if let Some(n) = fs.get(HOLE) {
                        // The derive merges the type's properties in at run time, as below.
                        if let Value::Object(m) = &mut schema {
                            let list = m.entry(FLATTEN).or_insert_with(|| json!([]));
                            if let Value::Array(list) = list {
                                list.push(json!({"hole": n, "optional": optional}));
                            }
                        }
                        continue;
                    }
                    if !is_object(&fs) {
                        self.cx
                            .error_at(span, "`#[serde(flatten)]` needs a struct or map field");
                        continue;
                    }
                    if let Some(Value::Object(ps)) = fs.get("properties") {
                        for (k, v) in ps {
                            props.insert(k.clone(), v.clone());
                        }
                    }
                    if !optional && let Some(Value::Array(r)) = fs.get("required") {
                        required.extend(r.iter().filter_map(|s| s.as_str().map(str::to_owned)));
                    }
                }
                if !props.is_empty() {
                    insert(&mut schema, "properties", Value::Object(props));
                }
                if !required.is_empty() {
                    required.sort();
                    required.dedup();
                    insert(&mut schema, "required", json!(required));
                }
                schema
            }
            syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                let f = &u.unnamed[0];
                self.field_schema(f, stack).0
            }
            // serde writes a tuple struct as a tuple.
            syn::Fields::Unnamed(u) => {
                let elems: Vec<&syn::Type> = u.unnamed.iter().map(|f| &f.ty).collect();
                self.tuple(&elems, stack)
            }
            _ => {
                self.cx.error_at(
                    ty.ident.span(),
                    format!(
                        "`{}`: a unit struct has no structural schema (serde writes it as null)",
                        ty.ident
                    ),
                );
                json!({"type": "object"})
            }
        }
    }

    fn variant_name(&self, v: &syn::Variant, attrs: &Variant, container: &Container) -> String {
        attrs.rename.clone().unwrap_or_else(|| {
            let n = v.ident.to_string();
            container.rename_all.map_or(n.clone(), |r| r.variant(&n))
        })
    }

    /// A variant's content: its fields as an object, a newtype's inner schema, or `None`
    /// for a unit variant.
    fn variant_content(
        &self,
        v: &syn::Variant,
        attrs: &Variant,
        stack: &mut Vec<String>,
    ) -> Option<Value> {
        match &v.fields {
            syn::Fields::Unit => None,
            syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                Some(self.field_schema(&u.unnamed[0], stack).0)
            }
            syn::Fields::Unnamed(u) => {
                let elems: Vec<&syn::Type> = u.unnamed.iter().map(|f| &f.ty).collect();
                Some(self.tuple(&elems, stack))
            }
            syn::Fields::Named(_) => {
                let container = Container {
                    rename_all: attrs.rename_all,
                    ..Container::default()
                };
                let ty = TypeDef {
                    ident: v.ident.clone(),
                    vis: syn::Visibility::Inherited,
                    generics: syn::Generics::default(),
                    attrs: Vec::new(),
                    body: Body::Struct(v.fields.clone()),
                    module: Vec::new(),
                    deep_copy: false,
                    derived: crate::model::Derived::default(),
                    resource: None,
                };
                Some(self.structure(&ty, &v.fields, &container, stack))
            }
        }
    }

    fn enumeration(
        &self,
        ty: &TypeDef,
        variants: &[syn::Variant],
        container: &Container,
        stack: &mut Vec<String>,
    ) -> Value {
        let kept: Vec<(&syn::Variant, Variant)> = variants
            .iter()
            .map(|v| (v, Variant::from_attrs(&v.attrs, self.cx)))
            .filter(|(_, a)| !a.skip)
            .collect();
        let is_unit = |v: &syn::Variant| matches!(v.fields, syn::Fields::Unit);
        if container.tag.is_none()
            && !container.untagged
            && kept.iter().any(|(v, _)| is_unit(v))
            && kept.iter().any(|(v, _)| !is_unit(v))
        {
            // Externally tagged, unit and data variants mixed: serde writes a string or an
            // object with one key. Only an untyped node accepts both, and kube-apiserver
            // lets no CEL rule see such a node (see the module docs), so the value is
            // kept as sent, unchecked.
            return json!({"x-kubernetes-preserve-unknown-fields": true});
        }
        let mut parts: Vec<Part> = Vec::new();
        for (v, attrs) in &kept {
            parts.push(Part {
                name: self.variant_name(v, attrs, container),
                aliases: attrs.aliases.clone(),
                content: self.variant_content(v, attrs, stack),
                description: description(&v.attrs),
            });
        }
        let names: Vec<Value> = parts
            .iter()
            .flat_map(|p| std::iter::once(&p.name).chain(&p.aliases))
            .map(|n| json!(n))
            .collect();
        let all_unit = parts.iter().all(|p| p.content.is_none());
        if container.untagged {
            let schemas: Vec<Value> = parts
                .iter()
                .map(|p| {
                    p.content
                        .clone()
                        .unwrap_or_else(|| json!({"type": "string"}))
                })
                .collect();
            if parts.iter().any(|p| p.content.is_none()) {
                // An untagged unit variant is `null`.
                self.cx.error_at(
                    ty.ident.span(),
                    format!(
                        "`{}`: an untagged unit variant deserializes from null, which a CRD schema cannot express",
                        ty.ident
                    ),
                );
            }
            let mut schema = union(&schemas);
            if schemas.iter().all(is_object) && is_object(&schema) {
                let rules = untagged_rule(&schema, &parts);
                add_rules(&mut schema, rules);
            }
            return schema;
        }
        match (&container.tag, &container.content) {
            (None, _) if all_unit => json!({"type": "string", "enum": names}),
            (None, _) => {
                let mut props = Map::new();
                for p in &parts {
                    let mut s = p
                        .content
                        .clone()
                        .unwrap_or_else(|| json!({"type": "object"}));
                    if let Some(d) = &p.description {
                        describe(&mut s, d.clone());
                    }
                    for alias in &p.aliases {
                        props.insert(alias.clone(), s.clone());
                    }
                    props.insert(p.name.clone(), s);
                }
                json!({"type": "object", "properties": props, "maxProperties": 1, "minProperties": 1})
            }
            (Some(tag), None) => {
                let mut objects = Vec::new();
                for p in &parts {
                    let n = &p.name;
                    match &p.content {
                        None => objects.push(json!({"type": "object"})),
                        Some(c) if is_object(c) => objects.push(c.clone()),
                        Some(c) if is_hole(c) => self.cx.error_at(
                            ty.ident.span(),
                            format!(
                                "`{}`: internally tagged variant `{n}` holds a type defined elsewhere, whose fields the derive cannot merge; make it a struct variant, or generate the CRD with `kubegen-codegen crd`",
                                ty.ident
                            ),
                        ),
                        Some(_) => self.cx.error_at(
                            ty.ident.span(),
                            format!(
                                "`{}`: internally tagged variant `{n}` must hold a struct (serde rejects other contents)",
                                ty.ident
                            ),
                        ),
                    }
                }
                let mut schema = merge_objects(&objects);
                self.add_tag(&mut schema, tag, names);
                let rules = tagged_rules(&schema, tag, None, &parts);
                add_rules(&mut schema, rules);
                schema
            }
            (Some(tag), Some(content)) => {
                let contents: Vec<Value> = parts.iter().filter_map(|p| p.content.clone()).collect();
                let mut schema = json!({"type": "object"});
                if !contents.is_empty() {
                    insert(
                        &mut schema,
                        "properties",
                        json!({ content.as_str(): union(&contents) }),
                    );
                }
                self.add_tag(&mut schema, tag, names);
                let rules = tagged_rules(&schema, tag, Some(content), &parts);
                add_rules(&mut schema, rules);
                schema
            }
        }
    }

    fn add_tag(&self, schema: &mut Value, tag: &str, names: Vec<Value>) {
        let Value::Object(m) = schema else { return };
        let props = m
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(p) = props {
            p.insert(tag.to_owned(), json!({"type": "string", "enum": names}));
        }
        let req = m.entry("required").or_insert_with(|| json!([]));
        if let Value::Array(r) = req {
            r.push(json!(tag));
            r.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            r.dedup();
        }
    }

    /// A field's schema (markers and description applied) and whether it is optional
    /// by its type (`Option`).
    fn field_schema(&self, f: &syn::Field, stack: &mut Vec<String>) -> (Value, bool) {
        let (ty, optional) = match option_inner(&f.ty) {
            Some(inner) => (inner, true),
            None => (&f.ty, false),
        };
        let markers = TypeMarkers::from_field_attrs(&f.attrs, self.cx);
        // `+kubebuilder:validation:Schemaless`: the field's type is not described at all
        // (controller-gen's `schema.go` gives it an empty schema); only its own markers
        // shape it, and they must keep it structural.
        let schemaless = markers.span(SCHEMALESS);
        let mut schema = match schemaless {
            Some(_) => json!({}),
            None => self.type_schema(ty, stack),
        };
        if let Some(d) = description(&f.attrs) {
            describe(&mut schema, d);
        }
        validation::apply(&mut schema, markers.iter(), self.cx);
        if let Some(span) = schemaless
            && schema.get("type").is_none()
            && schema.get("x-kubernetes-preserve-unknown-fields").is_none()
            && schema.get("x-kubernetes-int-or-string").is_none()
        {
            self.cx.error_at(
                span,
                "`+kubebuilder:validation:Schemaless` leaves the field without a type, which kube-apiserver rejects as non-structural: add `+kubebuilder:pruning:PreserveUnknownFields` or `+kubebuilder:validation:EmbeddedResource`",
            );
        }
        (schema, optional)
    }

    /// An array item's or map value's schema: an `Option` there is `null` when `None`
    /// (serde writes it), so the schema is `nullable`.
    fn element_schema(&self, ty: &syn::Type, stack: &mut Vec<String>) -> Value {
        match option_inner(ty) {
            Some(inner) => {
                let mut schema = self.type_schema(inner, stack);
                insert(&mut schema, "nullable", json!(true));
                schema
            }
            None => self.type_schema(ty, stack),
        }
    }

    /// The schema of a Rust type as written.
    pub fn type_schema(&self, ty: &syn::Type, stack: &mut Vec<String>) -> Value {
        match ty {
            syn::Type::Reference(r) => self.type_schema(&r.elem, stack),
            syn::Type::Paren(p) => self.type_schema(&p.elem, stack),
            syn::Type::Group(g) => self.type_schema(&g.elem, stack),
            syn::Type::Array(a) => {
                json!({"type": "array", "items": self.type_schema(&a.elem, stack)})
            }
            syn::Type::Slice(a) => {
                json!({"type": "array", "items": self.type_schema(&a.elem, stack)})
            }
            syn::Type::Path(p) if p.qself.is_none() => self.path_schema(ty, &p.path, stack),
            syn::Type::Tuple(t) if t.elems.len() >= 2 => {
                let elems: Vec<&syn::Type> = t.elems.iter().collect();
                self.tuple(&elems, stack)
            }
            _ => self.unknown(ty),
        }
    }

    /// A type alias of the package (`type Labels = BTreeMap<String, String>;`,
    /// `type Pair<T> = (T, T);`): its target with the arguments substituted, read in the
    /// alias's module. Its doc comment is not a description (the derive, which fills the
    /// alias's hole from the target's `kubegen::crd::Schema`, cannot read it either).
    fn alias(
        &self,
        def: &TypeDef,
        target: &syn::Type,
        args: &[&syn::Type],
        stack: &mut Vec<String>,
    ) -> Value {
        let target = substitute(target, &def.generics, args);
        self.modules.borrow_mut().push(def.module.clone());
        let schema = self.type_schema(&target, stack);
        self.modules.borrow_mut().pop();
        // The derive sees only the alias's name (`Labels`), never its definition: what
        // the alias itself says would make the CLI's schema differ from the derive's.
        if let Some(f) = TypeMarkers::from_attrs(&def.attrs, self.cx).iter().next() {
            self.cx.error_at(
                f.span,
                format!(
                    "`{}` on the type alias `{}` is not applied (an alias is its target; the derive cannot see it): put it on the fields that use `{}`",
                    f.written, def.ident, def.ident
                ),
            );
        }
        schema
    }

    /// A tuple (or a tuple variant's fields): serde writes an array of exactly that many
    /// elements, `minItems` = `maxItems`. Elements of one schema are that schema's items;
    /// integers and strings mixed are int-or-string items (which kube-apiserver's CEL
    /// sees as `dyn`) with a rule checking each position's kind; anything else is an
    /// untyped item, which no rule can check in kube-apiserver (an array of untyped
    /// items has no CEL type, `SchemaDeclType`). An `Option` element may be `null`.
    fn tuple(&self, elems: &[&syn::Type], stack: &mut Vec<String>) -> Value {
        let schemas: Vec<(Value, bool)> = elems
            .iter()
            .map(|t| match option_inner(t) {
                Some(inner) => (self.type_schema(inner, stack), true),
                None => (self.type_schema(t, stack), false),
            })
            .collect();
        let nullable = schemas.iter().any(|(_, n)| *n);
        let is_int_or_string = |s: &Value| {
            s.get("x-kubernetes-int-or-string") == Some(&json!(true))
                || matches!(
                    s.get("type").and_then(Value::as_str),
                    Some("integer" | "string")
                )
        };
        let mut rules = Vec::new();
        let mut items = match schemas.first() {
            Some((first, _)) if schemas.iter().all(|(s, _)| s == first) => first.clone(),
            _ if schemas.iter().all(|(s, _)| is_int_or_string(s)) => {
                // Which position is a string and which an integer: `string(x) == x` holds
                // for a string only (CEL's equality of different types is false, never an
                // error), and needs no `type()`, which the test server's CEL lacks.
                let mut checks = vec![format!("size(self) == {}", elems.len())];
                let mut kinds = Vec::new();
                for (i, (s, null)) in schemas.iter().enumerate() {
                    let (check, kind) = match s.get("type").and_then(Value::as_str) {
                        Some("string") => {
                            (Some(format!("string(self[{i}]) == self[{i}]")), "a string")
                        }
                        Some("integer") => (
                            Some(format!("string(self[{i}]) != self[{i}]")),
                            "an integer",
                        ),
                        _ => (None, "an integer or a string"),
                    };
                    kinds.push(if *null {
                        format!("{kind} or null")
                    } else {
                        kind.to_owned()
                    });
                    match (check, null) {
                        (Some(c), true) => checks.push(format!("(self[{i}] == null || {c})")),
                        // `string(null)` is an error: an element that may not be null
                        // (but sits among items that may) is checked to be none first.
                        (Some(c), false) if nullable => {
                            checks.push(format!("self[{i}] != null && {c}"));
                        }
                        (Some(c), false) => checks.push(c),
                        (None, _) => {}
                    }
                }
                if checks.len() > 1 {
                    rules.push(json!({
                        "rule": checks.join(" && "),
                        "message": format!("must be an array of {}", kinds.join(", ")),
                    }));
                }
                json!({"x-kubernetes-int-or-string": true})
            }
            _ => json!({"x-kubernetes-preserve-unknown-fields": true}),
        };
        if nullable {
            insert(&mut items, "nullable", json!(true));
        }
        let mut schema = json!({
            "type": "array",
            "items": items,
            "minItems": elems.len(),
            "maxItems": elems.len(),
        });
        add_rules(&mut schema, rules);
        schema
    }

    fn hole(&self, ty: &syn::Type) -> Value {
        self.hole_of(ty, Hole::Schema(ty.clone()))
    }

    fn hole_of(&self, ty: &syn::Type, hole: Hole) -> Value {
        let Some(holes) = &self.holes else {
            return self.unknown(ty);
        };
        let mut holes = holes.borrow_mut();
        let n = match holes.iter().position(|h| *h == hole) {
            Some(n) => n,
            None => {
                holes.push(hole);
                holes.len() - 1
            }
        };
        json!({ HOLE: n })
    }

    fn unknown(&self, ty: &syn::Type) -> Value {
        self.cx.error_spanned_by(
            ty,
            format!(
                "no schema for `{}`: not a type of this package, a std or serde_json type, or a k8s-openapi type the generator knows",
                quote::ToTokens::to_token_stream(ty).to_string().replace(' ', "")
            ),
        );
        json!({"type": "object"})
    }

    fn path_schema(&self, ty: &syn::Type, path: &syn::Path, stack: &mut Vec<String>) -> Value {
        let expanded = match (self.resolver, self.modules.borrow().last()) {
            (Some(resolver), Some(module)) => resolver.expand(module, path),
            _ => None,
        };
        let path = expanded.as_ref().unwrap_or(path);
        let Some(last) = last_ident(path) else {
            return self.unknown(ty);
        };
        let args = type_args(path);
        let arg = |i: usize| args.get(i).copied();
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        match (last.as_str(), arg(0), arg(1)) {
            ("String" | "str" | "char", None, None) => return json!({"type": "string"}),
            ("bool", None, None) => return json!({"type": "boolean"}),
            ("i8" | "i16" | "i32" | "u8" | "u16", None, None) => {
                return json!({"type": "integer", "format": "int32"});
            }
            ("i64" | "u32" | "u64" | "isize" | "usize", None, None) => {
                return json!({"type": "integer", "format": "int64"});
            }
            ("IpAddr" | "Ipv4Addr" | "Ipv6Addr" | "SocketAddr", None, None) => {
                return json!({"type": "string"});
            }
            // serde writes these as RFC 3339 strings (jiff, chrono, time with its
            // `rfc3339` serde helpers are the common cases).
            ("Timestamp" | "DateTime" | "OffsetDateTime", _, None)
                if segments.len() == 1
                    || segments
                        .iter()
                        .any(|s| matches!(s.as_str(), "jiff" | "chrono" | "time")) =>
            {
                return json!({"type": "string", "format": "date-time"});
            }
            // k8s-openapi's ByteString: base64 text, OpenAPI's `format: byte` (as Kubernetes
            // publishes `[]byte` fields such as Secret.data).
            ("ByteString", None, None) => return json!({"type": "string", "format": "byte"}),
            ("f32", None, None) => return json!({"type": "number", "format": "float"}),
            ("f64", None, None) => return json!({"type": "number", "format": "double"}),
            ("Box" | "Arc" | "Rc" | "Cow", Some(inner), _) => {
                return self.type_schema(inner, stack);
            }
            ("Option", Some(inner), None) => return self.type_schema(inner, stack),
            ("Vec" | "VecDeque" | "LinkedList", Some(inner), None) => {
                return json!({"type": "array", "items": self.element_schema(inner, stack)});
            }
            ("BTreeSet" | "HashSet" | "IndexSet", Some(inner), None) => {
                return json!({
                    "type": "array",
                    "items": self.element_schema(inner, stack),
                    "x-kubernetes-list-type": "set",
                });
            }
            ("BTreeMap" | "HashMap" | "IndexMap", Some(_), Some(value)) => {
                return json!({"type": "object", "additionalProperties": self.element_schema(value, stack)});
            }
            ("Value", None, None)
                if segments.len() == 1 || segments.iter().any(|s| s == "serde_json") =>
            {
                return json!({"x-kubernetes-preserve-unknown-fields": true});
            }
            _ => {}
        }
        if segments.len() == 1
            && let Some(def) = self.types.get(&last)
        {
            if let Body::Alias(target) = &def.body {
                return self.alias(def, target, &args, stack);
            }
            return self.named(def, stack);
        }
        // k8s-openapi's types, also as kube-rs re-exports them (`kube::api::ObjectMeta`).
        let is_k8s = segments.len() == 1
            || segments.iter().any(|s| s == "k8s_openapi")
            || segments
                .first()
                .is_some_and(|s| matches!(s.as_str(), "kube" | "kube_core"));
        match k8s::resolve(&segments) {
            // The derive sees a bare name, not what it refers to: the user's own
            // `Condition` or k8s-openapi's. The type decides at compile time.
            // So is a path through a module alias (`metav1::Time`): Rust resolves it.
            Ok(Some(name)) if self.holes.is_some() => match k8s::schema(&name) {
                Some(k8s) => self.hole_of(ty, Hole::SchemaOrK8s(ty.clone(), k8s)),
                None => self.hole(ty),
            },
            Ok(Some(name)) if is_k8s => k8s::schema(&name).unwrap_or_else(|| self.unknown(ty)),
            Ok(_) if self.holes.is_some() => self.hole(ty),
            Ok(_) => self.unknown(ty),
            Err(candidates) => {
                self.cx.error_spanned_by(
                    ty,
                    format!(
                        "`{last}` is ambiguous among k8s-openapi types ({}): write its full `k8s_openapi::...` path",
                        candidates.join(", ")
                    ),
                );
                json!({"type": "object"})
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{Mode, PackageContext, lower_items};
    use crate::model::SourceUses;
    use crate::plural::PluralExceptions;

    /// The schema of `name` among `items`, or the errors.
    fn schema_of(items: syn::File, name: &str) -> Result<Value, Vec<String>> {
        let (v, _, errors) = generate(items, name);
        errors.map(|()| v)
    }

    /// The schema of `name` among `items` (read with their `use` items), the warnings
    /// and the errors.
    fn generate(items: syn::File, name: &str) -> (Value, Vec<String>, Result<(), Vec<String>>) {
        let exceptions = PluralExceptions::default();
        let ctx = PackageContext {
            mode: Mode::Cli,
            group: Some("g.io".into()),
            version: Some("v1".into()),
            deep_copy: None,
            group_go_name: None,
            plural_exceptions: &exceptions,
        };
        let cx = Ctxt::new();
        let types = lower_items(&items.items, &[], &ctx, &cx);
        let uses = [SourceUses::of(Vec::new(), &items.items)];
        let resolver = Resolver::new(types.iter().map(|t| &t.ident), &uses);
        let v = {
            let schemas = Schemas::new(&types, &cx).with_resolver(&resolver);
            let ty = types.iter().find(|t| t.ident == name).expect("type");
            schemas.named(ty, &mut Vec::new())
        };
        let warnings = cx.take_warnings().iter().map(ToString::to_string).collect();
        let errors = cx
            .check()
            .map_err(|e| e.into_iter().map(|e| e.to_string()).collect());
        (v, warnings, errors)
    }

    #[test]
    fn internally_tagged_newtype_variants_merge_the_struct_fields() {
        let v = schema_of(
            syn::parse_quote! {
                #[serde(tag = "kind")]
                enum B { S(Svc), Off }
                struct Svc { name: String, #[serde(default)] port: i32 }
            },
            "B",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"type": "object", "required": ["kind"], "properties": {
                "kind": {"type": "string", "enum": ["S", "Off"]},
                "name": {"type": "string"},
                "port": {"type": "integer", "format": "int32"},
            }, "x-kubernetes-validations": [{
                "rule": "self.kind != 'S' || (has(self.name))",
                "message": "kind \"S\" requires name",
            }]})
        );
    }

    #[test]
    fn mixed_externally_tagged_enums_keep_what_serde_writes() {
        let v = schema_of(
            syn::parse_quote! {
                #[serde(rename_all = "camelCase")]
                enum S { Recreate, RollingUpdate { max: Option<i32> }, BlueGreen(String, Option<i64>) }
            },
            "S",
        )
        .unwrap();
        assert_eq!(v, json!({"x-kubernetes-preserve-unknown-fields": true}));
    }

    #[test]
    fn tuples_are_arrays_of_their_length() {
        let v = schema_of(
            syn::parse_quote! {
                struct S { a: (String, Option<i64>), b: (i32, i32), c: (bool, String) }
                enum E { T(String, i64) }
            },
            "S",
        )
        .unwrap();
        assert_eq!(
            v["properties"]["a"],
            json!({"type": "array", "minItems": 2, "maxItems": 2,
            "items": {"x-kubernetes-int-or-string": true, "nullable": true},
            "x-kubernetes-validations": [{
                "rule": "size(self) == 2 && self[0] != null && string(self[0]) == self[0] && (self[1] == null || string(self[1]) != self[1])",
                "message": "must be an array of a string, an integer or null",
            }]})
        );
        assert_eq!(
            v["properties"]["b"],
            json!({"type": "array", "minItems": 2, "maxItems": 2,
                   "items": {"type": "integer", "format": "int32"}})
        );
        assert_eq!(
            v["properties"]["c"]["items"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        let v = schema_of(
            syn::parse_quote! {
                struct Pair(i32, i32);
            },
            "Pair",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"type": "array", "minItems": 2, "maxItems": 2,
                   "items": {"type": "integer", "format": "int32"}})
        );
    }

    #[test]
    fn adjacently_tagged_and_untagged_variants_get_rules() {
        let v = schema_of(
            syn::parse_quote! {
                #[serde(tag = "kind", content = "with")]
                enum A { Web { url: String, #[serde(default)] retries: i32 }, Job { image: String }, Off }
            },
            "A",
        )
        .unwrap();
        assert_eq!(
            v["x-kubernetes-validations"],
            json!([{"rule": "self.kind != 'Web' || (has(self.with) && has(self.with.url))",
                    "message": "kind \"Web\" requires with, with.url"},
                   {"rule": "self.kind != 'Job' || (has(self.with) && has(self.with.image))",
                    "message": "kind \"Job\" requires with, with.image"}])
        );
        let v = schema_of(
            syn::parse_quote! {
                #[serde(untagged)]
                enum U { A { a: String }, B { b: i32, #[serde(alias = "cc")] c: i32 } }
            },
            "U",
        )
        .unwrap();
        assert_eq!(
            v["x-kubernetes-validations"],
            json!([{"rule": "(has(self.a)) || (has(self.b))",
                    "message": "must have the required fields of one of A (a), B (b)"}])
        );
        assert_eq!(
            v["properties"]["cc"],
            json!({"type": "integer", "format": "int32"})
        );
    }

    #[test]
    fn transparent_structs_are_their_field() {
        let v = schema_of(
            syn::parse_quote! {
                #[serde(transparent)]
                struct N { #[serde(skip)] x: i32, name: String }
            },
            "N",
        )
        .unwrap();
        assert_eq!(v, json!({"type": "string"}));
    }

    #[test]
    fn untagged_unions_stay_structural() {
        let v = schema_of(
            syn::parse_quote! {
                #[serde(untagged)]
                enum U { A(bool), B(Vec<String>) }
            },
            "U",
        )
        .unwrap();
        assert_eq!(v, json!({"x-kubernetes-preserve-unknown-fields": true}));
        let v = schema_of(
            syn::parse_quote! {
                #[serde(untagged)]
                enum U { A(i64), B(String) }
            },
            "U",
        )
        .unwrap();
        assert_eq!(v, json!({"x-kubernetes-int-or-string": true}));
    }

    #[test]
    fn a_flattened_map_keeps_unknown_fields() {
        let v = schema_of(
            syn::parse_quote! {
                struct S { a: String, #[serde(flatten)] rest: BTreeMap<String, serde_json::Value> }
            },
            "S",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"type": "object", "required": ["a"], "x-kubernetes-preserve-unknown-fields": true,
                   "properties": {"a": {"type": "string"}}})
        );
    }

    #[test]
    fn unknown_types_are_errors() {
        let errs = schema_of(
            syn::parse_quote! {
                struct S { a: Mystery }
            },
            "S",
        )
        .unwrap_err();
        assert!(errs[0].starts_with("no schema for `Mystery`"), "{errs:?}");
    }

    /// The schema of `name` among `items` and the warnings; errors fail the test.
    fn schema_with_uses(items: syn::File, name: &str) -> (Value, Vec<String>) {
        let (v, warnings, errors) = generate(items, name);
        if let Err(e) = errors {
            panic!("{e:?}");
        }
        (v, warnings)
    }

    /// A recursive type is cut where it meets itself, with a structural node that keeps
    /// unknown fields, and a warning names the cycle; the field's own description stays.
    #[test]
    fn recursion_is_cut_with_a_preserving_node_and_a_warning() {
        let (v, warnings) = schema_with_uses(
            syn::parse_quote! {
                struct Route { name: String, matcher: Option<MatchExpr> }
                enum MatchExpr {
                    Path(String),
                    /// Every one of these.
                    All(Vec<MatchExpr>),
                    Not(Box<MatchExpr>),
                }
            },
            "Route",
        );
        let matcher = &v["properties"]["matcher"];
        assert_eq!(matcher["properties"]["Path"], json!({"type": "string"}));
        let all = &matcher["properties"]["All"];
        assert_eq!(all["type"], "array");
        assert_eq!(all["items"]["x-kubernetes-preserve-unknown-fields"], true);
        assert!(
            all["items"].get("type").is_none(),
            "an enum's cut is untyped"
        );
        assert!(
            all["description"]
                .as_str()
                .is_some_and(|d| d.starts_with("Every one of these.")),
            "{all}"
        );
        assert_eq!(
            matcher["properties"]["Not"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(
            warnings,
            [
                "`MatchExpr` contains itself (MatchExpr → MatchExpr): its schema is cut there with a node that keeps unknown fields; `+kubegen:maxDepth=N` on `MatchExpr` describes N levels first"
            ]
        );

        let (v, _) = schema_with_uses(
            syn::parse_quote! {
                struct Tree { name: String, children: Vec<Tree> }
            },
            "Tree",
        );
        let cut = &v["properties"]["children"]["items"];
        assert_eq!(cut["type"], "object", "a struct's cut is an object");
        assert_eq!(cut["x-kubernetes-preserve-unknown-fields"], true);
        assert!(
            cut["description"]
                .as_str()
                .unwrap_or_default()
                .starts_with(CUT_NOTE)
        );
    }

    /// serde writes `None` inside a list or a map as `null`: the item or value schema
    /// is `nullable` (a field's `Option` is optional, not nullable).
    #[test]
    fn options_inside_lists_and_maps_are_nullable() {
        let (v, _) = schema_with_uses(
            syn::parse_quote! {
                struct S { a: Vec<Option<i32>>, b: BTreeMap<String, Option<String>>, c: Option<i64> }
            },
            "S",
        );
        let p = &v["properties"];
        assert_eq!(p["a"]["items"]["nullable"], true);
        assert_eq!(p["b"]["additionalProperties"]["nullable"], true);
        assert!(p["c"].get("nullable").is_none());
    }

    /// `+kubegen:maxDepth=N` describes N levels before the cut.
    #[test]
    fn max_depth_unrolls_a_recursive_type() {
        let (v, _) = schema_with_uses(
            syn::parse_quote! {
                /// +kubegen:maxDepth=3
                struct Tree { name: String, children: Vec<Tree> }
            },
            "Tree",
        );
        let mut node = &v;
        for _ in 0..2 {
            node = &node["properties"]["children"]["items"];
            assert_eq!(node["properties"]["name"], json!({"type": "string"}), "{v}");
        }
        let cut = &node["properties"]["children"]["items"];
        assert_eq!(cut["x-kubernetes-preserve-unknown-fields"], true, "{v}");
        assert!(cut.get("properties").is_none());
    }

    /// Module aliases, renamed imports and (generic) type aliases resolve where a field
    /// type is read.
    #[test]
    fn use_renames_and_type_aliases_resolve() {
        let (v, warnings) = schema_with_uses(
            syn::parse_quote! {
                use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
                use std::collections::BTreeMap as Map;
                /// Labels to set.
                pub type Labels = Map<String, String>;
                pub type Pair<T> = Vec<T>;
                struct S {
                    created: metav1::Time,
                    labels: Labels,
                    ports: Pair<i32>,
                    selector: Option<metav1::LabelSelector>,
                }
            },
            "S",
        );
        assert!(warnings.is_empty());
        let p = &v["properties"];
        assert_eq!(p["created"]["type"], "string");
        assert_eq!(p["created"]["format"], "date-time");
        assert_eq!(
            p["labels"],
            json!({"type": "object", "additionalProperties": {"type": "string"}})
        );
        assert_eq!(
            p["ports"],
            json!({"type": "array", "items": {"type": "integer", "format": "int32"}})
        );
        assert!(
            p["selector"]["properties"]["matchLabels"].is_object(),
            "{v}"
        );
    }

    #[test]
    fn text_types_serde_writes_as_strings() {
        let v = schema_of(
            syn::parse_quote! {
                struct S { ip: std::net::IpAddr, at: jiff::Timestamp, raw: ByteString, t: MicroTime }
            },
            "S",
        )
        .unwrap();
        assert_eq!(v["properties"]["ip"], json!({"type": "string"}));
        assert_eq!(
            v["properties"]["at"],
            json!({"type": "string", "format": "date-time"})
        );
        assert_eq!(
            v["properties"]["raw"],
            json!({"type": "string", "format": "byte"})
        );
        assert_eq!(v["properties"]["t"]["format"], json!("date-time"));
    }

    #[test]
    fn descriptions_drop_markers_and_join_paragraphs() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// First line
            /// continues.
            ///
            /// Second paragraph.
            /// +kubebuilder:validation:MaxLength=3
            struct S;
        };
        assert_eq!(
            description(&item.attrs).as_deref(),
            Some("First line continues.\nSecond paragraph.")
        );
    }
}
