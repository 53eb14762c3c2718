//! `metadata` as kube-apiserver decodes it: into `metav1.ObjectMeta`, which keeps the
//! fields it declares and drops (and, for fieldValidation, names) the rest
//! (apiextensions-apiserver `pkg/apiserver/schema/objectmeta/coerce.go`
//! `GetObjectMetaWithOptions` with `ReturnUnknownFieldPaths`, applied at a custom resource's
//! root and inside every `x-kubernetes-embedded-resource` object; apimachinery's strict
//! decoding of a built-in kind). The schema below is ObjectMeta's field set
//! (`k8s.io/apimachinery/pkg/apis/meta/v1/types.go`), with `fieldsV1` free-form as in Go
//! (`FieldsV1` holds raw JSON).

use std::sync::OnceLock;

use serde_json::{Value, json};

use super::model::Node;

/// The schema of `metav1.ObjectMeta` for pruning: every field ObjectMeta declares.
pub fn node() -> &'static Node {
    static NODE: OnceLock<Node> = OnceLock::new();
    NODE.get_or_init(|| {
        // A literal, so it always parses; an empty node (which would prune everything)
        // is never served.
        Node::parse(&schema(), "metadata").unwrap_or_else(|e| {
            tracing::error!(%e, "the ObjectMeta schema does not parse");
            Node {
                preserve_unknown_fields: true,
                ..Node::default()
            }
        })
    })
}

fn schema() -> Value {
    let string = json!({"type": "string"});
    let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
    json!({
        "type": "object",
        "properties": {
            "name": string,
            "generateName": string,
            "namespace": string,
            "selfLink": string,
            "uid": string,
            "resourceVersion": string,
            "generation": {"type": "integer"},
            "creationTimestamp": string,
            "deletionTimestamp": string,
            "deletionGracePeriodSeconds": {"type": "integer"},
            "labels": strings,
            "annotations": strings,
            "ownerReferences": {"type": "array", "items": {"type": "object", "properties": {
                "apiVersion": string,
                "kind": string,
                "name": string,
                "uid": string,
                "controller": {"type": "boolean"},
                "blockOwnerDeletion": {"type": "boolean"},
            }}},
            "finalizers": {"type": "array", "items": string},
            "managedFields": {"type": "array", "items": {"type": "object", "properties": {
                "manager": string,
                "operation": string,
                "apiVersion": string,
                "time": string,
                "fieldsType": string,
                "fieldsV1": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "subresource": string,
            }}},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// apimachinery `meta/v1/types.go`: the fields of ObjectMeta, OwnerReference and
    /// ManagedFieldsEntry are known; `fieldsV1` keeps whatever it holds.
    #[test]
    fn declares_objectmeta_fields() {
        let n = node();
        for f in [
            "name",
            "generateName",
            "namespace",
            "selfLink",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "labels",
            "annotations",
            "ownerReferences",
            "finalizers",
            "managedFields",
        ] {
            assert!(n.properties.contains_key(f), "{f}");
        }
        let mut meta =
            json!({"managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {"f:x": {}}}}]});
        assert!(super::super::prune::prune(n, &mut meta).is_empty());
        assert_eq!(
            meta["managedFields"][0]["fieldsV1"],
            json!({"f:spec": {"f:x": {}}})
        );
    }
}
