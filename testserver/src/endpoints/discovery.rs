//! Discovery documents: `/api`, `/api/v1`, `/apis`, `/apis/G`, `/apis/G/V`, `/version`.

use serde_json::{Value, json};

use crate::registry::{Registry, ResourceType};

/// `/version`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "34",
        "gitVersion": "v1.34.0-kubegen",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
        "emulationMajor": "1",
        "emulationMinor": "34",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "33"
    })
}

/// `/api`.
pub fn core_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]
    })
}

fn group_value(registry: &Registry, group: &str) -> Option<Value> {
    let versions = registry.versions(group);
    let preferred = versions.first()?.clone();
    let gv = |v: &str| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    Some(json!({
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
        "preferredVersion": gv(&preferred),
    }))
}

/// `/apis`.
pub fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .iter()
        .filter_map(|g| {
            let mut v = group_value(registry, g)?;
            if let Some(m) = v.as_object_mut() {
                m.remove("kind");
                m.remove("apiVersion");
            }
            Some(v)
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`, if served.
pub fn group(registry: &Registry, group: &str) -> Option<Value> {
    group_value(registry, group)
}

fn resource_entries(rt: &ResourceType) -> Vec<Value> {
    let mut out = vec![json!({
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": rt.verb_names(),
        "shortNames": rt.short_names,
        "categories": rt.categories,
        "storageVersionHash": "",
    })];
    if let Some(m) = out[0].as_object_mut() {
        if rt.short_names.is_empty() {
            m.remove("shortNames");
        }
        if rt.categories.is_empty() {
            m.remove("categories");
        }
    }
    if rt.status_subresource {
        out.push(json!({
            "name": format!("{}/status", rt.plural),
            "singularName": "",
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": ["get", "patch", "update"],
        }));
    }
    if rt.scale.is_some() {
        out.push(json!({
            "name": format!("{}/scale", rt.plural),
            "singularName": "",
            "namespaced": rt.namespaced,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": ["get", "patch", "update"],
        }));
    }
    out
}

/// `/api/v1` or `/apis/{group}/{version}`, if served.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let types = registry.in_group_version(group, version);
    if types.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let resources: Vec<Value> = types.iter().flat_map(|rt| resource_entries(rt)).collect();
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}
