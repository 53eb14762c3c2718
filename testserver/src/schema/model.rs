//! The structural-schema model: an `openAPIV3Schema` (a `JSONSchemaProps` tree, as JSON)
//! parsed once into [`Node`]s that validation, pruning, defaulting and list semantics walk.
//! Mirrors apiextensions-apiserver `pkg/apiserver/schema/types.go` (`Structural`,
//! `Generic`, `Extensions`, `ValueValidation`).

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    /// `atomic` (the default): the list is one value.
    Atomic,
    /// `set`: items are unique scalars.
    Set,
    /// `map`: items are objects identified by `x-kubernetes-list-map-keys`.
    Map,
}

/// `additionalProperties`: a schema for the values of a map, or a boolean.
#[derive(Debug, Clone)]
pub enum Additional {
    /// `additionalProperties: true|false`.
    Bool(bool),
    /// `additionalProperties: {schema}`.
    Schema(Box<Node>),
}

/// One schema node, with everything the validators need pre-parsed.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// `type` (`object`, `array`, `string`, `integer`, `number`, `boolean`), if set.
    pub ty: Option<String>,
    /// `format`.
    pub format: Option<String>,
    /// `nullable`.
    pub nullable: bool,
    /// `properties`, by name.
    pub properties: BTreeMap<String, Node>,
    /// `additionalProperties`.
    pub additional: Option<Additional>,
    /// `items`.
    pub items: Option<Box<Node>>,
    /// `required`.
    pub required: Vec<String>,
    /// `enum`.
    pub enumeration: Option<Vec<Value>>,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `minLength`.
    pub min_length: Option<u64>,
    /// `maxLength`.
    pub max_length: Option<u64>,
    /// `pattern` as written, and compiled.
    pub pattern: Option<(String, Regex)>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `minProperties`.
    pub min_properties: Option<u64>,
    /// `maxProperties`.
    pub max_properties: Option<u64>,
    /// `default`.
    pub default: Option<Value>,
    /// `allOf` (value validations only in a structural schema).
    pub all_of: Vec<Node>,
    /// `anyOf`.
    pub any_of: Vec<Node>,
    /// `oneOf`.
    pub one_of: Vec<Node>,
    /// `not`.
    pub not: Option<Box<Node>>,
    /// `x-kubernetes-preserve-unknown-fields`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-embedded-resource`.
    pub embedded_resource: bool,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<ListType>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// Whether this node or one below it (properties, items, additionalProperties) has a
    /// `default`: reads skip subtrees without (see `defaults::needs_defaults`).
    pub defaults_below: bool,
    /// `x-kubernetes-map-type` (`granular` or `atomic`).
    pub map_type: Option<String>,
    /// Whether the node carries `x-kubernetes-validations` (CEL runs from the raw schema).
    pub has_rules: bool,
}

/// A schema that could not even be read (wrong JSON types for keywords, bad pattern).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ParseError {
    /// Schema path, e.g. `properties[spec].properties[x].pattern`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn uint(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

impl Node {
    /// Parses `schema` (an `openAPIV3Schema` or any node of it). `path` names it in errors.
    pub fn parse(schema: &Value, path: &str) -> Result<Node, ParseError> {
        Self::parse_depth(schema, path, 0)
    }

    fn parse_depth(schema: &Value, path: &str, depth: usize) -> Result<Node, ParseError> {
        let err = |message: String| ParseError {
            path: path.to_owned(),
            message,
        };
        if depth > 128 {
            return Err(err("schema nested too deeply".into()));
        }
        let obj = schema
            .as_object()
            .ok_or_else(|| err("must be an object".into()))?;
        let child = |v: &Value, p: String| Node::parse_depth(v, &p, depth + 1);
        let mut node = Node {
            ty: obj.get("type").and_then(Value::as_str).map(str::to_owned),
            format: obj.get("format").and_then(Value::as_str).map(str::to_owned),
            nullable: flag(schema, "nullable"),
            minimum: num(schema, "minimum"),
            maximum: num(schema, "maximum"),
            exclusive_minimum: flag(schema, "exclusiveMinimum"),
            exclusive_maximum: flag(schema, "exclusiveMaximum"),
            multiple_of: num(schema, "multipleOf"),
            min_length: uint(schema, "minLength"),
            max_length: uint(schema, "maxLength"),
            min_items: uint(schema, "minItems"),
            max_items: uint(schema, "maxItems"),
            unique_items: flag(schema, "uniqueItems"),
            min_properties: uint(schema, "minProperties"),
            max_properties: uint(schema, "maxProperties"),
            default: obj.get("default").cloned(),
            enumeration: obj.get("enum").and_then(Value::as_array).cloned(),
            preserve_unknown_fields: flag(schema, "x-kubernetes-preserve-unknown-fields"),
            int_or_string: flag(schema, "x-kubernetes-int-or-string"),
            embedded_resource: flag(schema, "x-kubernetes-embedded-resource"),
            map_type: obj
                .get("x-kubernetes-map-type")
                .and_then(Value::as_str)
                .map(str::to_owned),
            has_rules: obj
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty()),
            ..Node::default()
        };
        if let Some(t) = obj.get("type")
            && !t.is_string()
        {
            return Err(err("type must be a string".into()));
        }
        if let Some(p) = obj.get("pattern") {
            let p = p
                .as_str()
                .ok_or_else(|| err("pattern must be a string".into()))?;
            let re = Regex::new(p).map_err(|e| err(format!("invalid pattern {p:?}: {e}")))?;
            node.pattern = Some((p.to_owned(), re));
        }
        if let Some(props) = obj.get("properties") {
            let props = props
                .as_object()
                .ok_or_else(|| err("properties must be an object".into()))?;
            for (k, v) in props {
                node.properties
                    .insert(k.clone(), child(v, format!("{path}.properties[{k}]"))?);
            }
        }
        match obj.get("additionalProperties") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => node.additional = Some(Additional::Bool(*b)),
            Some(v) => {
                node.additional = Some(Additional::Schema(Box::new(child(
                    v,
                    format!("{path}.additionalProperties"),
                )?)))
            }
        }
        if let Some(items) = obj.get("items") {
            node.items = Some(Box::new(child(items, format!("{path}.items"))?));
        }
        if let Some(req) = obj.get("required").and_then(Value::as_array) {
            node.required = req
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        for (key, target) in [
            ("allOf", &mut node.all_of),
            ("anyOf", &mut node.any_of),
            ("oneOf", &mut node.one_of),
        ] {
            if let Some(list) = obj.get(key).and_then(Value::as_array) {
                for (i, v) in list.iter().enumerate() {
                    target.push(child(v, format!("{path}.{key}[{i}]"))?);
                }
            }
        }
        if let Some(n) = obj.get("not") {
            node.not = Some(Box::new(child(n, format!("{path}.not"))?));
        }
        node.list_type = match obj.get("x-kubernetes-list-type").and_then(Value::as_str) {
            None => None,
            Some("atomic") => Some(ListType::Atomic),
            Some("set") => Some(ListType::Set),
            Some("map") => Some(ListType::Map),
            Some(other) => {
                return Err(err(format!(
                    "x-kubernetes-list-type: Unsupported value: {other:?}: supported values: \"atomic\", \"map\", \"set\""
                )));
            }
        };
        if let Some(keys) = obj
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
        {
            node.list_map_keys = keys
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        node.defaults_below = node.default.is_some()
            || node.properties.values().any(|p| p.defaults_below)
            || node.items.as_deref().is_some_and(|i| i.defaults_below)
            || matches!(&node.additional, Some(Additional::Schema(a)) if a.defaults_below);
        Ok(node)
    }

    /// The schema of property `name` of an object, if known (`properties`, then
    /// `additionalProperties`).
    pub fn property(&self, name: &str) -> Option<&Node> {
        self.properties.get(name).or(match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        })
    }
}
