//! Apply configurations of Kubernetes' built-in types, from their OpenAPI definitions
//! (`crd/k8s_definitions.json`, k8s-openapi's own schemas): the runtime's built-in API
//! tree is aliases of k8s-openapi types, which show the generator no fields, so the
//! definitions stand in for the Go structs applyconfiguration-gen reads.
//!
//! Every struct definition reachable from a resource gets a configuration in client-go's
//! layout (`<group>/<version>/<type>.rs`, `meta/v1` for apimachinery's); a definition
//! without properties (`Quantity`, `IntOrString`, `Time`, `RawExtension`) is a value set as
//! a whole, its k8s-openapi type. A type newer than k8s-openapi's earliest version gets its
//! `HasApplyConfiguration` impl inside `k8s_if_ge_1_NN!` (`crd/k8s_since.json`), so the
//! runtime compiles whichever version a binary picks.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::{Map, Value};

use super::model::{ApplyField, ApplyType, Root, Shape};
use crate::crd::k8s;
use crate::expand::names;

/// One generated configuration and where it goes.
#[derive(Clone, Debug)]
pub struct Located {
    /// Group directory (`apps`, `meta`).
    pub group: String,
    /// Version directory (`v1`).
    pub version: String,
    /// File stem (`deployment_spec`).
    pub file: String,
    /// The configuration.
    pub ty: ApplyType,
}

/// A definition's group, version and type name (its last three components).
pub fn location(def: &str) -> Option<(String, String, String)> {
    let mut parts = def.rsplit('.');
    let ty = parts.next()?.to_owned();
    let version = parts.next()?.to_owned();
    let group = parts.next()?.to_owned();
    Some((group, version, ty))
}

/// Whether a definition has fields (gets a configuration) rather than being a value.
fn is_struct(def: &Value) -> bool {
    def.get("properties").is_some_and(Value::is_object)
}

/// The k8s-openapi type of a definition, through the runtime's re-export.
pub fn k8s_type(def: &str) -> TokenStream {
    let path: syn::Path = syn::parse_str(&format!(
        "::kubegen::__private::k8s_openapi::{}",
        k8s::rust_path(def)
    ))
    .unwrap_or_else(|_| syn::parse_quote!(::kubegen::__private::serde_json::Value));
    quote!(#path)
}

/// Field name of a JSON property: snake case, an acronym's plural kept whole
/// (`podCIDRs` → `pod_cidrs`), a keyword suffixed (`type_`), `$ref` → `ref_`.
pub fn field_name(json: &str) -> String {
    let chars: Vec<char> = json.chars().collect();
    let mut text = String::with_capacity(json.len());
    let mut i = 0;
    while i < chars.len() {
        // An upper-case run followed by a plural `s` that ends a word: `CIDRs` → `Cidrs`.
        let run = chars[i..]
            .iter()
            .take_while(|c| c.is_ascii_uppercase())
            .count();
        let after = chars.get(i + run);
        let ends = chars
            .get(i + run + 1)
            .is_none_or(|c| !c.is_ascii_lowercase());
        if run >= 2 && after == Some(&'s') && ends {
            text.push(chars[i]);
            text.extend(chars[i + 1..i + run].iter().map(char::to_ascii_lowercase));
            i += run;
            continue;
        }
        text.push(chars[i]);
        i += 1;
    }
    crate::import::names::snake(&text)
}

/// Configurations for `roots` (resource definitions and their root data) and every struct
/// they reach; `module` is the Rust path of the `applyconfiguration` directory.
pub struct Builder<'a> {
    defs: &'a Map<String, Value>,
    since: &'a BTreeMap<String, String>,
    module: TokenStream,
}

impl<'a> Builder<'a> {
    /// Over the committed definitions.
    pub fn new(module: TokenStream) -> Self {
        Builder {
            defs: k8s::definitions(),
            since: k8s::since(),
            module,
        }
    }

    /// Every configuration reachable from `roots`, and the value definitions they use.
    pub fn build(&self, roots: &[(String, Root)]) -> (Vec<Located>, BTreeSet<String>) {
        let mut structs = BTreeSet::new();
        let mut values = BTreeSet::new();
        let mut stack: Vec<String> = roots.iter().map(|(d, _)| d.clone()).collect();
        while let Some(def) = stack.pop() {
            if !structs.insert(def.clone()) {
                continue;
            }
            let Some(props) = self.defs.get(&def).and_then(|d| d.get("properties")) else {
                continue;
            };
            for schema in props.as_object().into_iter().flat_map(Map::values) {
                for r in refs(schema) {
                    match self.defs.get(&r) {
                        Some(d) if is_struct(d) => stack.push(r),
                        _ => {
                            values.insert(r);
                        }
                    }
                }
            }
        }
        let root_of: BTreeMap<&str, &Root> = roots.iter().map(|(d, r)| (d.as_str(), r)).collect();
        let located = structs
            .iter()
            .filter_map(|def| {
                let (group, version, name) = location(def)?;
                let root = root_of.get(def.as_str()).map(|r| (*r).clone());
                Some(Located {
                    file: names::snake(&name),
                    ty: self.apply_type(def, &name, root),
                    group,
                    version,
                })
            })
            .collect();
        (located, values)
    }

    /// The configuration type of a struct definition.
    pub fn config_path(&self, def: &str) -> TokenStream {
        let module = &self.module;
        match location(def) {
            Some((g, v, name)) => {
                let (g, v) = (names::ident(&names::snake(&g)), names::ident(&v));
                let ident = format_ident!("{}ApplyConfiguration", name);
                quote!(#module::#g::#v::#ident)
            }
            None => quote!(::kubegen::__private::serde_json::Value),
        }
    }

    fn apply_type(&self, def: &str, name: &str, root: Option<Root>) -> ApplyType {
        let empty = Map::new();
        let d = self.defs.get(def);
        let props = d
            .and_then(|d| d.get("properties"))
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut taken = BTreeSet::new();
        let fields = props
            .iter()
            .map(|(json, schema)| {
                let mut rust = field_name(json);
                while !taken.insert(rust.clone()) {
                    rust.push('_');
                }
                let (ty, shape) = self.field_type(schema, def);
                ApplyField {
                    json: json.clone(),
                    ident: names::ident(&rust),
                    doc: first_sentence(schema.get("description")),
                    ty,
                    shape,
                }
            })
            .collect();
        ApplyType {
            ident: format_ident!("{}ApplyConfiguration", name),
            vis: quote!(pub),
            of: k8s_type(def),
            doc: first_sentence(d.and_then(|d| d.get("description"))),
            fields,
            root,
            since: self.since.get(def).cloned(),
        }
    }

    fn field_type(&self, schema: &Value, owner: &str) -> (TokenStream, Shape) {
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => (self.value_type(schema.get("items")), Shape::List),
            Some("object") if schema.get("additionalProperties").is_some() => (
                self.value_type(schema.get("additionalProperties")),
                Shape::Map,
            ),
            _ => {
                let ty = self.value_type(Some(schema));
                let recursive = schema
                    .get("$ref")
                    .and_then(Value::as_str)
                    .is_some_and(|r| self.reaches(r, owner, &mut BTreeSet::new()));
                (
                    ty,
                    if recursive {
                        Shape::Boxed
                    } else {
                        Shape::Single
                    },
                )
            }
        }
    }

    /// The Rust type of a schema as a whole (a list element, a map value, a field).
    fn value_type(&self, schema: Option<&Value>) -> TokenStream {
        let Some(schema) = schema else {
            return quote!(::kubegen::__private::serde_json::Value);
        };
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return match self.defs.get(r) {
                Some(d) if is_struct(d) => self.config_path(r),
                // A value type newer than k8s-openapi's earliest version may not exist in
                // the one a binary picks: held as JSON (it is an object without fields).
                _ if self.since.contains_key(r) => quote!(::kubegen::__private::serde_json::Value),
                _ => k8s_type(r),
            };
        }
        let format = schema.get("format").and_then(Value::as_str);
        match schema.get("type").and_then(Value::as_str) {
            Some("string") if format == Some("byte") => {
                quote!(::kubegen::__private::k8s_openapi::ByteString)
            }
            Some("string") => quote!(::std::string::String),
            Some("boolean") => quote!(bool),
            Some("integer") if format == Some("int32") => quote!(i32),
            Some("integer") => quote!(i64),
            Some("number") => quote!(f64),
            Some("array") => {
                let inner = self.value_type(schema.get("items"));
                quote!(::std::vec::Vec<#inner>)
            }
            Some("object") if schema.get("additionalProperties").is_some() => {
                let inner = self.value_type(schema.get("additionalProperties"));
                quote!(::std::collections::BTreeMap<::std::string::String, #inner>)
            }
            _ => quote!(::kubegen::__private::serde_json::Value),
        }
    }

    /// Whether struct `from` holds `to` by value (through single fields, not lists or
    /// maps): a field of type `from` in `to` must then be boxed.
    fn reaches(&self, from: &str, to: &str, seen: &mut BTreeSet<String>) -> bool {
        if from == to {
            return true;
        }
        if !seen.insert(from.to_owned()) {
            return false;
        }
        let Some(props) = self
            .defs
            .get(from)
            .and_then(|d| d.get("properties"))
            .and_then(Value::as_object)
        else {
            return false;
        };
        props.values().any(|s| {
            s.get("$ref")
                .and_then(Value::as_str)
                .is_some_and(|r| self.reaches(r, to, seen))
        })
    }
}

/// Every definition a schema refers to.
fn refs(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|v| walk(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    walk(schema, &mut out);
    out
}

/// The first sentence of a description, as doc lines rustdoc reads as prose.
fn first_sentence(description: Option<&Value>) -> String {
    let Some(text) = description.and_then(Value::as_str) else {
        return String::new();
    };
    let paragraph = text
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .replace('\n', " ");
    let sentence = match paragraph.find(". ") {
        Some(i) => &paragraph[..=i],
        None => paragraph.as_str(),
    };
    crate::import::docs::doc_lines(sentence).join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_follow_k8s_openapi() {
        for (json, rust) in [
            ("podCIDRs", "pod_cidrs"),
            ("externalIPs", "external_ips"),
            ("hostIPC", "host_ipc"),
            ("type", "type_"),
            ("$ref", "ref_"),
            ("x-kubernetes-list-type", "x_kubernetes_list_type"),
            ("apiVersion", "api_version"),
        ] {
            assert_eq!(field_name(json), rust, "{json}");
        }
    }

    #[test]
    fn every_resource_reaches_its_structs_and_recursion_is_boxed() {
        let b = Builder::new(quote!(crate::applyconfiguration));
        let root = Root {
            api_version: "apiextensions.k8s.io/v1".into(),
            kind: "CustomResourceDefinition".into(),
            object: quote!(X),
            namespaced: false,
            status: true,
            add_type_meta: false,
            metadata: true,
        };
        let crd =
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition";
        let (located, values) = b.build(&[(crd.into(), root)]);
        let props = located
            .iter()
            .find(|l| l.ty.ident == "JSONSchemaPropsApplyConfiguration")
            .expect("JSONSchemaProps is reached");
        let not = props
            .ty
            .fields
            .iter()
            .find(|f| f.json == "not")
            .expect("not");
        assert_eq!(not.shape, Shape::Boxed);
        assert!(
            located
                .iter()
                .any(|l| l.group == "meta" && l.file == "object_meta")
        );
        assert!(values.iter().any(|v| v.ends_with("JSONSchemaPropsOrArray")));
    }
}
