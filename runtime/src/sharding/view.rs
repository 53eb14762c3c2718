//! What the sharder keeps of an object: the little its decisions read.
//!
//! The sharder watches every object of its ring's kinds, so what it keeps of each one is
//! paid once per object in the replica that shards. It reads the key, the uid and the
//! resourceVersion (a patch's precondition), the ring's own labels (`shard.kubegen.io/*`,
//! `drain.shard.kubegen.io/*`) and the controller owner reference; a [`ShardView`] is
//! decoded from a `PartialObjectMetadata` item with just those, and every other key (other
//! labels, annotations, managedFields, timestamps, finalizers, the item's `apiVersion` and
//! `kind`) is skipped by the decoder, never built.

use std::{borrow::Cow, collections::BTreeMap, fmt, marker::PhantomData};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube_core::{ObjectMeta, Resource};
use serde::{Deserialize, Deserializer, Serialize, Serializer, ser::SerializeMap};

use super::labels::{DRAIN_LABEL_PREFIX, SHARD_LABEL_PREFIX};
use crate::Object;

/// The sharder's view of an object of kind `K` (see the module docs).
pub(crate) struct ShardView<K> {
    metadata: ObjectMeta,
    kind: PhantomData<fn() -> K>,
}

impl<K> ShardView<K> {
    /// The view of `metadata` as the decoder would keep it.
    #[cfg(test)]
    fn of(metadata: &ObjectMeta) -> Self {
        let labels = metadata.labels.clone().map(only_ring_labels);
        let owner_references = metadata
            .owner_references
            .clone()
            .map(only_controller)
            .filter(|refs| !refs.is_empty());
        Self::new(ObjectMeta {
            name: metadata.name.clone(),
            namespace: metadata.namespace.clone(),
            uid: metadata.uid.clone(),
            resource_version: metadata.resource_version.clone(),
            labels,
            owner_references,
            ..ObjectMeta::default()
        })
    }

    fn new(metadata: ObjectMeta) -> Self {
        Self {
            metadata,
            kind: PhantomData,
        }
    }

    /// The kept metadata.
    pub(crate) fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
}

impl<K> Clone for ShardView<K> {
    fn clone(&self) -> Self {
        Self::new(self.metadata.clone())
    }
}

impl<K> fmt::Debug for ShardView<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardView")
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl<K: Object> Resource for ShardView<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl<K> Serialize for ShardView<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("metadata", &self.metadata)?;
        map.end()
    }
}

/// An item as the decoder reads it: `metadata`, every other key skipped.
#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    metadata: Meta,
}

/// The kept keys of `metadata`; the rest are skipped.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Meta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    #[serde(default, deserialize_with = "ring_labels")]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "controller_owner")]
    owner_references: Option<Vec<OwnerReference>>,
}

impl<'de, K> Deserialize<'de> for ShardView<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Meta {
            name,
            namespace,
            uid,
            resource_version,
            labels,
            owner_references,
        } = Item::deserialize(deserializer)?.metadata;
        Ok(Self::new(ObjectMeta {
            name,
            namespace,
            uid,
            resource_version,
            labels,
            owner_references,
            ..ObjectMeta::default()
        }))
    }
}

fn only_ring_labels(mut labels: BTreeMap<String, String>) -> BTreeMap<String, String> {
    labels.retain(|key, _| {
        key.starts_with(SHARD_LABEL_PREFIX) || key.starts_with(DRAIN_LABEL_PREFIX)
    });
    labels
}

fn only_controller(mut refs: Vec<OwnerReference>) -> Vec<OwnerReference> {
    refs.retain(|r| r.controller == Some(true));
    refs
}

/// `metadata.labels`, only the ring labels kept (`None` when none is there).
fn ring_labels<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    Ok(
        Option::<BTreeMap<String, String>>::deserialize(deserializer)?
            .map(only_ring_labels)
            .filter(|labels| !labels.is_empty()),
    )
}

/// `metadata.ownerReferences`, only the controller's kept.
fn controller_owner<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<OwnerReference>>, D::Error> {
    Ok(Option::<Vec<OwnerReference>>::deserialize(deserializer)?
        .map(only_controller)
        .filter(|refs| !refs.is_empty()))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_what_the_sharder_reads_and_skips_the_rest() {
        let item = json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": {
                "name": "cm-1", "namespace": "default", "uid": "u-1", "resourceVersion": "42",
                "creationTimestamp": "2026-11-30T00:00:00Z",
                "labels": {"app": "web", "shard.kubegen.io/cms": "a", "drain.shard.kubegen.io/cms": "true"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:data": {}}}],
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u-s"},
                    {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u-d", "controller": true},
                ],
            },
        });
        let view: ShardView<ConfigMap> = serde_json::from_value(item).unwrap();
        let meta = view.metadata();
        assert_eq!(meta.name.as_deref(), Some("cm-1"));
        assert_eq!(meta.namespace.as_deref(), Some("default"));
        assert_eq!(meta.uid.as_deref(), Some("u-1"));
        assert_eq!(meta.resource_version.as_deref(), Some("42"));
        assert_eq!(
            meta.labels,
            Some(BTreeMap::from([
                ("drain.shard.kubegen.io/cms".to_owned(), "true".to_owned()),
                ("shard.kubegen.io/cms".to_owned(), "a".to_owned()),
            ]))
        );
        let owners = meta.owner_references.as_deref().unwrap();
        assert_eq!(owners.len(), 1);
        assert_eq!(owners[0].uid, "u-d");
        assert!(meta.annotations.is_none() && meta.managed_fields.is_none());
        assert!(meta.creation_timestamp.is_none());
        // The view of the decoded metadata is itself.
        assert_eq!(ShardView::<ConfigMap>::of(meta).metadata(), meta);
        // Round trip through its own encoding.
        let again: ShardView<ConfigMap> =
            serde_json::from_value(serde_json::to_value(&view).unwrap()).unwrap();
        assert_eq!(again.metadata(), meta);
    }

    #[test]
    fn an_item_without_labels_or_owners_keeps_none() {
        let view: ShardView<ConfigMap> =
            serde_json::from_value(json!({"metadata": {"name": "x", "labels": {"app": "y"}}}))
                .unwrap();
        assert!(view.metadata().labels.is_none());
        assert!(view.metadata().owner_references.is_none());
        let malformed =
            serde_json::from_value::<ShardView<ConfigMap>>(json!({"metadata": {"labels": 3}}));
        assert!(malformed.is_err());
    }
}
