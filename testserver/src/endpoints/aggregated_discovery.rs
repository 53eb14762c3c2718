//! Aggregated discovery (`apidiscovery.k8s.io/v2`, KEP-3352): one `APIGroupDiscoveryList`
//! per root (`/api` for the core group, `/apis` for the others) holding every group,
//! version and resource, so a client learns the whole API in two requests. kubectl 1.26+
//! and client-go ask for it first, through content negotiation on the legacy endpoints:
//! `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`
//! (staging `apiserver/pkg/endpoints/discovery/aggregated/handler.go`). The document is
//! built from the registry on every request, so it is current as CRDs come and go.

use serde_json::{Value, json};

use crate::registry::{Registry, ResourceType};

/// The media type a client asks for, and the server answers with.
pub const MEDIA_TYPE: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether an `Accept` header asks for the v2 aggregated document in JSON (kube-apiserver
/// also serves `v2beta1` until 1.33; kubegen answers only v2, and clients list it first).
pub fn wanted(accept: &str) -> bool {
    crate::endpoints::negotiate::accepts(
        accept,
        "application/json",
        &[
            ("g", "apidiscovery.k8s.io"),
            ("v", "v2"),
            ("as", "APIGroupDiscoveryList"),
        ],
    )
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

/// One `APIResourceDiscovery`.
fn resource(rt: &ResourceType) -> Value {
    let mut subresources = Vec::new();
    if rt.status_subresource {
        subresources.push(json!({
            "subresource": "status",
            "responseKind": gvk(&rt.group, &rt.version, &rt.kind),
            "verbs": ["get", "patch", "update"],
        }));
    }
    if rt.scale.is_some() {
        subresources.push(json!({
            "subresource": "scale",
            "responseKind": gvk("autoscaling", "v1", "Scale"),
            "verbs": ["get", "patch", "update"],
        }));
    }
    let mut out = json!({
        "resource": rt.plural,
        "responseKind": gvk(&rt.group, &rt.version, &rt.kind),
        "scope": if rt.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": rt.singular,
        "verbs": rt.verb_names(),
    });
    if let Some(m) = out.as_object_mut() {
        if !rt.short_names.is_empty() {
            m.insert("shortNames".into(), json!(rt.short_names));
        }
        if !rt.categories.is_empty() {
            m.insert("categories".into(), json!(rt.categories));
        }
        if !subresources.is_empty() {
            m.insert("subresources".into(), Value::Array(subresources));
        }
    }
    out
}

/// One `APIGroupDiscovery`: versions in preference order.
fn group(registry: &Registry, name: &str) -> Option<Value> {
    let versions: Vec<Value> = registry
        .versions(name)
        .iter()
        .map(|v| {
            let resources: Vec<Value> = registry
                .in_group_version(name, v)
                .iter()
                .map(|rt| resource(rt))
                .collect();
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    (!versions.is_empty()).then(|| json!({"metadata": {"name": name}, "versions": versions}))
}

fn list(items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// The document served at `/api`: the core group (named `""`).
pub fn core(registry: &Registry) -> Value {
    list(group(registry, "").into_iter().collect())
}

/// The document served at `/apis`: every named group, in registration order.
pub fn groups(registry: &Registry) -> Value {
    list(
        registry
            .groups()
            .iter()
            .filter(|g| !g.is_empty())
            .filter_map(|g| group(registry, g))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_negotiation_matches_kubectls_header() {
        // What kubectl 1.32 sends on `/api` and `/apis`.
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
                       application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,\
                       application/json";
        assert!(wanted(kubectl));
        assert!(!wanted("application/json"));
        assert!(!wanted(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        ));
    }

    #[test]
    fn documents_split_core_from_named_groups() {
        let registry = Registry::with_builtins();
        let core = core(&registry);
        assert_eq!(core["items"].as_array().map(Vec::len), Some(1));
        assert_eq!(core["items"][0]["metadata"]["name"], "");
        let groups = groups(&registry);
        let names: Vec<&str> = groups["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g["metadata"]["name"].as_str())
            .collect();
        assert!(names.contains(&"apps") && !names.contains(&""), "{names:?}");
        let autoscaling = groups["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|g| g["metadata"]["name"] == "autoscaling")
            .expect("autoscaling");
        assert_eq!(
            autoscaling["versions"][0]["version"], "v2",
            "preferred first"
        );
    }
}
