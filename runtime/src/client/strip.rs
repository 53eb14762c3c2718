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

use std::{cell::Cell, fmt, marker::PhantomData};

use kube_core::{ListMeta, ObjectList, TypeMeta, WatchEvent};

use super::cbor::{self, CborError};
use serde::{
    Deserialize, Deserializer,
    de::{
        self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor,
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

impl Strip {
    /// Decodes a list page (`ObjectList<T>`) from `json`, every item through `self`.
    /// `Strip::NONE` is kube-core's own decode.
    pub(crate) fn list_from_slice<T: DeserializeOwned + Clone>(
        self,
        json: &[u8],
    ) -> serde_json::Result<ObjectList<T>> {
        if self.is_none() {
            return serde_json::from_slice(json);
        }
        let mut de = serde_json::Deserializer::from_slice(json);
        let list = ListSeed::<T>::new(self).deserialize(&mut de)?;
        de.end()?;
        Ok(list)
    }

    /// Decodes a watch event (one line of a watch body) from `json`, its object through
    /// `self`. `Strip::NONE` is kube-core's own decode.
    ///
    /// The API server writes `type` before `object`. Should an event come the other way
    /// round, its object is skipped on a first pass that finds the type, and decoded on a
    /// second one that knows it (serde's own decode buffers the object instead, and reports
    /// an error in it with the same message, at the end of the type rather than in place).
    pub(crate) fn event_from_slice<T: DeserializeOwned>(
        self,
        json: &[u8],
    ) -> serde_json::Result<WatchEvent<T>> {
        if self.is_none() {
            return serde_json::from_slice(json);
        }
        let decode = |known| {
            let mut de = serde_json::Deserializer::from_slice(json);
            let event = EventSeed::<T>::new(self, known).deserialize(&mut de)?;
            de.end()?;
            Ok::<_, serde_json::Error>(event)
        };
        match decode(None)? {
            Decoded::Event(event) => Ok(event),
            Decoded::ObjectFirst(tag) => match decode(Some(tag))? {
                Decoded::Event(event) => Ok(event),
                // A seed that knows the type decodes the object where it finds it.
                Decoded::ObjectFirst(_) => Err(de::Error::custom("watch event without a type")),
            },
        }
    }
}

thread_local! {
    /// The strip (and, on a second pass, the known event type) of the CBOR decode running
    /// on this thread: ciborium's deserializer is reached only through `from_reader`, which
    /// takes a `DeserializeOwned` type rather than a seed, so the seed's state comes this
    /// way. Decoding is synchronous; [`with_cbor_seed`] restores the previous value.
    static CBOR_SEED: Cell<(Strip, Option<EventType>)> = const { Cell::new((Strip::NONE, None)) };
}

/// Runs `decode` with `seed` as the thread's CBOR seed.
fn with_cbor_seed<R>(seed: (Strip, Option<EventType>), decode: impl FnOnce() -> R) -> R {
    let previous = CBOR_SEED.with(|s| s.replace(seed));
    let out = decode();
    CBOR_SEED.with(|s| s.set(previous));
    out
}

/// A list page decoded through the thread's CBOR seed's [`ListSeed`].
struct CborList<T: Clone>(ObjectList<T>);

impl<'de, T: Deserialize<'de> + Clone> Deserialize<'de> for CborList<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (strip, _) = CBOR_SEED.with(Cell::get);
        ListSeed::<T>::new(strip).deserialize(d).map(CborList)
    }
}

/// A watch event decoded through the thread's CBOR seed's [`EventSeed`].
struct CborEvent<T>(Decoded<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for CborEvent<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (strip, known) = CBOR_SEED.with(Cell::get);
        EventSeed::<T>::new(strip, known)
            .deserialize(d)
            .map(CborEvent)
    }
}

impl Strip {
    /// [`Strip::list_from_slice`] for a CBOR body.
    pub(crate) fn list_from_cbor<T: DeserializeOwned + Clone>(
        self,
        body: &[u8],
    ) -> Result<ObjectList<T>, CborError> {
        if self.is_none() {
            return cbor::from_slice(body);
        }
        with_cbor_seed((self, None), || cbor::from_slice::<CborList<T>>(body)).map(|l| l.0)
    }

    /// [`Strip::event_from_slice`] for one CBOR data item of a watch stream.
    pub(crate) fn event_from_cbor<T: DeserializeOwned>(
        self,
        body: &[u8],
    ) -> Result<WatchEvent<T>, CborError> {
        if self.is_none() {
            return cbor::from_slice(body);
        }
        let decode = |known| {
            with_cbor_seed((self, known), || cbor::from_slice::<CborEvent<T>>(body)).map(|e| e.0)
        };
        match decode(None)? {
            Decoded::Event(event) => Ok(event),
            Decoded::ObjectFirst(tag) => match decode(Some(tag))? {
                Decoded::Event(event) => Ok(event),
                Decoded::ObjectFirst(_) => {
                    Err(CborError::Decode("watch event without a type".into()))
                }
            },
        }
    }
}

/// Decodes one object through a [`Strip`]: the items of a list, the object of an event.
struct ObjectSeed<T> {
    strip: Strip,
    object: PhantomData<fn() -> T>,
}

impl<T> ObjectSeed<T> {
    fn new(strip: Strip) -> Self {
        Self {
            strip,
            object: PhantomData,
        }
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for ObjectSeed<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        self.strip.deserialize_object(d)
    }
}

/// Decodes an `ObjectList<T>` as kube-core's derive does (`apiVersion` and `kind` default to
/// `v1` / `List` unless both are strings, `metadata` defaults, `items` is required and may
/// be null), its items through an [`ObjectSeed`].
struct ListSeed<T>(ObjectSeed<T>);

impl<T> ListSeed<T> {
    fn new(strip: Strip) -> Self {
        Self(ObjectSeed::new(strip))
    }
}

impl<'de, T: Deserialize<'de> + Clone> DeserializeSeed<'de> for ListSeed<T> {
    type Value = ObjectList<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

/// A key of a list.
enum ListKey {
    ApiVersion,
    Kind,
    Metadata,
    Items,
    Other,
}

impl<'de> Deserialize<'de> for ListKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let key = d.deserialize_str(KeyVisitor)?;
        Ok(match key.as_bytes() {
            b"apiVersion" => Self::ApiVersion,
            b"kind" => Self::Kind,
            b"metadata" => Self::Metadata,
            b"items" => Self::Items,
            _ => Self::Other,
        })
    }
}

/// `apiVersion` or `kind` of a list, as read so far: kube-core's derive takes both from
/// the keys it does not know and falls back to `v1` / `List` when either is missing, is
/// not a string, or comes twice.
enum TypeField {
    Missing,
    Read(String),
    Invalid,
}

impl TypeField {
    fn read(&mut self, value: serde_json::Value) {
        *self = match (&self, value) {
            (Self::Missing, serde_json::Value::String(s)) => Self::Read(s),
            _ => Self::Invalid,
        };
    }
}

impl<'de, T: Deserialize<'de> + Clone> Visitor<'de> for ListSeed<T> {
    type Value = ObjectList<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct ObjectList")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut api_version, mut kind) = (TypeField::Missing, TypeField::Missing);
        let mut metadata = None;
        let mut items = None;
        while let Some(key) = map.next_key::<ListKey>()? {
            match key {
                ListKey::ApiVersion => api_version.read(map.next_value()?),
                ListKey::Kind => kind.read(map.next_value()?),
                ListKey::Metadata if metadata.is_some() => {
                    return Err(de::Error::duplicate_field("metadata"));
                }
                ListKey::Metadata => metadata = Some(map.next_value::<ListMeta>()?),
                ListKey::Items if items.is_some() => {
                    return Err(de::Error::duplicate_field("items"));
                }
                ListKey::Items => {
                    items = Some(map.next_value_seed(ItemsSeed(ObjectSeed::new(self.0.strip)))?);
                }
                ListKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let types = match (api_version, kind) {
            (TypeField::Read(api_version), TypeField::Read(kind)) => TypeMeta { api_version, kind },
            _ => TypeMeta {
                api_version: "v1".to_owned(),
                kind: "List".to_owned(),
            },
        };
        Ok(ObjectList {
            types,
            metadata: metadata.unwrap_or_default(),
            items: items.ok_or_else(|| de::Error::missing_field("items"))?,
        })
    }
}

/// A list's `items`: null or a sequence of objects, each decoded through the seed.
struct ItemsSeed<T>(ObjectSeed<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for ItemsSeed<T> {
    type Value = Vec<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ItemsSeed<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("option")
    }

    fn visit_none<E: de::Error>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(Items(self.0))
    }
}

/// The sequence of a list's `items`.
struct Items<T>(ObjectSeed<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for Items<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ObjectSeed::new(self.0.strip))? {
            items.push(item);
        }
        Ok(items)
    }
}

/// The `type` of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

/// The event types, as the wire spells them (kube-core's `WatchEvent` variants, upper case).
const EVENT_TYPES: &[&str] = &["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"];

impl EventType {
    fn from_bytes(v: &[u8]) -> Option<Self> {
        Some(match v {
            b"ADDED" => Self::Added,
            b"MODIFIED" => Self::Modified,
            b"DELETED" => Self::Deleted,
            b"BOOKMARK" => Self::Bookmark,
            b"ERROR" => Self::Error,
            _ => return None,
        })
    }
}

/// Reads an event type as serde's derive reads a variant identifier.
impl<'de> Deserialize<'de> for EventType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_identifier(EventTypeVisitor)
    }
}

struct EventTypeVisitor;

impl<'de> Visitor<'de> for EventTypeVisitor {
    type Value = EventType;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("variant identifier")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<EventType, E> {
        const BY_INDEX: [EventType; 5] = [
            EventType::Added,
            EventType::Modified,
            EventType::Deleted,
            EventType::Bookmark,
            EventType::Error,
        ];
        usize::try_from(v)
            .ok()
            .and_then(|i| BY_INDEX.get(i).copied())
            .ok_or_else(|| {
                E::invalid_value(de::Unexpected::Unsigned(v), &"variant index 0 <= i < 5")
            })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<EventType, E> {
        EventType::from_bytes(v.as_bytes()).ok_or_else(|| E::unknown_variant(v, EVENT_TYPES))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<EventType, E> {
        EventType::from_bytes(v)
            .ok_or_else(|| E::unknown_variant(&String::from_utf8_lossy(v), EVENT_TYPES))
    }
}

/// The value of an event's `type` key, read as serde reads an adjacently tagged enum's tag
/// (a unit variant).
struct TagSeed;

impl<'de> DeserializeSeed<'de> for TagSeed {
    type Value = EventType;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EventType, D::Error> {
        d.deserialize_enum("WatchEvent", EVENT_TYPES, self)
    }
}

impl<'de> Visitor<'de> for TagSeed {
    type Value = EventType;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("variant of enum WatchEvent")
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<EventType, A::Error> {
        let (tag, variant) = data.variant::<EventType>()?;
        de::VariantAccess::unit_variant(variant)?;
        Ok(tag)
    }
}

/// A key of a watch event.
enum EventKey {
    Type,
    Object,
    Other,
}

impl<'de> Deserialize<'de> for EventKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let key = d.deserialize_str(KeyVisitor)?;
        Ok(match key.as_bytes() {
            b"type" => Self::Type,
            b"object" => Self::Object,
            _ => Self::Other,
        })
    }
}

/// The next `type` or `object` key of an event, other keys skipped with their values.
fn next_event_key<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<EventKey>, A::Error> {
    while let Some(key) = map.next_key::<EventKey>()? {
        match key {
            EventKey::Other => {
                map.next_value::<IgnoredAny>()?;
            }
            key => return Ok(Some(key)),
        }
    }
    Ok(None)
}

/// After an event's `type` and `object`: a second one of either is an error.
fn no_more_event_keys<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    match next_event_key(map)? {
        Some(EventKey::Type) => Err(de::Error::duplicate_field("type")),
        Some(EventKey::Object) => Err(de::Error::duplicate_field("object")),
        Some(EventKey::Other) | None => Ok(()),
    }
}

/// A map key as a string, borrowed when the input allows.
struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = std::borrow::Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.to_owned().into())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }
}

/// What [`EventSeed`] read: the event, or (on a first pass, when `object` came before
/// `type`) only the type.
enum Decoded<T> {
    Event(WatchEvent<T>),
    ObjectFirst(EventType),
}

/// Decodes a `WatchEvent<T>` as serde's derive decodes kube-core's adjacently tagged enum
/// (`type` then `object`, other keys skipped, the same errors), the object of an
/// `ADDED` / `MODIFIED` / `DELETED` event through an [`ObjectSeed`].
struct EventSeed<T> {
    object: ObjectSeed<T>,
    /// The event's type, when a first pass found it after the object.
    known: Option<EventType>,
}

impl<T> EventSeed<T> {
    fn new(strip: Strip, known: Option<EventType>) -> Self {
        Self {
            object: ObjectSeed::new(strip),
            known,
        }
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for EventSeed<T> {
    type Value = Decoded<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Decoded<T>, D::Error> {
        d.deserialize_struct("WatchEvent", &["type", "object"], self)
    }
}

/// An event's `object`, decoded as its type says.
struct ContentSeed<T> {
    object: ObjectSeed<T>,
    tag: EventType,
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for ContentSeed<T> {
    type Value = WatchEvent<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<WatchEvent<T>, D::Error> {
        Ok(match self.tag {
            EventType::Added => WatchEvent::Added(self.object.deserialize(d)?),
            EventType::Modified => WatchEvent::Modified(self.object.deserialize(d)?),
            EventType::Deleted => WatchEvent::Deleted(self.object.deserialize(d)?),
            EventType::Bookmark => WatchEvent::Bookmark(Deserialize::deserialize(d)?),
            EventType::Error => WatchEvent::Error(Deserialize::deserialize(d)?),
        })
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for EventSeed<T> {
    type Value = Decoded<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("adjacently tagged enum WatchEvent")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Decoded<T>, A::Error> {
        let object = self.object;
        match next_event_key(&mut map)? {
            Some(EventKey::Type) => {
                let tag = map.next_value_seed(TagSeed)?;
                match next_event_key(&mut map)? {
                    Some(EventKey::Object) => {
                        let event = map.next_value_seed(ContentSeed { object, tag })?;
                        no_more_event_keys(&mut map)?;
                        Ok(Decoded::Event(event))
                    }
                    Some(EventKey::Type) => Err(de::Error::duplicate_field("type")),
                    // Every event type carries an object.
                    Some(EventKey::Other) | None => Err(de::Error::missing_field("object")),
                }
            }
            Some(EventKey::Object) => {
                let event = match self.known {
                    Some(tag) => Some(map.next_value_seed(ContentSeed { object, tag })?),
                    None => {
                        map.next_value::<IgnoredAny>()?;
                        None
                    }
                };
                match next_event_key(&mut map)? {
                    Some(EventKey::Type) => {
                        let tag = map.next_value_seed(TagSeed)?;
                        match event {
                            Some(event) => {
                                no_more_event_keys(&mut map)?;
                                Ok(Decoded::Event(event))
                            }
                            None => {
                                // The second pass decodes the object, then checks the rest.
                                while map.next_key::<IgnoredAny>()?.is_some() {
                                    map.next_value::<IgnoredAny>()?;
                                }
                                Ok(Decoded::ObjectFirst(tag))
                            }
                        }
                    }
                    Some(EventKey::Object) => Err(de::Error::duplicate_field("object")),
                    Some(EventKey::Other) | None => Err(de::Error::missing_field("type")),
                }
            }
            Some(EventKey::Other) | None => Err(de::Error::missing_field("type")),
        }
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Decoded<T>, A::Error> {
        let Some(tag) = seq.next_element::<EventType>()? else {
            return Err(de::Error::invalid_length(0, &self));
        };
        let content = ContentSeed {
            object: ObjectSeed::new(self.object.strip),
            tag,
        };
        match seq.next_element_seed(content)? {
            Some(event) => Ok(Decoded::Event(event)),
            None => Err(de::Error::invalid_length(1, &self)),
        }
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
        let got: ObjectList<Pod> = Strip::MANAGED_FIELDS
            .list_from_slice(&bytes(&list))
            .unwrap();
        assert_eq!(got.items.len(), 2);
        assert_eq!(got.metadata.resource_version.as_deref(), Some("9"));
        assert_eq!(
            (got.types.api_version.as_str(), got.types.kind.as_str()),
            ("v1", "PodList")
        );
        assert!(
            got.items
                .iter()
                .all(|p| p.metadata.managed_fields.is_none())
        );

        let event = json!({"type": "MODIFIED", "object": pod()});
        let got: WatchEvent<Pod> = (Strip::MANAGED_FIELDS | Strip::LAST_APPLIED)
            .event_from_slice(&bytes(&event))
            .unwrap();
        let WatchEvent::Modified(p) = got else {
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

    /// Every event type decodes as kube-core's own decode does, and an object that comes
    /// before its type too (a second pass).
    #[test]
    fn every_event_type_decodes() {
        let strip = Strip::MANAGED_FIELDS;
        for (ty, order) in [("ADDED", 0), ("DELETED", 0), ("MODIFIED", 1)] {
            let line = if order == 0 {
                format!(r#"{{"type":"{ty}","x":1,"object":{}}}"#, pod())
            } else {
                format!(r#"{{"object":{},"x":[1],"type":"{ty}"}}"#, pod())
            };
            let got: WatchEvent<Pod> = strip.event_from_slice(line.as_bytes()).unwrap();
            let debug = format!("{got:?}").to_uppercase();
            assert_eq!(debug.split(' ').next(), Some(ty));
            let (WatchEvent::Added(p) | WatchEvent::Modified(p) | WatchEvent::Deleted(p)) = got
            else {
                panic!("{ty}: {debug}")
            };
            assert!(p.metadata.managed_fields.is_none());
            assert_eq!(p.metadata.name.as_deref(), Some("web-0"));
        }
        let bookmark = br#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}"#;
        let WatchEvent::Bookmark(b) = strip.event_from_slice::<Pod>(bookmark).unwrap() else {
            panic!("not a bookmark")
        };
        assert_eq!(b.metadata.resource_version, "12");
        let error = br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}"#;
        let WatchEvent::Error(status) = strip.event_from_slice::<Pod>(error).unwrap() else {
            panic!("not an error")
        };
        assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    }

    /// A malformed event or list fails as kube-core's own decode fails: the same typed
    /// error with the same message (and position), and what it accepts, it accepts too.
    #[test]
    fn malformed_events_and_lists_fail_as_the_whole_decodes() {
        let strip = Strip::MANAGED_FIELDS | Strip::LAST_APPLIED;
        let pod = pod().to_string();
        let mut bad_pod = self::pod();
        bad_pod["spec"]["nodeName"] = json!(5);
        let bad_pod = bad_pod.to_string();
        let events = [
            String::new(),
            "{".into(),
            "[]".into(),
            "5".into(),
            "{}".into(),
            r#"{"x":1}"#.into(),
            r#"{"type":"ADDED"}"#.into(),
            r#"{"type":"ADDED","x":1}"#.into(),
            r#"{"type":"SYNC","object":{}}"#.into(),
            r#"{"type":5,"object":{}}"#.into(),
            r#"{"type":null,"object":{}}"#.into(),
            r#"{"type":"ADDED","type":"ADDED","object":{}}"#.into(),
            format!(r#"{{"type":"ADDED","object":{pod},"type":"ADDED"}}"#),
            format!(r#"{{"type":"ADDED","object":{pod},"object":{pod}}}"#),
            format!(r#"{{"object":{pod},"object":{pod}}}"#),
            format!(r#"{{"object":{pod}}}"#),
            format!(r#"{{"object":{pod},"type":"GONE"}}"#),
            format!(r#"{{"type":"ADDED","object":{bad_pod}}}"#),
            format!(r#"{{"type":"ADDED","object":{pod}}} x"#),
            format!(r#"{{"type":"ADDED","object":{pod}"#),
            r#"{"type":"ADDED","object":[]}"#.into(),
            r#"{"type":"BOOKMARK","object":{"metadata":{}}}"#.into(),
            r#"{"type":"ERROR","object":{"code":"x"}}"#.into(),
            format!(r#"["ADDED",{pod}]"#),
            r#"["ADDED"]"#.into(),
            format!(r#"{{"type":"ADDED","object":{pod},"x":1}}"#),
        ];
        for line in &events {
            let whole = serde_json::from_str::<WatchEvent<Pod>>(line).map(|e| format!("{e:?}"));
            let got = strip
                .event_from_slice::<Pod>(line.as_bytes())
                .map(|e| format!("{e:?}"));
            assert_eq!(
                whole.map_err(|e| e.to_string()),
                got.map_err(|e| e.to_string()),
                "{line}"
            );
        }
        // An object before its type: serde's decode buffers it and reports its error where
        // the type ends; the second pass reports it where it is.
        let line = format!(r#"{{"object":{bad_pod},"type":"ADDED"}}"#);
        let message = |e: serde_json::Error| {
            let e = e.to_string();
            e.split(" at line").next().map(str::to_owned)
        };
        assert_eq!(
            serde_json::from_str::<WatchEvent<Pod>>(&line)
                .map_err(message)
                .err(),
            strip
                .event_from_slice::<Pod>(line.as_bytes())
                .map_err(message)
                .err(),
        );

        let lists = [
            "[]".to_owned(),
            "{}".into(),
            r#"{"items":null}"#.into(),
            r#"{"items":{}}"#.into(),
            r#"{"items":[5]}"#.into(),
            format!(r#"{{"items":[{pod},{bad_pod}]}}"#),
            format!(r#"{{"items":[{pod}],"items":[]}}"#),
            r#"{"metadata":{},"metadata":{},"items":[]}"#.into(),
            r#"{"metadata":null,"items":[]}"#.into(),
            r#"{"metadata":{"resourceVersion":5},"items":[]}"#.into(),
            r#"{"apiVersion":"v1","kind":"PodList","items":[]}"#.into(),
            r#"{"apiVersion":"v1","items":[]}"#.into(),
            r#"{"apiVersion":5,"kind":"PodList","items":[]}"#.into(),
            r#"{"apiVersion":"v1","kind":"A","kind":"B","items":[]}"#.into(),
            r#"{"items":[],"x":{"y":[1]}} z"#.into(),
        ];
        for body in &lists {
            let summary = |l: ObjectList<Pod>| {
                let names: Vec<_> = l.items.iter().map(|p| p.metadata.name.clone()).collect();
                format!("{:?} {:?} {names:?}", l.types, l.metadata)
            };
            let whole = serde_json::from_str::<ObjectList<Pod>>(body).map(summary);
            let got = strip.list_from_slice::<Pod>(body.as_bytes()).map(summary);
            assert_eq!(
                whole.map_err(|e| e.to_string()),
                got.map_err(|e| e.to_string()),
                "{body}"
            );
        }
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
