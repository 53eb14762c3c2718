//! CustomResourceDefinitions from Rust types at run time: what `#[derive(kubegen::Schema)]`
//! generates code against. The derive runs `kubegen-codegen`'s CRD generator on one type;
//! the fields whose types are defined elsewhere are holes that [`fill`] fills from those
//! types' own [`Schema`] impls, so `Foo::crd()` equals the file `kubegen-codegen crd`
//! writes for `Foo`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

/// A type's structural OpenAPI v3 schema, as a CRD embeds it
/// (`#[derive(kubegen::Schema)]`).
pub trait Schema {
    /// The schema.
    fn schema() -> Value;
}

/// The std and serde_json types the generator describes itself, for types the derive
/// cannot see through: a field typed with an alias of one (`type Labels = BTreeMap<String,
/// String>;`) is a hole filled from these, with the schema `kubegen-codegen crd` gives the
/// aliased type (`crd/schema.rs`'s `path_schema`).
macro_rules! leaf_schemas {
    ($($ty:ty => $schema:tt;)*) => {
        $(impl Schema for $ty {
            fn schema() -> Value {
                serde_json::json!($schema)
            }
        })*
    };
}

leaf_schemas! {
    String => {"type": "string"};
    bool => {"type": "boolean"};
    char => {"type": "string"};
    i8 => {"type": "integer", "format": "int32"};
    i16 => {"type": "integer", "format": "int32"};
    i32 => {"type": "integer", "format": "int32"};
    u8 => {"type": "integer", "format": "int32"};
    u16 => {"type": "integer", "format": "int32"};
    i64 => {"type": "integer", "format": "int64"};
    u32 => {"type": "integer", "format": "int64"};
    u64 => {"type": "integer", "format": "int64"};
    isize => {"type": "integer", "format": "int64"};
    usize => {"type": "integer", "format": "int64"};
    f32 => {"type": "number", "format": "float"};
    f64 => {"type": "number", "format": "double"};
    Value => {"x-kubernetes-preserve-unknown-fields": true};
}

/// Types serde writes as their content.
macro_rules! transparent_schemas {
    ($($ty:ty),*) => {
        $(impl<T: Schema> Schema for $ty {
            fn schema() -> Value {
                T::schema()
            }
        })*
    };
}

transparent_schemas!(Box<T>, Option<T>, std::sync::Arc<T>, std::rc::Rc<T>);

/// Sequences: arrays of their items.
macro_rules! list_schemas {
    ($($ty:ty),*) => {
        $(impl<T: Schema> Schema for $ty {
            fn schema() -> Value {
                serde_json::json!({"type": "array", "items": T::schema()})
            }
        })*
    };
}

list_schemas!(
    Vec<T>,
    std::collections::VecDeque<T>,
    std::collections::LinkedList<T>
);

/// Sets: arrays listed as sets.
macro_rules! set_schemas {
    ($($ty:ty),*) => {
        $(impl<T: Schema> Schema for $ty {
            fn schema() -> Value {
                serde_json::json!({
                    "type": "array",
                    "items": T::schema(),
                    "x-kubernetes-list-type": "set",
                })
            }
        })*
    };
}

set_schemas!(std::collections::BTreeSet<T>, std::collections::HashSet<T>);

/// Maps: objects of their values (keys are JSON object keys).
macro_rules! map_schemas {
    ($($ty:ty),*) => {
        $(impl<K, V: Schema> Schema for $ty {
            fn schema() -> Value {
                serde_json::json!({"type": "object", "additionalProperties": V::schema()})
            }
        })*
    };
}

map_schemas!(
    std::collections::BTreeMap<K, V>,
    std::collections::HashMap<K, V>
);

/// What derived code calls; not a public API.
#[doc(hidden)]
pub mod __private {
    use std::marker::PhantomData;

    use serde_json::Value;

    /// A type, for choosing its schema by the traits it implements.
    pub struct Pick<T>(PhantomData<T>);

    impl<T> Pick<T> {
        /// The token.
        #[allow(clippy::new_without_default)]
        pub fn new() -> Self {
            Pick(PhantomData)
        }
    }

    /// Chosen first (`&&Pick<T>`): the type's own [`Schema`](super::Schema).
    pub trait ViaSchema {
        /// `T::schema()`; `_k8s` unused.
        fn schema(&self, _k8s: &str) -> Value;
    }

    impl<T: super::Schema> ViaSchema for &Pick<T> {
        fn schema(&self, _k8s: &str) -> Value {
            T::schema()
        }
    }

    /// Chosen when `T` has no `Schema` and is a k8s-openapi type: Kubernetes' schema.
    pub trait ViaK8s {
        /// The generator's copy of Kubernetes' schema for the type's name.
        fn schema(&self, k8s: &str) -> Value;
    }

    impl<T: k8s_openapi::DeepMerge> ViaK8s for Pick<T> {
        fn schema(&self, k8s: &str) -> Value {
            #[allow(clippy::expect_used)] // generator output, as in `fill`
            serde_json::from_str(k8s).expect("kubegen: generated schema is JSON")
        }
    }
}

/// The key marking a hole (the codegen crate's `crd::schema::HOLE`).
const HOLE: &str = "$kubegen:hole";
/// The key listing flattened holes (`crd::schema::FLATTEN`).
const FLATTEN: &str = "$kubegen:flatten";

/// Parses the generator's JSON `template` and replaces each hole `{"$kubegen:hole": n,
/// ...}` with `holes[n]()`, the placeholder's other keys (a field's description and
/// markers) applied over it; `x-kubernetes-validations` are appended to the type's own.
///
/// # Panics
///
/// When `template` is not JSON or names a hole `holes` lacks: both are bugs of the
/// generator, never of input.
pub fn fill(template: &str, holes: &[fn() -> Value]) -> Value {
    #[allow(clippy::expect_used)] // generator output; see # Panics
    let mut v: Value = serde_json::from_str(template).expect("kubegen: generated schema is JSON");
    fill_value(&mut v, holes);
    v
}

fn fill_value(v: &mut Value, holes: &[fn() -> Value]) {
    match v {
        Value::Object(m) => {
            if let Some(n) = m.remove(HOLE) {
                #[allow(clippy::expect_used)] // generator output; see fill's # Panics
                let f = n
                    .as_u64()
                    .and_then(|n| holes.get(usize::try_from(n).ok()?))
                    .expect("kubegen: generated schema names a known hole");
                let mut filled = f();
                if let Value::Object(out) = &mut filled {
                    for (k, x) in std::mem::take(m) {
                        match (out.get_mut(&k), x) {
                            (Some(Value::Array(old)), Value::Array(new))
                                if k == "x-kubernetes-validations" =>
                            {
                                old.extend(new);
                            }
                            (_, x) => {
                                out.insert(k, x);
                            }
                        }
                    }
                }
                *v = filled;
                return;
            }
            let flattened = m.remove(FLATTEN);
            m.values_mut().for_each(|x| fill_value(x, holes));
            if let Some(Value::Array(list)) = flattened {
                for item in list {
                    let mut hole = serde_json::Map::new();
                    if let Some(n) = item.get("hole") {
                        hole.insert(HOLE.to_owned(), n.clone());
                    }
                    let mut inner = Value::Object(hole);
                    fill_value(&mut inner, holes);
                    let optional = item.get("optional") == Some(&Value::Bool(true));
                    flatten_into(m, &inner, optional);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| fill_value(x, holes)),
        _ => {}
    }
}

/// Merges a flattened type's schema into an object schema: a map (or anything open)
/// makes the object keep unknown fields; a struct adds its properties, and its required
/// names unless the flattened field is optional (the generator's own rule for a
/// flattened type it can see).
fn flatten_into(m: &mut serde_json::Map<String, Value>, inner: &Value, optional: bool) {
    if inner.get("additionalProperties").is_some()
        || inner.get("x-kubernetes-preserve-unknown-fields").is_some()
    {
        m.insert(
            "x-kubernetes-preserve-unknown-fields".into(),
            Value::Bool(true),
        );
        return;
    }
    if let Some(Value::Object(props)) = inner.get("properties") {
        let out = m
            .entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(out) = out {
            for (k, v) in props {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if optional {
        return;
    }
    if let Some(Value::Array(req)) = inner.get("required")
        && !req.is_empty()
    {
        let mut all: Vec<String> = m
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .chain(req)
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect();
        all.sort();
        all.dedup();
        m.insert(
            "required".into(),
            Value::Array(all.into_iter().map(Value::String).collect()),
        );
    }
}

/// The generator's CRD value as k8s-openapi's type.
///
/// # Panics
///
/// When `value` is not a CustomResourceDefinition: a bug of the generator.
pub fn custom_resource_definition(value: Value) -> CustomResourceDefinition {
    #[allow(clippy::expect_used)] // generator output; see # Panics
    serde_json::from_value(value).expect("kubegen: generated CRD is a CustomResourceDefinition")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn inner() -> Value {
        json!({"type": "object", "description": "type doc", "x-kubernetes-validations": [{"rule": "a"}]})
    }

    fn common() -> Value {
        json!({"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]})
    }

    #[test]
    fn flattened_holes_merge_properties_and_required_names() {
        let t =
            json!({"type": "object", "properties": {"c": {"type": "string"}}, "required": ["c"],
                       FLATTEN: [{"hole": 0, "optional": false}]})
            .to_string();
        assert_eq!(
            fill(&t, &[common]),
            json!({"type": "object", "properties": {"b": {"type": "string"}, "c": {"type": "string"}}, "required": ["b", "c"]})
        );
        let t = json!({"type": "object", FLATTEN: [{"hole": 0, "optional": true}]}).to_string();
        assert_eq!(
            fill(&t, &[common]),
            json!({"type": "object", "properties": {"b": {"type": "string"}}})
        );
    }

    #[test]
    fn holes_are_filled_with_the_field_keys_over_the_type_schema() {
        let t = json!({"properties": {"x": {HOLE: 0, "description": "field doc", "x-kubernetes-validations": [{"rule": "b"}]},
                                       "y": {"items": {HOLE: 0}}}})
        .to_string();
        let v = fill(&t, &[inner]);
        assert_eq!(
            v,
            json!({"properties": {
                "x": {"type": "object", "description": "field doc", "x-kubernetes-validations": [{"rule": "a"}, {"rule": "b"}]},
                "y": {"items": inner()}
            }})
        );
    }
}
