//! `PartialObjectMetadata` and `PartialObjectMetadataList` (API Concepts, "Retrieving
//! metadata only"; apimachinery `pkg/apis/meta/v1` types, served by kube-apiserver's
//! `handlers/response.go` transformation for `Accept: ...;as=PartialObjectMetadata`).

use serde_json::{Map, Value, json};

use crate::engine::ListResult;

/// The metadata of `obj` as a `meta.k8s.io/<version>` PartialObjectMetadata.
pub fn partial(version: &str, obj: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| Value::Object(Map::new())),
    })
}

/// The list's metadata (resourceVersion, continue) as it goes on any list-shaped reply.
pub fn list_meta(list: &ListResult) -> Value {
    let mut m = Map::new();
    m.insert(
        "resourceVersion".into(),
        Value::String(list.resource_version.clone()),
    );
    if let Some(c) = &list.continue_token {
        m.insert("continue".into(), Value::String(c.clone()));
    }
    Value::Object(m)
}

/// The items of `list` as a `meta.k8s.io/<version>` PartialObjectMetadataList.
pub fn partial_list(version: &str, list: &ListResult) -> Value {
    let items: Vec<Value> = list
        .items
        .iter()
        .map(|item| partial(version, item))
        .collect();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": list_meta(list),
        "items": items,
    })
}
