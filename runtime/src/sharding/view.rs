//! What the sharder keeps of an object: the little its decisions read.
//!
//! The sharder watches every object of its ring's kinds, so what it keeps of each one is
//! paid once per object in the replica that shards. It reads the key, the uid and the
//! resourceVersion (a patch's precondition), the ring's own labels (`shard.kubegen.io/*`,
//! `drain.shard.kubegen.io/*`) and the controller owner reference; a [`ShardView`] is
//! decoded from a `PartialObjectMetadata` item with just those, and every other key (other
//! labels, annotations, managedFields, timestamps, finalizers, the item's `apiVersion` and
//! `kind`) is skipped by the decoder, never built.
//!
//! The ring labels are kept beside the metadata, as a short sorted list, not in
//! `metadata.labels`: a `BTreeMap` allocates a node of eleven slots (about 0.5 KiB) for
//! one label, which for 30,000 objects was 16 MB of the sharder's replica.

use std::{borrow::Cow, fmt, marker::PhantomData};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube_core::{ObjectMeta, Resource};
use serde::{
    Deserialize, Deserializer, Serialize, Serializer,
    de::{self, MapAccess, Visitor},
    ser::SerializeMap,
};

use super::labels::{DRAIN_LABEL_PREFIX, RingLabels, SHARD_LABEL_PREFIX};
use crate::Object;

/// Label key and value pairs, as the view keeps its ring labels.
type LabelPairs = Vec<(Box<str>, Box<str>)>;

/// What the sharder keeps of one object of any kind: a [`ShardView`]'s contents.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Placement {
    /// Name, namespace, uid, resourceVersion and the controller owner reference; no
    /// labels.
    pub(crate) metadata: ObjectMeta,
    /// The ring labels, sorted by key.
    ring_labels: Box<[(Box<str>, Box<str>)]>,
}

impl Placement {
    fn new(metadata: ObjectMeta, mut ring_labels: LabelPairs) -> Self {
        ring_labels.sort_unstable();
        Self {
            metadata,
            ring_labels: ring_labels.into_boxed_slice(),
        }
    }

    /// The value of the ring label `key` (only ring labels are kept).
    pub(crate) fn label(&self, key: &str) -> Option<&str> {
        self.ring_labels
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.ring_labels[i].1)
    }

    /// The member of `labels`' ring the object is assigned to, if any.
    pub(crate) fn assigned(&self, labels: &RingLabels) -> Option<&str> {
        labels.assigned_by(|key| self.label(key))
    }

    /// Whether the object carries `labels`' drain label.
    pub(crate) fn draining(&self, labels: &RingLabels) -> bool {
        labels.draining_by(|key| self.label(key))
    }

    /// The metadata with the ring labels back in `labels`.
    fn full_metadata(&self) -> ObjectMeta {
        let mut metadata = self.metadata.clone();
        if !self.ring_labels.is_empty() {
            metadata.labels = Some(
                self.ring_labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            );
        }
        metadata
    }
}

/// The sharder's view of an object of kind `K` (see the module docs).
pub(crate) struct ShardView<K> {
    placement: Placement,
    kind: PhantomData<fn() -> K>,
}

impl<K> ShardView<K> {
    /// The view of `metadata` as the decoder would keep it.
    #[cfg(test)]
    fn of(metadata: &ObjectMeta) -> Self {
        let owner_references = metadata
            .owner_references
            .clone()
            .map(only_controller)
            .filter(|refs| !refs.is_empty());
        Self::new(Placement::new(
            ObjectMeta {
                name: metadata.name.clone(),
                namespace: metadata.namespace.clone(),
                uid: metadata.uid.clone(),
                resource_version: metadata.resource_version.clone(),
                owner_references,
                ..ObjectMeta::default()
            },
            metadata
                .labels
                .iter()
                .flatten()
                .filter(|(key, _)| is_ring_label(key))
                .map(|(key, value)| (key.as_str().into(), value.as_str().into()))
                .collect(),
        ))
    }

    fn new(placement: Placement) -> Self {
        Self {
            placement,
            kind: PhantomData,
        }
    }

    /// The kept metadata (without the ring labels: see [`ShardView::placement`]).
    pub(crate) fn metadata(&self) -> &ObjectMeta {
        &self.placement.metadata
    }

    /// What the sharder reads of the object.
    pub(crate) fn placement(&self) -> &Placement {
        &self.placement
    }
}

impl<K> Clone for ShardView<K> {
    fn clone(&self) -> Self {
        Self::new(self.placement.clone())
    }
}

impl<K> fmt::Debug for ShardView<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardView")
            .field("placement", &self.placement)
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
        &self.placement.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.placement.metadata
    }
}

impl<K> Serialize for ShardView<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("metadata", &self.placement.full_metadata())?;
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
    labels: LabelPairs,
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
        Ok(Self::new(Placement::new(
            ObjectMeta {
                name,
                namespace,
                uid,
                resource_version,
                owner_references,
                ..ObjectMeta::default()
            },
            labels,
        )))
    }
}

fn is_ring_label(key: &str) -> bool {
    key.starts_with(SHARD_LABEL_PREFIX) || key.starts_with(DRAIN_LABEL_PREFIX)
}

fn only_controller(mut refs: Vec<OwnerReference>) -> Vec<OwnerReference> {
    refs.retain(|r| r.controller == Some(true));
    refs
}

/// `metadata.labels`, only the ring labels kept: the others' values are skipped by the
/// decoder, never built (`null` is no labels).
fn ring_labels<'de, D: Deserializer<'de>>(deserializer: D) -> Result<LabelPairs, D::Error> {
    struct RingLabelsVisitor;

    impl<'de> Visitor<'de> for RingLabelsVisitor {
        type Value = LabelPairs;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map of label keys to values")
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }

        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_map(self)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut kept = Vec::new();
            while let Some(key) = map.next_key_seed(RingKey)? {
                match key {
                    Some(key) => {
                        let value: String = map.next_value()?;
                        kept.push((key, value.into_boxed_str()));
                    }
                    None => {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
            }
            Ok(kept)
        }
    }

    /// A label key, kept only if it is a ring label (read in place otherwise).
    struct RingKey;

    impl<'de> de::DeserializeSeed<'de> for RingKey {
        type Value = Option<Box<str>>;

        fn deserialize<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_str(self)
        }
    }

    impl Visitor<'_> for RingKey {
        type Value = Option<Box<str>>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a label key")
        }

        fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
            Ok(is_ring_label(key).then(|| Box::from(key)))
        }
    }

    deserializer.deserialize_option(RingLabelsVisitor)
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

    use std::collections::BTreeMap;

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
        let meta = &view.placement().full_metadata();
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
        // The labels are read beside the metadata, not in it.
        assert!(view.metadata().labels.is_none());
        let ring = RingLabels::new("cms");
        assert_eq!(view.placement().assigned(&ring), Some("a"));
        assert!(view.placement().draining(&ring));
        assert_eq!(view.placement().label("app"), None);
        assert!(!view.placement().draining(&RingLabels::new("other")));
        // The view of the decoded metadata is itself.
        assert_eq!(
            ShardView::<ConfigMap>::of(meta).placement(),
            view.placement()
        );
        // Round trip through its own encoding.
        let again: ShardView<ConfigMap> =
            serde_json::from_value(serde_json::to_value(&view).unwrap()).unwrap();
        assert_eq!(again.placement(), view.placement());
    }

    #[test]
    fn an_item_without_labels_or_owners_keeps_none() {
        let view: ShardView<ConfigMap> =
            serde_json::from_value(json!({"metadata": {"name": "x", "labels": {"app": "y"}}}))
                .unwrap();
        assert!(view.placement().full_metadata().labels.is_none());
        assert!(view.metadata().owner_references.is_none());
        let malformed =
            serde_json::from_value::<ShardView<ConfigMap>>(json!({"metadata": {"labels": 3}}));
        assert!(malformed.is_err());
    }
}
