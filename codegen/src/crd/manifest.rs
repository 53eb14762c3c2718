//! The `apiextensions.k8s.io/v1` CustomResourceDefinition of one resource type, as
//! controller-gen writes it (`pkg/crd/spec.go`, `pkg/crd/markers/crd.go`): names
//! (`kind`, `listKind`, `plural`, `singular`, `shortNames`, `categories`), scope, one
//! served and stored version with its `openAPIV3Schema`, the status subresource and
//! `additionalPrinterColumns`.

use serde_json::{Map, Value, json};

use super::schema::Schemas;
use crate::ctxt::Ctxt;
use crate::markers::TypeMarkers;
use crate::markers::value::Value as MarkerValue;
use crate::markers::vocabulary::{
    DEPRECATED_VERSION, METADATA_ANNOTATIONS, METADATA_LABELS, PRINT_COLUMN, RESOURCE,
    SELECTABLE_FIELD, SUBRESOURCE_SCALE, SUBRESOURCE_STATUS, UNSERVED_VERSION,
};
use crate::model::{ResourceDef, Scope, TypeDef};

/// `<group>_<plural>.yaml`, controller-gen's file name.
pub fn file_name(r: &ResourceDef) -> String {
    format!("{}_{}.yaml", r.group, r.plural)
}

fn split_list(s: &str) -> Vec<Value> {
    s.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| json!(s))
        .collect()
}

/// The CRD of `ty` (a resource of the package whose types `schemas` knows).
pub fn crd(ty: &TypeDef, r: &ResourceDef, schemas: &Schemas<'_>, cx: &Ctxt) -> Value {
    let markers = TypeMarkers::from_attrs(&ty.attrs, cx);
    let mut names = json!({
        "kind": r.kind,
        "listKind": format!("{}List", r.kind),
        "plural": r.plural,
        "singular": r.kind.to_lowercase(),
    });
    let mut scope = match r.scope {
        Scope::Namespaced => "Namespaced",
        Scope::Cluster => "Cluster",
    };
    for f in markers.all(RESOURCE) {
        let MarkerValue::Args(args) = &f.value else {
            continue;
        };
        for (k, v) in args {
            match k.as_str() {
                "scope" if v == "Namespaced" || v == "Cluster" => {
                    scope = if v == "Cluster" { "Cluster" } else { "Namespaced" };
                }
                "singular" => names["singular"] = json!(v),
                "shortName" => names["shortNames"] = Value::Array(split_list(v)),
                "categories" => names["categories"] = Value::Array(split_list(v)),
                "path" if v == &r.plural => {}
                "path" => cx.error_at(
                    f.span,
                    format!(
                        "`{}`: path `{v}` differs from the plural `{}`: set the plural with `+resourceName` / `plural = ...`",
                        f.written, r.plural
                    ),
                ),
                _ => cx.error_at(
                    f.span,
                    format!(
                        "`{}`: unknown or invalid `{k}={v}` (expected scope=Namespaced|Cluster, singular, shortName, categories, path)",
                        f.written
                    ),
                ),
            }
        }
    }
    let mut stack = Vec::new();
    let mut schema = schemas.named(ty, &mut stack);
    if let Value::Object(m) = &mut schema {
        let props = m
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(p) = props {
            p.insert("apiVersion".into(), json!({"type": "string"}));
            p.insert("kind".into(), json!({"type": "string"}));
            p.insert("metadata".into(), json!({"type": "object"}));
        }
        if let Some(Value::Array(req)) = m.get_mut("required") {
            req.retain(|r| r != "metadata");
            if req.is_empty() {
                m.remove("required");
            }
        }
    }
    let mut version = json!({
        "name": r.version,
        "served": markers.span(UNSERVED_VERSION).is_none(),
        "storage": true,
    });
    for f in markers.all(DEPRECATED_VERSION) {
        let MarkerValue::Args(args) = &f.value else {
            continue;
        };
        version["deprecated"] = json!(true);
        for (k, v) in args {
            if k == "warning" {
                version["deprecationWarning"] = json!(v);
            } else {
                cx.error_at(
                    f.span,
                    format!("`{}`: unknown argument `{k}` (expected warning)", f.written),
                );
            }
        }
    }
    version["schema"] = json!({"openAPIV3Schema": schema});
    if r.has_status() || markers.span(SUBRESOURCE_STATUS).is_some() {
        version["subresources"] = json!({"status": {}});
    }
    for f in markers.all(SUBRESOURCE_SCALE) {
        let MarkerValue::Args(args) = &f.value else {
            continue;
        };
        let mut scale = Map::new();
        for (k, v) in args {
            let key = match k.as_str() {
                "specpath" => "specReplicasPath",
                "statuspath" => "statusReplicasPath",
                "selectorpath" => "labelSelectorPath",
                other => {
                    cx.error_at(
                        f.span,
                        format!(
                            "`{}`: unknown argument `{other}` (expected specpath, statuspath, selectorpath)",
                            f.written
                        ),
                    );
                    continue;
                }
            };
            scale.insert(key.to_owned(), json!(v));
        }
        for needed in ["specReplicasPath", "statusReplicasPath"] {
            if !scale.contains_key(needed) {
                let arg = if needed == "specReplicasPath" {
                    "specpath"
                } else {
                    "statuspath"
                };
                cx.error_at(f.span, format!("`{}` needs `{arg}=...`", f.written));
            }
        }
        version["subresources"]["scale"] = Value::Object(scale);
    }
    let mut selectable = Vec::new();
    for f in markers.all(SELECTABLE_FIELD) {
        let MarkerValue::Args(args) = &f.value else {
            continue;
        };
        match args.as_slice() {
            [(k, v)] if k == "JSONPath" => selectable.push(json!({"jsonPath": v})),
            _ => cx.error_at(
                f.span,
                format!("`{}` takes exactly `JSONPath=...`", f.written),
            ),
        }
    }
    if !selectable.is_empty() {
        version["selectableFields"] = Value::Array(selectable);
    }
    let mut columns = Vec::new();
    for f in markers.all(PRINT_COLUMN) {
        let MarkerValue::Args(args) = &f.value else {
            continue;
        };
        let mut col = Map::new();
        for (k, v) in args {
            let (key, value) = match k.as_str() {
                "name" => ("name", json!(v)),
                "type" => ("type", json!(v)),
                "JSONPath" | "jsonPath" => ("jsonPath", json!(v)),
                "description" => ("description", json!(v)),
                "format" => ("format", json!(v)),
                "priority" => match v.parse::<i32>() {
                    Ok(p) => ("priority", json!(p)),
                    Err(_) => {
                        cx.error_at(
                            f.span,
                            format!("`{}`: priority `{v}` is not an integer", f.written),
                        );
                        continue;
                    }
                },
                other => {
                    cx.error_at(
                        f.span,
                        format!(
                            "`{}`: unknown argument `{other}` (expected name, type, JSONPath, description, format, priority)",
                            f.written
                        ),
                    );
                    continue;
                }
            };
            col.insert(key.to_owned(), value);
        }
        for needed in ["name", "type", "jsonPath"] {
            if !col.contains_key(needed) {
                cx.error_at(
                    f.span,
                    format!(
                        "`{}` needs `{}=...`",
                        f.written,
                        if needed == "jsonPath" {
                            "JSONPath"
                        } else {
                            needed
                        }
                    ),
                );
            }
        }
        if let Some(Value::String(t)) = col.get("type")
            && !matches!(
                t.as_str(),
                "integer" | "number" | "string" | "boolean" | "date"
            )
        {
            cx.error_at(
                f.span,
                format!(
                    "`{}`: type `{t}` is not integer, number, string, boolean or date",
                    f.written
                ),
            );
        }
        columns.push(Value::Object(col));
    }
    if !columns.is_empty() {
        version["additionalPrinterColumns"] = Value::Array(columns);
    }
    let mut metadata = json!({"name": format!("{}.{}", r.plural, r.group)});
    for (marker, field) in [
        (METADATA_ANNOTATIONS, "annotations"),
        (METADATA_LABELS, "labels"),
    ] {
        for f in markers.all(marker) {
            let MarkerValue::Str(pair) = &f.value else {
                continue;
            };
            match pair.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => {
                    metadata[field][k.trim()] = json!(v.trim());
                }
                _ => cx.error_at(f.span, format!("`{}`: expected `\"key=value\"`", f.written)),
            }
        }
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {
            "group": r.group,
            "names": names,
            "scope": scope,
            "versions": [version],
        },
    })
}
