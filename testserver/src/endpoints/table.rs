//! `meta.k8s.io` Tables (API Concepts, "Receiving resources as Tables"): kubectl's default
//! columns for the common built-in kinds as kube-apiserver's
//! `pkg/printers/internalversion/printers.go` prints them, custom resources' columns from
//! their CRD's `additionalPrinterColumns` (apiextensions-apiserver
//! `pkg/registry/customresource/tableconvertor`, JSONPath cells typed by
//! `cellForJSONValue`), and the default convertor's Name / Created At otherwise
//! (apiserver `pkg/registry/rest/table.go`).

use serde_json::{Map, Value, json};

use super::jsonpath;
use crate::{
    builtins::printers::{arr, name, since},
    engine::{Engine, ListResult},
    registry::{Cell, PrinterColumn, ResourceType},
};

/// `includeObject` (metav1.IncludeObjectPolicy): what each row carries besides its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// Nothing.
    None,
    /// The whole object.
    Object,
    /// Its PartialObjectMetadata (the default).
    #[default]
    Metadata,
}

impl IncludeObject {
    /// Parses the query parameter (absent or empty: Metadata).
    pub fn parse(s: Option<&str>) -> Result<Self, String> {
        match s.unwrap_or_default() {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "Object" => Ok(IncludeObject::Object),
            "None" => Ok(IncludeObject::None),
            other => Err(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
            )),
        }
    }
}

/// The columns of one table: a built-in's row's or a CRD's.
enum Columns {
    Builtin(&'static [PrinterColumn]),
    Custom(Vec<CustomColumn>),
}

/// A CRD's additionalPrinterColumn.
struct CustomColumn {
    name: String,
    ty: String,
    format: String,
    description: String,
    priority: i64,
    path: String,
}

// ---------------------------------------------------------------- the table

const NAME_DESC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DESC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn columns_for(engine: &Engine, rt: &ResourceType) -> Columns {
    if rt.builtin {
        Columns::Builtin(rt.columns)
    } else {
        Columns::Custom(custom_columns(engine, rt))
    }
}

/// A built-in column's cell: its JSONPath's value as it is, or its function's.
fn builtin_cell(cell: &Cell, obj: &Value) -> Value {
    let at = |path: &str| jsonpath::first(path, obj).filter(|v| !v.is_null());
    match cell {
        Cell::Path(path) => at(path).unwrap_or_else(|| Value::String(String::new())),
        Cell::PathOrNone(path) => match at(path) {
            Some(Value::String(s)) if s.is_empty() => Value::String("<none>".into()),
            Some(v) => v,
            None => Value::String("<none>".into()),
        },
        Cell::Number(path) => at(path).unwrap_or_else(|| Value::from(0)),
        Cell::Computed(f) => f(obj),
    }
}

/// printers.go's format and description of a built-in column (only Name and Age have
/// them).
fn format_and_description(name: &str) -> (&'static str, &'static str) {
    match name {
        "Name" => ("name", NAME_DESC),
        "Age" => ("", AGE_DESC),
        _ => ("", ""),
    }
}

fn custom_columns(engine: &Engine, rt: &ResourceType) -> Vec<CustomColumn> {
    let crd_name = format!("{}.{}", rt.plural, rt.group);
    let crd = engine
        .registry()
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .and_then(|crd_rt| {
            engine
                .store()
                .get(&crd_rt.group_resource(), &(String::new(), crd_name))
        });
    let mut cols = Vec::new();
    if let Some(crd) = crd {
        let version = arr(&crd, "/spec/versions")
            .iter()
            .find(|v| v.get("name").and_then(Value::as_str) == Some(rt.version.as_str()));
        for c in version
            .and_then(|v| v.get("additionalPrinterColumns"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let field = |k: &str| {
                c.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            cols.push(CustomColumn {
                name: field("name"),
                ty: field("type"),
                format: field("format"),
                description: field("description"),
                priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                path: field("jsonPath"),
            });
        }
    }
    if cols.is_empty() {
        // apiextensions-apiserver: a version without columns shows its age.
        cols.push(CustomColumn {
            name: "Age".into(),
            ty: "date".into(),
            format: String::new(),
            description: AGE_DESC.into(),
            priority: 0,
            path: ".metadata.creationTimestamp".into(),
        });
    }
    cols
}

/// tableconvertor `cellForJSONValue`.
fn custom_cell(ty: &str, v: Option<Value>) -> Value {
    let Some(v) = v else { return Value::Null };
    match (ty, &v) {
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, Value::from),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, Value::from),
        ("boolean", Value::Bool(_)) => v,
        ("string", Value::String(_)) => v,
        ("string", other) => Value::String(match other {
            Value::Null => return Value::Null,
            other => jsonpath::print(other),
        }),
        ("date", Value::String(t)) => Value::String(match t.parse::<jiff::Timestamp>() {
            Ok(_) => since(t),
            Err(_) => "<invalid>".into(),
        }),
        _ => Value::Null,
    }
}

fn definitions(cols: &Columns) -> Vec<Value> {
    match cols {
        Columns::Builtin(cols) => cols
            .iter()
            .map(|c| {
                let (format, description) = format_and_description(c.name);
                json!({"name": c.name, "type": c.ty, "format": format,
                       "description": description, "priority": c.priority})
            })
            .collect(),
        Columns::Custom(cols) => {
            let mut out = vec![json!({"name": "Name", "type": "string", "format": "name",
                                      "description": NAME_DESC, "priority": 0})];
            out.extend(cols.iter().map(|c| {
                json!({"name": c.name, "type": c.ty, "format": c.format,
                       "description": c.description, "priority": c.priority})
            }));
            out
        }
    }
}

fn row(cols: &Columns, obj: &Value, include: IncludeObject) -> Value {
    let cells: Vec<Value> = match cols {
        Columns::Builtin(cols) => cols.iter().map(|c| builtin_cell(&c.cell, obj)).collect(),
        Columns::Custom(cols) => {
            let mut out = vec![name(obj)];
            out.extend(
                cols.iter()
                    .map(|c| custom_cell(&c.ty, jsonpath::first(&c.path, obj))),
            );
            out
        }
    };
    let mut r = Map::new();
    r.insert("cells".into(), Value::Array(cells));
    match include {
        IncludeObject::None => {}
        IncludeObject::Object => {
            r.insert("object".into(), obj.clone());
        }
        IncludeObject::Metadata => {
            r.insert(
                "object".into(),
                crate::endpoints::metadata::partial("v1", obj),
            );
        }
    }
    Value::Object(r)
}

fn table(version: &str, cols: &Columns, metadata: Value, rows: Vec<Value>) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "columnDefinitions": definitions(cols),
        "rows": rows,
    })
}

/// A table of one object (GET of a named object).
pub fn for_object(
    engine: &Engine,
    rt: &ResourceType,
    version: &str,
    obj: &Value,
    include: IncludeObject,
) -> Value {
    let cols = columns_for(engine, rt);
    let rv = obj
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    let metadata = json!({"resourceVersion": rv});
    table(version, &cols, metadata, vec![row(&cols, obj, include)])
}

/// A table of a list (its resourceVersion and continue token carried over).
pub fn for_list(
    engine: &Engine,
    rt: &ResourceType,
    version: &str,
    list: &ListResult,
    include: IncludeObject,
) -> Value {
    let cols = columns_for(engine, rt);
    let rows = list
        .items
        .iter()
        .map(|item| row(&cols, item, include))
        .collect();
    table(
        version,
        &cols,
        crate::endpoints::metadata::list_meta(list),
        rows,
    )
}

/// The object of one watch event as a one-row table.
pub fn for_watch_event(
    engine: &Engine,
    rt: &ResourceType,
    version: &str,
    obj: &Value,
    include: IncludeObject,
) -> Value {
    for_object(engine, rt, version, obj, include)
}
