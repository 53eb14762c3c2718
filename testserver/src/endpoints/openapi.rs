//! A minimal OpenAPI v3 surface: the `/openapi/v3` index and one document per
//! group-version listing each resource's paths with its
//! `x-kubernetes-group-version-kind` and the `fieldValidation` parameter, which is what
//! kubectl checks before relying on server-side field validation.
//!
//! A custom resource's schema is its CRD version's `openAPIV3Schema` (as
//! apiextensions-apiserver publishes it, `pkg/controller/openapi/builder`), so `kubectl
//! explain` shows its fields. Built-in kinds publish k8s-openapi's definitions (its
//! `schemars` impls, the same the server admits their writes against).

use serde_json::{Map, Value, json};

use crate::registry::{Registry, ResourceType};

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: every served group-version.
pub fn index(registry: &Registry) -> Value {
    let mut paths = Map::new();
    let mut gvs: Vec<(String, String)> = registry
        .all()
        .iter()
        .map(|rt| (rt.group.clone(), rt.version.clone()))
        .collect();
    gvs.sort();
    gvs.dedup();
    for (g, v) in gvs {
        let p = gv_path(&g, &v);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash=0")}),
        );
    }
    json!({ "paths": paths })
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/G/V`, if served. `crd_schema` gives a
/// custom resource's published schema for a version; built-in kinds publish k8s-openapi's
/// definitions.
pub fn document(
    registry: &Registry,
    group: &str,
    version: &str,
    crd_schema: impl Fn(&ResourceType) -> Option<Value>,
) -> Option<Value> {
    let types = registry.in_group_version(group, version);
    if types.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    let mut schemas = Map::new();
    let params = json!([
        {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
        {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
        {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
        {"name": "force", "in": "query", "schema": {"type": "boolean", "uniqueItems": true}}
    ]);
    for rt in types {
        let gvk = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
        let prefix = format!("/{}", gv_path(group, version));
        let collection = if rt.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", rt.plural)
        } else {
            format!("{prefix}/{}", rt.plural)
        };
        let schema_name = format!(
            "{}.{}.{}",
            if rt.group.is_empty() {
                "core"
            } else {
                &rt.group
            },
            rt.version,
            rt.kind
        );
        let body = json!({"content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema_name}")}}}});
        let op = |action: &str| {
            json!({
                "operationId": format!("{action}{}", rt.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": params,
                "responses": {"200": body},
            })
        };
        paths.insert(
            collection.clone(),
            json!({"get": op("list"), "post": op("post")}),
        );
        paths.insert(
            format!("{collection}/{{name}}"),
            json!({"get": op("get"), "put": op("put"), "patch": op("patch"), "delete": op("delete")}),
        );
        let published = if rt.builtin {
            crate::builtins::published_schema(&rt.group, &rt.version, &rt.kind).map(
                |(root, defs)| {
                    for (name, def) in defs {
                        schemas.entry(name).or_insert(def);
                    }
                    root
                },
            )
        } else {
            crd_schema(&rt)
        };
        let schema = match published {
            Some(mut schema) => {
                if let Some(m) = schema.as_object_mut() {
                    m.insert("x-kubernetes-group-version-kind".into(), json!([gvk]));
                }
                schema
            }
            None => json!({
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-group-version-kind": [gvk],
            }),
        };
        schemas.insert(schema_name, schema);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0-kubegen"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}
