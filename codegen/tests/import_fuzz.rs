//! Arbitrary CRD schemas never panic `import-crd`: whatever the shape (wrong types where
//! objects are expected, unknown keys, names of any characters, enums of any values),
//! the converter imports what it can, notes the rest, and the rendered source parses;
//! and descriptions of any text give doc lines the CRD generator reads back word for
//! word.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

use std::path::Path;

use kubegen_codegen::Boilerplate;
use kubegen_codegen::import::crd_file;
use kubegen_codegen::import::docs::doc_lines;
use kubegen_codegen::import::model::Module;
use kubegen_codegen::import::names::{self, Namer};
use kubegen_codegen::import::render;
use kubegen_codegen::import::schema_to_rust::Converter;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const KEYS: &[&str] = &[
    "type",
    "properties",
    "items",
    "additionalProperties",
    "required",
    "enum",
    "format",
    "default",
    "description",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
    "minimum",
    "maxLength",
    "pattern",
    "oneOf",
    "nullable",
];

const TYPES: &[&str] = &[
    "object", "array", "string", "integer", "number", "boolean", "wat",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        proptest::sample::select(TYPES).prop_map(|t| json!(t)),
        "\\PC{0,12}".prop_map(Value::String),
    ]
}

/// Schema-like values: objects with schema keys (and property names of any text).
fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(
                (proptest::sample::select(KEYS).prop_map(str::to_owned), inner.clone()),
                0..6
            )
            .prop_map(|kvs| Value::Object(kvs.into_iter().collect())),
            proptest::collection::vec(("\\PC{0,8}", inner.clone()), 0..4).prop_map(|kvs| {
                json!({"type": "object", "properties": Value::Object(kvs.into_iter().collect::<Map<_, _>>())})
            }),
            proptest::collection::vec(inner, 0..3).prop_map(Value::Array),
        ]
    })
}

fn crd(schema: &Value) -> String {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.a.io"},
        "spec": {
            "group": "a.io", "scope": "Namespaced",
            "names": {"kind": "Thing", "plural": "things"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": schema}}],
        },
    })
    .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_schema_imports_without_panicking_and_renders_parseable_code(s in schema()) {
        let text = crd(&json!({"type": "object", "properties": {"spec": s}}));
        let versions = crd_file::parse(Path::new("x.json"), &text).unwrap();
        let mut namer = Namer::with_reserved(names::RESERVED_TYPE_NAMES);
        let kind = namer.unique("Thing");
        let mut conv = Converter::new(&mut namer);
        conv.resource(&versions[0], &kind);
        let module = Module {
            group: "a.io".into(),
            version: "v1".into(),
            crds: vec!["things.a.io".into()],
            types: conv.types,
        };
        let source = render::types_file(&module, &Boilerplate::default());
        prop_assert!(source.is_ok(), "{:?}", source.err());
    }

    #[test]
    fn any_crd_text_is_a_result_not_a_panic(text in "\\PC{0,200}") {
        let _ = crd_file::parse(Path::new("x.yaml"), &text);
    }

    #[test]
    fn any_description_reads_back_word_for_word(d in "[ -~\\t\\n\u{e9}]{0,120}") {
        let lines = doc_lines(&d);
        let attrs: Vec<syn::Attribute> = lines.iter().map(|l| syn::parse_quote!(#[doc = #l])).collect();
        let back = kubegen_codegen::crd::schema::description(&attrs).unwrap_or_default();
        let words = |s: &str| -> Vec<String> {
            s.split_whitespace()
                .filter(|w| {
                    let w = w.strip_suffix("text").unwrap_or(w);
                    !(w.len() >= 3 && w.chars().all(|c| c == '`'))
                })
                .map(|w| w.strip_prefix('\\').filter(|r| r.starts_with('+')).unwrap_or(w).to_owned())
                .collect()
        };
        // Lines the marker reader would take as markers are escaped, never dropped.
        prop_assert_eq!(words(&back), words(&d));
    }
}
