//! A structural OpenAPI v3 schema (a CRD version's `openAPIV3Schema`) → the Rust types of
//! [`super::model`], chosen so that `kubegen-codegen crd` (`crate::crd::schema`) gives
//! the schema back:
//!
//! | schema | Rust |
//! |---|---|
//! | `type: object` with `properties` | a struct, `rename_all = "camelCase"`; fields not in `required` are `Option` |
//! | `type: object` with `additionalProperties` | `BTreeMap<String, T>` |
//! | `type: object` + `x-kubernetes-preserve-unknown-fields` | a struct with a flattened `BTreeMap<String, serde_json::Value>` |
//! | `type: array` | `Vec<T>` |
//! | `type: string` with string `enum` | a unit enum, `#[serde(rename)]` per variant |
//! | `format: date-time` / `byte` | k8s-openapi `Time` / `ByteString` |
//! | `integer` `int32` / `int64`, `number` `float` / `double` | `i32` / `i64`, `f32` / `f64` |
//! | `x-kubernetes-int-or-string` | k8s-openapi `IntOrString` |
//! | `x-kubernetes-preserve-unknown-fields` untyped, or no type | `serde_json::Value` |
//! | the root's `metadata` | k8s-openapi `ObjectMeta` |
//!
//! Descriptions become doc comments, constraints become markers
//! ([`super::constraints`]): on the field for a property, on the item or value type for
//! an array item or a map value (a newtype when the item is a scalar). What no marker can
//! carry (`oneOf`, `anyOf`, `not`, `nullable` ...) is left out and reported as a note.

use serde_json::{Map, Value};

use super::constraints;
use super::crd_file::CrdVersion;
use super::model::{Body, Field, RustType, TypeDef, Variant};
use super::names::{self, Namer};

/// Schema keys that only document (no effect on validation or the Rust shape).
const IGNORED: &[&str] = &["title", "example", "externalDocs", "$schema", "id"];

/// A converted node: its Rust type, the index of the type made for it (a struct or an
/// enum, which can carry its description and constraints itself), and what is left for
/// the place that uses it.
struct Converted {
    ty: RustType,
    made: Option<usize>,
    doc: Option<String>,
    markers: Vec<String>,
}

/// Converts the schemas of one module's versions; collects the types and notes.
pub struct Converter<'n> {
    namer: &'n mut Namer,
    /// The types made so far.
    pub types: Vec<TypeDef>,
    /// What could not be carried over, as `<crd> <version>: <path>: <what>`.
    pub notes: Vec<String>,
    context: String,
}

impl<'n> Converter<'n> {
    /// A converter naming its types with `namer` (shared by a module's CRDs).
    pub fn new(namer: &'n mut Namer) -> Self {
        Self {
            namer,
            types: Vec::new(),
            notes: Vec::new(),
            context: String::new(),
        }
    }

    fn note(&mut self, path: &str, what: impl std::fmt::Display) {
        self.notes.push(format!("{}: {path}: {what}", self.context));
    }

    /// The kind's struct, named `name` (taken from the namer beforehand, with every
    /// kind of the module, so no nested type takes a kind's name), with its resource
    /// markers and its nested types.
    pub fn resource(&mut self, v: &CrdVersion, name: &str) {
        self.context = format!("{} {}", v.crd_name, v.version);
        let name = name.to_owned();
        let index = self.types.len();
        self.types.push(TypeDef {
            name: name.clone(),
            doc: None,
            markers: Vec::new(),
            body: Body::Struct(Vec::new()),
        });
        let root = &v.schema;
        let mut fields = vec![Field {
            rust_name: "metadata".into(),
            json_name: "metadata".into(),
            ty: RustType::ObjectMeta,
            optional: false,
            flatten: false,
            doc: Some("Standard object metadata.".into()),
            markers: Vec::new(),
        }];
        if root
            .get("properties")
            .and_then(|p| p.get("metadata"))
            .and_then(Value::as_object)
            .is_some_and(|m| m.keys().any(|k| k != "type" && k != "description"))
        {
            self.note(
                "metadata",
                "constraints on metadata are left out (the generated CRD's metadata is `type: object`, as controller-gen writes it)",
            );
        }
        let mut field_names = Namer::with_reserved(&["metadata"]);
        let required = required(root);
        let mut has_status = false;
        if let Some(Value::Object(props)) = root.get("properties") {
            for (json, node) in props {
                if matches!(json.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                has_status |= json == "status";
                let Some(node) = node.as_object() else {
                    self.note(json, "not a schema object; left out");
                    continue;
                };
                let f = self.field(
                    &name,
                    json,
                    node,
                    !required.contains(json),
                    &mut field_names,
                    json,
                );
                fields.push(f);
            }
        }
        if root.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            self.note(
                "(root)",
                "the kind's struct keeps only the fields the schema lists (the CRD keeps x-kubernetes-preserve-unknown-fields)",
            );
        }
        let (root_markers, notes) = constraints::markers(root, &[]);
        for n in notes {
            self.note("(root)", n);
        }
        self.unsupported(
            root,
            "(root)",
            &["type", "description", "properties", "required"],
        );
        let mut markers = vec!["genclient".to_owned()];
        if !v.namespaced {
            markers.push("genclient:nonNamespaced".to_owned());
        }
        if has_status && !v.status_subresource {
            markers.push("genclient:noStatus".to_owned());
        }
        if name != v.kind {
            // The kind's name is taken by an import of the module (`Time` ...).
            markers.push(format!("kubegen:kind={}", v.kind));
        }
        markers.push(format!("resourceName={}", v.plural));
        let mut resource_args = Vec::new();
        if let Some(s) = v.singular.as_ref().filter(|s| **s != v.kind.to_lowercase()) {
            resource_args.push(format!("singular={s}"));
        }
        if !v.short_names.is_empty() {
            resource_args.push(format!(
                "shortName={}",
                constraints::quoted(&v.short_names.join(";"))
            ));
        }
        if !v.categories.is_empty() {
            resource_args.push(format!(
                "categories={}",
                constraints::quoted(&v.categories.join(";"))
            ));
        }
        if !resource_args.is_empty() {
            markers.push(format!("kubebuilder:resource:{}", resource_args.join(",")));
        }
        if v.status_subresource {
            markers.push("kubebuilder:subresource:status".to_owned());
        }
        if let Some(scale) = &v.scale {
            let mut args = Vec::new();
            for (key, arg) in [
                ("specReplicasPath", "specpath"),
                ("statusReplicasPath", "statuspath"),
                ("labelSelectorPath", "selectorpath"),
            ] {
                if let Some(p) = scale.get(key).and_then(Value::as_str) {
                    args.push(format!("{arg}={}", constraints::quoted(p)));
                }
            }
            markers.push(format!("kubebuilder:subresource:scale:{}", args.join(",")));
        }
        if v.storage && v.served_versions > 1 {
            markers.push("kubebuilder:storageversion".to_owned());
        }
        if let Some(warning) = &v.deprecated {
            markers.push(match warning {
                Some(w) => format!(
                    "kubebuilder:deprecatedversion:warning={}",
                    constraints::quoted(w)
                ),
                None => "kubebuilder:deprecatedversion".to_owned(),
            });
        }
        for col in &v.printer_columns {
            let mut args = Vec::new();
            for (key, arg) in [
                ("name", "name"),
                ("type", "type"),
                ("jsonPath", "JSONPath"),
                ("description", "description"),
                ("format", "format"),
            ] {
                if let Some(s) = col.get(key).and_then(Value::as_str) {
                    args.push(format!("{arg}={}", constraints::quoted(s)));
                }
            }
            if let Some(p) = col.get("priority").and_then(Value::as_i64) {
                args.push(format!("priority={p}"));
            }
            markers.push(format!("kubebuilder:printcolumn:{}", args.join(",")));
        }
        for path in &v.selectable_fields {
            markers.push(format!(
                "kubebuilder:selectablefield:JSONPath={}",
                constraints::quoted(path)
            ));
        }
        markers.extend(root_markers);
        let ty = &mut self.types[index];
        ty.doc = description(root);
        ty.markers = markers;
        ty.body = Body::Struct(fields);
    }

    /// One property of the struct `parent`.
    fn field(
        &mut self,
        parent: &str,
        json: &str,
        node: &Map<String, Value>,
        optional: bool,
        field_names: &mut Namer,
        path: &str,
    ) -> Field {
        let c = self.node(&[parent, json], node, path);
        let rust_name = field_names.unique(&names::snake(json));
        Field {
            rust_name,
            json_name: json.to_owned(),
            ty: c.ty,
            optional,
            flatten: false,
            doc: c.doc,
            markers: c.markers,
        }
    }

    /// The type of an array item or a map value: its description and constraints go on
    /// the type made for it, or on a newtype around it (named with `suffix`, `item` or
    /// `value`).
    fn element(
        &mut self,
        hint: &[&str],
        suffix: &str,
        node: &Map<String, Value>,
        path: &str,
    ) -> RustType {
        let c = self.node(hint, node, path);
        if c.doc.is_none() && c.markers.is_empty() {
            return c.ty;
        }
        if let Some(i) = c.made {
            let ty = &mut self.types[i];
            ty.doc = c.doc;
            ty.markers.extend(c.markers);
            return c.ty;
        }
        let mut parts: Vec<&str> = hint.to_vec();
        parts.push(suffix);
        let name = self.namer.unique(&names::type_name(&parts));
        self.types.push(TypeDef {
            name: name.clone(),
            doc: c.doc,
            markers: c.markers,
            body: Body::Newtype(c.ty),
        });
        RustType::Named(name)
    }

    /// [`Self::element`] of an array item or map value, `Option<T>` when it is
    /// `nullable: true` (what the generator writes for `Vec<Option<T>>`).
    fn nullable_element(
        &mut self,
        hint: &[&str],
        suffix: &str,
        node: &Map<String, Value>,
        path: &str,
    ) -> RustType {
        if node.get("nullable") != Some(&Value::Bool(true)) {
            return self.element(hint, suffix, node, path);
        }
        let mut inner = node.clone();
        inner.remove("nullable");
        RustType::Option(Box::new(self.element(hint, suffix, &inner, path)))
    }

    /// Records the keys of `node` that neither the type nor a marker carries.
    fn unsupported(&mut self, node: &Map<String, Value>, path: &str, handled: &[&str]) {
        for key in node.keys() {
            let k = key.as_str();
            if handled.contains(&k) || constraints::KEYS.contains(&k) || IGNORED.contains(&k) {
                continue;
            }
            self.note(
                path,
                format!("`{k}` is left out: no kubebuilder marker carries it"),
            );
        }
    }

    fn node(&mut self, hint: &[&str], node: &Map<String, Value>, path: &str) -> Converted {
        let doc = description(node);
        let ty_name = node.get("type").and_then(Value::as_str);
        let preserve = node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
        let embedded = node.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
        let mut consumed: Vec<&str> = Vec::new();
        let mut handled: Vec<&str> = vec!["type", "description"];
        let mut made = None;
        let ty = if node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            handled.push("x-kubernetes-int-or-string");
            // controller-gen writes `anyOf: [{type: integer}, {type: string}]` beside it;
            // the int-or-string extension says the same.
            if node.get("anyOf").is_some_and(is_int_or_string_any_of) {
                handled.push("anyOf");
            }
            RustType::IntOrString
        } else {
            match ty_name {
                Some("object") => {
                    handled.extend(["properties", "required", "additionalProperties"]);
                    match (node.get("properties"), node.get("additionalProperties")) {
                        (Some(Value::Object(props)), extra) => {
                            if extra.is_some() {
                                self.note(path, "`additionalProperties` beside `properties` is not structural; left out");
                            }
                            if preserve {
                                consumed.push("x-kubernetes-preserve-unknown-fields");
                            }
                            let (name, i) = self.structure(hint, node, props, preserve, path);
                            made = Some(i);
                            RustType::Named(name)
                        }
                        (_, Some(Value::Object(values))) => {
                            let v =
                                self.nullable_element(hint, "value", values, &format!("{path}.*"));
                            RustType::Map(Box::new(v))
                        }
                        (_, Some(Value::Bool(true))) => {
                            self.note(path, "`additionalProperties: true` is imported as a map of `serde_json::Value`");
                            RustType::Map(Box::new(RustType::Json))
                        }
                        _ if preserve && embedded => {
                            // The EmbeddedResource marker gives the `type: object` back.
                            consumed.push("x-kubernetes-preserve-unknown-fields");
                            RustType::Json
                        }
                        _ => {
                            if preserve {
                                consumed.push("x-kubernetes-preserve-unknown-fields");
                            }
                            let (name, i) = self.structure(hint, node, &Map::new(), preserve, path);
                            made = Some(i);
                            RustType::Named(name)
                        }
                    }
                }
                Some("array") => {
                    handled.push("items");
                    match node.get("items") {
                        Some(Value::Object(items)) => {
                            let item =
                                self.nullable_element(hint, "item", items, &format!("{path}[]"));
                            RustType::Vec(Box::new(item))
                        }
                        _ => {
                            self.note(
                                path,
                                "an array without an `items` schema holds `serde_json::Value`s",
                            );
                            RustType::Vec(Box::new(RustType::Json))
                        }
                    }
                }
                Some("string") => {
                    let values: Option<Vec<&str>> = node
                        .get("enum")
                        .and_then(Value::as_array)
                        .and_then(|vs| vs.iter().map(Value::as_str).collect());
                    match (values, node.get("format").and_then(Value::as_str)) {
                        (Some(values), None) if !values.is_empty() => {
                            consumed.push("enum");
                            let default = node.get("default").and_then(Value::as_str);
                            let (name, i) = self.enumeration(hint, &values, default);
                            made = Some(i);
                            RustType::Named(name)
                        }
                        (_, Some("date-time")) => {
                            consumed.push("format");
                            RustType::Time
                        }
                        (_, Some("byte")) => {
                            consumed.push("format");
                            RustType::ByteString
                        }
                        _ => RustType::String,
                    }
                }
                Some("integer") => match node.get("format").and_then(Value::as_str) {
                    Some("int32") => {
                        consumed.push("format");
                        RustType::I32
                    }
                    Some("int64") => {
                        consumed.push("format");
                        RustType::I64
                    }
                    _ => RustType::I64,
                },
                Some("number") => match node.get("format").and_then(Value::as_str) {
                    Some("float") => {
                        consumed.push("format");
                        RustType::F32
                    }
                    Some("double") => {
                        consumed.push("format");
                        RustType::F64
                    }
                    _ => RustType::F64,
                },
                Some("boolean") => RustType::Bool,
                None => {
                    if preserve {
                        consumed.push("x-kubernetes-preserve-unknown-fields");
                    } else {
                        self.note(path, "a schema without a type (and without x-kubernetes-preserve-unknown-fields) is imported as `serde_json::Value`");
                    }
                    RustType::Json
                }
                Some(other) => {
                    self.note(
                        path,
                        format!("unknown `type: {other}`; imported as `serde_json::Value`"),
                    );
                    RustType::Json
                }
            }
        };
        let (markers, notes) = constraints::markers(node, &consumed);
        for n in notes {
            self.note(path, n);
        }
        self.unsupported(node, path, &handled);
        Converted {
            ty,
            made,
            doc,
            markers,
        }
    }

    /// A struct for an object node; returns its name and index.
    fn structure(
        &mut self,
        hint: &[&str],
        node: &Map<String, Value>,
        props: &Map<String, Value>,
        preserve: bool,
        path: &str,
    ) -> (String, usize) {
        let name = self.namer.unique(&names::type_name(hint));
        let index = self.types.len();
        self.types.push(TypeDef {
            name: name.clone(),
            doc: description(node),
            markers: Vec::new(),
            body: Body::Struct(Vec::new()),
        });
        let required = required(node);
        let mut field_names = Namer::default();
        let mut fields = Vec::new();
        for (json, child) in props {
            let child_path = format!("{path}.{json}");
            let Some(child) = child.as_object() else {
                self.note(&child_path, "not a schema object; left out");
                continue;
            };
            fields.push(self.field(
                &name,
                json,
                child,
                !required.contains(json),
                &mut field_names,
                &child_path,
            ));
        }
        if preserve {
            fields.push(Field {
                rust_name: field_names.unique("unknown_fields"),
                json_name: String::new(),
                ty: RustType::Map(Box::new(RustType::Json)),
                optional: false,
                flatten: true,
                doc: Some(
                    "The fields the schema does not list (it preserves unknown fields).".into(),
                ),
                markers: Vec::new(),
            });
        }
        self.types[index].body = Body::Struct(fields);
        (name, index)
    }

    /// A unit enum for a string enum; returns its name and index.
    fn enumeration(
        &mut self,
        hint: &[&str],
        values: &[&str],
        default: Option<&str>,
    ) -> (String, usize) {
        let name = self.namer.unique(&names::type_name(hint));
        let mut variant_names = Namer::default();
        let variants: Vec<Variant> = values
            .iter()
            .map(|v| Variant {
                name: variant_names.unique(&names::variant_name(v)),
                value: (*v).to_owned(),
            })
            .collect();
        let default = default
            .and_then(|d| values.iter().position(|v| *v == d))
            .unwrap_or(0);
        let index = self.types.len();
        self.types.push(TypeDef {
            name: name.clone(),
            doc: None,
            markers: Vec::new(),
            body: Body::Enum { variants, default },
        });
        (name, index)
    }
}

fn description(node: &Map<String, Value>) -> Option<String> {
    node.get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
        .map(str::to_owned)
}

fn required(node: &Map<String, Value>) -> Vec<String> {
    node.get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// `anyOf: [{type: integer}, {type: string}]`.
fn is_int_or_string_any_of(v: &Value) -> bool {
    let Some(parts) = v.as_array() else {
        return false;
    };
    let mut types: Vec<&str> = parts
        .iter()
        .filter_map(|p| {
            let m = p.as_object()?;
            (m.len() == 1).then(|| m.get("type").and_then(Value::as_str))?
        })
        .collect();
    types.sort_unstable();
    parts.len() == 2 && types == ["integer", "string"]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn version(schema: Value) -> CrdVersion {
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        CrdVersion {
            crd_name: "things.a.io".into(),
            group: "a.io".into(),
            kind: "Thing".into(),
            plural: "things".into(),
            singular: None,
            short_names: Vec::new(),
            categories: Vec::new(),
            namespaced: true,
            version: "v1".into(),
            storage: true,
            served_versions: 1,
            deprecated: None,
            schema,
            status_subresource: false,
            scale: None,
            printer_columns: Vec::new(),
            selectable_fields: Vec::new(),
        }
    }

    fn convert(schema: Value) -> (Vec<TypeDef>, Vec<String>) {
        let mut namer = Namer::with_reserved(&["Thing"]);
        let mut conv = Converter::new(&mut namer);
        conv.resource(&version(schema), "Thing");
        (conv.types, conv.notes)
    }

    fn field<'a>(types: &'a [TypeDef], ty: &str, json: &str) -> &'a Field {
        let t = types.iter().find(|t| t.name == ty).expect("type");
        let Body::Struct(fields) = &t.body else {
            panic!("{ty} is not a struct")
        };
        fields.iter().find(|f| f.json_name == json).expect("field")
    }

    #[test]
    fn shapes_map_to_their_rust_types() {
        let (types, notes) = convert(
            json!({"type": "object", "required": ["spec"], "properties": {
                "spec": {"type": "object", "required": ["mode"], "properties": {
                    "mode": {"type": "string", "enum": ["Fast", "slow-ish"], "default": "slow-ish"},
                    "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "at": {"type": "string", "format": "date-time"},
                    "raw": {"type": "string", "format": "byte"},
                    "blob": {"x-kubernetes-preserve-unknown-fields": true},
                    "hosts": {"type": "array", "items": {"type": "string", "maxLength": 5, "description": "A host."}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "integer", "format": "int32"}}},
                    "ratio": {"type": "number"},
                }},
            }}),
        );
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(
            field(&types, "Thing", "spec").ty,
            RustType::Named("ThingSpec".into())
        );
        assert!(!field(&types, "Thing", "spec").optional);
        let mode = field(&types, "ThingSpec", "mode");
        assert_eq!(mode.ty, RustType::Named("ThingSpecMode".into()));
        assert_eq!(mode.markers, ["kubebuilder:default=\"slow-ish\""]);
        let e = types
            .iter()
            .find(|t| t.name == "ThingSpecMode")
            .expect("enum");
        assert_eq!(
            e.body,
            Body::Enum {
                variants: vec![
                    Variant {
                        name: "Fast".into(),
                        value: "Fast".into()
                    },
                    Variant {
                        name: "SlowIsh".into(),
                        value: "slow-ish".into()
                    },
                ],
                default: 1,
            }
        );
        assert_eq!(field(&types, "ThingSpec", "port").ty, RustType::IntOrString);
        assert_eq!(field(&types, "ThingSpec", "at").ty, RustType::Time);
        assert_eq!(field(&types, "ThingSpec", "raw").ty, RustType::ByteString);
        assert_eq!(field(&types, "ThingSpec", "blob").ty, RustType::Json);
        assert_eq!(
            field(&types, "ThingSpec", "hosts").ty,
            RustType::Vec(Box::new(RustType::Named("ThingSpecHostsItem".into())))
        );
        let item = types
            .iter()
            .find(|t| t.name == "ThingSpecHostsItem")
            .expect("newtype");
        assert_eq!(item.body, Body::Newtype(RustType::String));
        assert_eq!(item.markers, ["kubebuilder:validation:MaxLength=5"]);
        assert_eq!(item.doc.as_deref(), Some("A host."));
        assert_eq!(
            field(&types, "ThingSpec", "labels").ty,
            RustType::Map(Box::new(RustType::String))
        );
        let open = types
            .iter()
            .find(|t| t.name == "ThingSpecOpen")
            .expect("open");
        let Body::Struct(fields) = &open.body else {
            panic!("not a struct")
        };
        assert!(fields.iter().any(|f| f.flatten
            && f.rust_name == "unknown_fields"
            && f.ty == RustType::Map(Box::new(RustType::Json))));
        assert_eq!(field(&types, "ThingSpec", "ratio").ty, RustType::F64);
    }

    #[test]
    fn resource_markers_follow_the_crd() {
        let mut v = version(json!({"type": "object", "properties": {
            "status": {"type": "object"},
        }}));
        v.namespaced = false;
        v.singular = Some("gizmo".into());
        v.served_versions = 2;
        v.deprecated = Some(Some("use v2".into()));
        let mut namer = Namer::with_reserved(&["Value"]);
        let name = namer.unique("Value");
        let mut conv = Converter::new(&mut namer);
        v.kind = "Value".into();
        conv.resource(&v, &name);
        assert_eq!(conv.types[0].name, "Value2");
        assert_eq!(
            conv.types[0].markers,
            [
                "genclient",
                "genclient:nonNamespaced",
                "genclient:noStatus",
                "kubegen:kind=Value",
                "resourceName=things",
                "kubebuilder:resource:singular=gizmo",
                "kubebuilder:storageversion",
                "kubebuilder:deprecatedversion:warning=\"use v2\"",
            ]
        );
    }

    /// Odd or non-structural input is imported as far as it goes, with notes; never a
    /// panic.
    #[test]
    fn odd_schemas_give_notes_not_panics() {
        let (types, notes) = convert(json!({"type": "object", "properties": {
            "a": 3,
            "b": {"type": "array"},
            "c": {"type": "wat"},
            "d": {},
            "e": {"type": "object", "additionalProperties": true},
            "f": {"type": "string", "nullable": true, "oneOf": [{"pattern": "x"}]},
            "g": {"type": "integer", "minimum": "one"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}},
        }}));
        assert_eq!(
            field(&types, "Thing", "b").ty,
            RustType::Vec(Box::new(RustType::Json))
        );
        assert_eq!(field(&types, "Thing", "c").ty, RustType::Json);
        assert_eq!(field(&types, "Thing", "d").ty, RustType::Json);
        let joined = notes.join("\n");
        for needle in [
            "a: not a schema",
            "b: an array without",
            "c: unknown `type: wat`",
            "d: a schema without a type",
            "`additionalProperties: true`",
            "`nullable`",
            "`oneOf`",
            "`minimum: \"one\"`",
            "metadata: constraints on metadata",
        ] {
            assert!(joined.contains(needle), "{needle} not in:\n{joined}");
        }
    }
}
