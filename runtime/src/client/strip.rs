//! [`Strip`]: fields of an object left out *while it is decoded*, so they are never built.
//!
//! client-go and kube-rs drop `metadata.managedFields` with a transform after the whole
//! object is decoded (controller-runtime's `cache.TransformStripManagedFields`, kube-rs's
//! `.modify(|o| o.managed_fields_mut().clear())`): every entry's `fieldsV1` tree is built
//! and then freed, and the peak holds it. kubernetes#118454 measured managedFields at about
//! 40% of an object. Here the decoder wraps serde's `Deserializer` one level at a time —
//! object → `metadata` → `annotations` — and skips the stripped keys with
//! `IgnoredAny`, which serde_json scans without allocating. Everything else is handed to
//! the object's own `Deserialize` untouched, so a stripped object is exactly what a
//! server would have sent without those fields.
//!
//! The wrapper reaches only the three levels it filters; below them (a Pod's `spec`, a
//! label's value) the object's decoder reads serde_json directly.

use std::fmt;

use kube_core::{ObjectList, WatchEvent};
use serde::{
    Deserialize, Deserializer,
    de::{
        self, DeserializeSeed, IgnoredAny, MapAccess, Visitor,
        value::{BorrowedStrDeserializer, StrDeserializer, StringDeserializer},
    },
};

/// The annotation `kubectl apply` writes (client-side apply's last applied configuration):
/// the whole object again, as JSON in a string.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Which parts of an object's metadata are skipped while decoding it.
///
/// `Strip::MANAGED_FIELDS` never stores `metadata.managedFields` (server-side apply's field
/// ownership, which a controller reading from a cache almost never needs);
/// `Strip::LAST_APPLIED` never stores the [`LAST_APPLIED_ANNOTATION`]. Both can be combined
/// with `|`. An informer given a `Strip` (through [`ListWatch::strip`](crate::cache::ListWatch::strip)
/// or the informer factory) caches objects without them. Writing a stripped object back
/// with a whole-object update is safe for managedFields (kube-apiserver keeps the live
/// object's managedFields when an update sends none: `fieldmanager`'s
/// `decodeLiveOrNew`), but an update would remove a stripped last-applied annotation:
/// write such objects with patches or server-side apply.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Strip(u8);

impl Strip {
    /// Nothing is skipped: objects are decoded whole.
    pub const NONE: Self = Self(0);
    /// `metadata.managedFields` is skipped.
    pub const MANAGED_FIELDS: Self = Self(1);
    /// The `kubectl.kubernetes.io/last-applied-configuration` annotation is skipped.
    pub const LAST_APPLIED: Self = Self(2);

    /// Whether nothing is skipped.
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }

    /// Whether every part `other` skips is skipped by `self` too.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Decodes a `T` (an object: its `metadata` is filtered) from `json`.
    pub fn from_slice<T: de::DeserializeOwned>(self, json: &[u8]) -> serde_json::Result<T> {
        let mut de = serde_json::Deserializer::from_slice(json);
        let value = self.deserialize_object(&mut de)?;
        de.end()?;
        Ok(value)
    }

    /// Decodes an object (a map whose `metadata` key is filtered) from `deserializer`.
    pub fn deserialize_object<'de, T, D>(self, deserializer: D) -> Result<T, D::Error>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        T::deserialize(Filter::new(deserializer, Node::Object(self)))
    }

    /// Decodes an `ObjectMeta` (or anything read from a `metadata` map) from `deserializer`,
    /// skipping what `self` names: for projections and other types that decode `metadata`
    /// themselves.
    pub fn deserialize_metadata<'de, T, D>(self, deserializer: D) -> Result<T, D::Error>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        T::deserialize(Filter::new(deserializer, Node::Metadata(self)))
    }
}

impl std::ops::BitOr for Strip {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl fmt::Debug for Strip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names = Vec::new();
        if self.contains(Self::MANAGED_FIELDS) {
            names.push("MANAGED_FIELDS");
        }
        if self.contains(Self::LAST_APPLIED) {
            names.push("LAST_APPLIED");
        }
        if names.is_empty() {
            names.push("NONE");
        }
        write!(f, "Strip({})", names.join(" | "))
    }
}

/// Where the filter stands: which keys of the map it is reading are skipped or descended.
#[derive(Clone, Copy, Debug)]
enum Node {
    /// An object: its `metadata` is filtered.
    Object(Strip),
    /// An object's `metadata`.
    Metadata(Strip),
    /// `metadata.annotations`, with the last-applied annotation skipped.
    Annotations,
}

/// What happens to one key of a filtered map.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Decoded as the object's own decoder asks, unfiltered.
    Keep,
    /// Decoded through the filter at this node.
    Into(Node),
    /// Skipped (the value is scanned, never built).
    Skip,
}

impl Node {
    fn step(self, key: &str) -> Step {
        match self {
            Self::Object(strip) if key == "metadata" && !strip.is_none() => {
                Step::Into(Self::Metadata(strip))
            }
            Self::Metadata(strip) => match key {
                "managedFields" if strip.contains(Strip::MANAGED_FIELDS) => Step::Skip,
                "annotations" if strip.contains(Strip::LAST_APPLIED) => {
                    Step::Into(Self::Annotations)
                }
                _ => Step::Keep,
            },
            Self::Annotations if key == LAST_APPLIED_ANNOTATION => Step::Skip,
            _ => Step::Keep,
        }
    }
}

/// A deserializer whose maps are filtered at `node`.
struct Filter<D> {
    inner: D,
    node: Node,
}

impl<D> Filter<D> {
    fn new(inner: D, node: Node) -> Self {
        Self { inner, node }
    }
}

/// Forwards `deserialize_*` methods to the inner deserializer with the visitor wrapped.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.inner.$method($($arg,)* Wrap { inner: visitor, node: self.node })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Filter<D> {
    type Error = D::Error;

    forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_ignored_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// A visitor whose maps (and the contents of options and newtypes) are filtered at `node`.
struct Wrap<V> {
    inner: V,
    node: Node,
}

/// Forwards `visit_*` methods of plain values to the inner visitor.
macro_rules! forward_visit {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visit! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Filter::new(d, self.node))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Filter::new(d, self.node))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(FilterMap {
            inner: map,
            node: self.node,
            next: Step::Keep,
        })
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(data)
    }
}

/// A map whose keys are looked up at `node`: skipped keys never reach the visitor, and
/// the values of descended keys are filtered one level down.
struct FilterMap<A> {
    inner: A,
    node: Node,
    /// What to do with the value of the key returned last.
    next: Step,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for FilterMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut seed = seed;
        loop {
            let key = KeySeed {
                seed,
                node: self.node,
            };
            match self.inner.next_key_seed(key)? {
                None => return Ok(None),
                Some(Key::Read(value, step)) => {
                    self.next = step;
                    return Ok(Some(value));
                }
                Some(Key::Skipped(back)) => {
                    self.inner.next_value::<IgnoredAny>()?;
                    seed = back;
                }
            }
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match std::mem::replace(&mut self.next, Step::Keep) {
            Step::Into(node) => self.inner.next_value_seed(FilterSeed { seed, node }),
            Step::Keep | Step::Skip => self.inner.next_value_seed(seed),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A key read through [`KeySeed`]: decoded by the visitor's seed (and what to do with its
/// value), or skipped, with the seed handed back for the next key.
enum Key<T, S> {
    Read(T, Step),
    Skipped(S),
}

/// Reads one key as a string, decides its [`Step`], and only then lets the visitor's seed
/// decode it (from the same borrowed string: no copy).
struct KeySeed<S> {
    seed: S,
    node: Node,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<S> {
    type Value = Key<S::Value, S>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for KeySeed<S> {
    type Value = Key<S::Value, S>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        match self.node.step(v) {
            Step::Skip => Ok(Key::Skipped(self.seed)),
            step => Ok(Key::Read(
                self.seed.deserialize(BorrowedStrDeserializer::new(v))?,
                step,
            )),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        match self.node.step(v) {
            Step::Skip => Ok(Key::Skipped(self.seed)),
            step => Ok(Key::Read(
                self.seed.deserialize(StrDeserializer::new(v))?,
                step,
            )),
        }
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        match self.node.step(&v) {
            Step::Skip => Ok(Key::Skipped(self.seed)),
            step => Ok(Key::Read(
                self.seed.deserialize(StringDeserializer::new(v))?,
                step,
            )),
        }
    }
}

/// Decodes a map value through the filter at `node`.
struct FilterSeed<S> {
    seed: S,
    node: Node,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for FilterSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Filter::new(d, self.node))
    }
}

/// An object decoded with the `Strip` whose bits are `BITS`: how lists and watch events
/// of stripped objects are decoded (kube-core's `ObjectList` and `WatchEvent` decode their
/// items with the item type's own `Deserialize`).
#[derive(Clone, Debug)]
pub(crate) struct Stripped<K, const BITS: u8>(pub(crate) K);

impl<'de, K: Deserialize<'de>, const BITS: u8> Deserialize<'de> for Stripped<K, BITS> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Strip(BITS).deserialize_object(d).map(Self)
    }
}

impl<K: Clone, const BITS: u8> Stripped<K, BITS> {
    /// The list's objects, unwrapped.
    pub(crate) fn list(list: ObjectList<Self>) -> ObjectList<K> {
        ObjectList {
            types: list.types,
            metadata: list.metadata,
            items: list.items.into_iter().map(|s| s.0).collect(),
        }
    }

    /// The event's object, unwrapped.
    pub(crate) fn event(event: WatchEvent<Self>) -> WatchEvent<K> {
        match event {
            WatchEvent::Added(s) => WatchEvent::Added(s.0),
            WatchEvent::Modified(s) => WatchEvent::Modified(s.0),
            WatchEvent::Deleted(s) => WatchEvent::Deleted(s.0),
            WatchEvent::Bookmark(b) => WatchEvent::Bookmark(b),
            WatchEvent::Error(e) => WatchEvent::Error(e),
        }
    }
}

impl Strip {
    /// The bits, for choosing a [`Stripped`] instantiation.
    pub(crate) const fn bits(self) -> u8 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Pod};
    use kube_core::{DynamicObject, PartialObjectMeta};
    use serde_json::json;

    fn pod() -> serde_json::Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web-0",
                "namespace": "prod",
                "labels": {"app": "web"},
                "annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": "{\"big\":true}",
                    "team": "a"
                },
                "managedFields": [{
                    "manager": "kubectl",
                    "operation": "Apply",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}
                }],
                "resourceVersion": "7"
            },
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Running"}
        })
    }

    fn bytes(v: &serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(v).unwrap()
    }

    #[test]
    fn none_decodes_the_whole_object() {
        let whole: Pod = serde_json::from_value(pod()).unwrap();
        let none: Pod = Strip::NONE.from_slice(&bytes(&pod())).unwrap();
        assert_eq!(whole, none);
    }

    #[test]
    fn managed_fields_are_skipped_and_nothing_else_changes() {
        let mut expected: Pod = serde_json::from_value(pod()).unwrap();
        expected.metadata.managed_fields = None;
        let got: Pod = Strip::MANAGED_FIELDS.from_slice(&bytes(&pod())).unwrap();
        assert_eq!(got, expected);
    }

    #[test]
    fn the_last_applied_annotation_is_skipped_and_others_kept() {
        let got: Pod = Strip::LAST_APPLIED.from_slice(&bytes(&pod())).unwrap();
        let annotations = got.metadata.annotations.unwrap();
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations["team"], "a");
        assert!(got.metadata.managed_fields.is_some());
        let both: Pod = (Strip::LAST_APPLIED | Strip::MANAGED_FIELDS)
            .from_slice(&bytes(&pod()))
            .unwrap();
        assert!(both.metadata.managed_fields.is_none());
        assert_eq!(both.metadata.annotations.unwrap().len(), 1);
    }

    /// The skipped value is scanned, never decoded: a managedFields of the wrong type (which
    /// the whole decode refuses) is no error once stripped.
    #[test]
    fn a_skipped_field_is_never_decoded() {
        let mut v = pod();
        v["metadata"]["managedFields"] = json!({"not": "a list"});
        assert!(serde_json::from_value::<Pod>(v.clone()).is_err());
        let got: Pod = Strip::MANAGED_FIELDS.from_slice(&bytes(&v)).unwrap();
        assert_eq!(got.metadata.name.as_deref(), Some("web-0"));
    }

    /// Only the metadata map is filtered: a `managedFields` key elsewhere (a ConfigMap's
    /// data) is data, and stays.
    #[test]
    fn keys_outside_metadata_are_untouched() {
        let cm = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "managedFields": []},
            "data": {"managedFields": "x", "kubectl.kubernetes.io/last-applied-configuration": "y"}
        });
        let got: ConfigMap = (Strip::MANAGED_FIELDS | Strip::LAST_APPLIED)
            .from_slice(&bytes(&cm))
            .unwrap();
        assert_eq!(got.data.unwrap().len(), 2);
        assert!(got.metadata.managed_fields.is_none());
    }

    #[test]
    fn lists_watch_events_dynamic_and_partial_objects_are_stripped() {
        let list = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "9"},
                          "items": [pod(), pod()]});
        let got: ObjectList<Stripped<Pod, 1>> = serde_json::from_value(list).unwrap();
        let got = Stripped::list(got);
        assert_eq!(got.items.len(), 2);
        assert!(
            got.items
                .iter()
                .all(|p| p.metadata.managed_fields.is_none())
        );

        let event = json!({"type": "MODIFIED", "object": pod()});
        let got: WatchEvent<Stripped<Pod, 3>> = serde_json::from_value(event).unwrap();
        let WatchEvent::Modified(p) = Stripped::event(got) else {
            panic!("not a modification")
        };
        assert!(p.metadata.managed_fields.is_none());
        assert_eq!(p.metadata.annotations.unwrap().len(), 1);

        let dynamic: DynamicObject = Strip::MANAGED_FIELDS.from_slice(&bytes(&pod())).unwrap();
        assert!(dynamic.metadata.managed_fields.is_none());
        assert_eq!(dynamic.data["spec"]["nodeName"], "n1");
        let partial: PartialObjectMeta<Pod> =
            Strip::MANAGED_FIELDS.from_slice(&bytes(&pod())).unwrap();
        assert!(partial.metadata.managed_fields.is_none());
    }

    /// A field of the wrong type elsewhere fails as the whole decode fails: the same typed
    /// error, with the same message.
    #[test]
    fn other_errors_are_the_whole_decodes() {
        let mut v = pod();
        v["spec"]["nodeName"] = json!(5);
        let whole = serde_json::from_slice::<Pod>(&bytes(&v)).unwrap_err();
        let stripped = Strip::MANAGED_FIELDS
            .from_slice::<Pod>(&bytes(&v))
            .unwrap_err();
        assert_eq!(whole.to_string(), stripped.to_string());
    }

    #[test]
    fn debug_names_the_parts() {
        assert_eq!(format!("{:?}", Strip::NONE), "Strip(NONE)");
        assert_eq!(
            format!("{:?}", Strip::MANAGED_FIELDS | Strip::LAST_APPLIED),
            "Strip(MANAGED_FIELDS | LAST_APPLIED)"
        );
    }
}
