//! Object builders for the cache tests.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube_core::ObjectMeta;

/// A ConfigMap `namespace/name` (empty namespace = none).
pub(crate) fn cm(namespace: &str, name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// A ConfigMap with labels and a resourceVersion.
pub(crate) fn cm_with(namespace: &str, name: &str, rv: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut obj = cm(namespace, name);
    obj.metadata.resource_version = Some(rv.to_owned());
    obj.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
    );
    obj
}

/// A Node (cluster-scoped) named `name`.
pub(crate) fn node(name: &str) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..Node::default()
    }
}
