//! kube-apiserver's CBOR read as the JSON data model it stands for.
//!
//! apimachinery's encoder (`cbor/internal/modes/encode.go`) writes Go strings and struct
//! field names as CBOR *byte* strings (`StringToByteString`, `FieldNameToByteString`) and
//! may wrap a `[]byte` in tag 22, "expected later base64" (`ByteSliceLaterFormatBase64`);
//! its decoder reads a byte string into a string and a tag-22 byte string as the base64
//! text JSON has (`ByteStringToStringAllowedWithExpectedLaterEncoding`). ciborium hands
//! byte strings only to `deserialize_bytes`, and a tag to `deserialize_any` callers as an
//! enum, so the k8s-openapi types (strings everywhere, `ByteString` read from base64 text)
//! would refuse such a body. [`Compat`] wraps the deserializer at every level: strings and
//! identifiers are read with `deserialize_any` and a byte string is handed on as a `str`
//! (UTF-8 checked), a tag-22 byte string as base64 text, any other tag as its content; the
//! deserializer reports itself human-readable, as JSON's does.

use std::fmt;

use base64::Engine as _;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

/// RFC 8949 3.4.5.2: the byte string is expected to be shown in base64.
const EXPECTED_BASE64: u64 = 22;

/// A `T` decoded through [`Compat`]: what [`super::cbor`] asks ciborium for.
pub(crate) struct CompatValue<T>(pub(crate) T);

impl<'de, T: de::Deserialize<'de>> de::Deserialize<'de> for CompatValue<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(Compat(d)).map(CompatValue)
    }
}

/// A deserializer whose strings may come as byte strings (see the module docs).
pub(crate) struct Compat<D>(pub(crate) D);

macro_rules! forward {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method(CompatVisitor::new(visitor))
            }
        )*
    };
}

macro_rules! as_any {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.deserialize_any(CompatVisitor::new(visitor))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Compat<D> {
    type Error = D::Error;

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit
        deserialize_seq deserialize_map deserialize_ignored_any
    }

    as_any! { deserialize_str deserialize_string deserialize_identifier }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_unit_struct(name, CompatVisitor::new(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_newtype_struct(name, CompatVisitor::new(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, CompatVisitor::new(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_tuple_struct(name, len, CompatVisitor::new(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_struct(name, fields, CompatVisitor::new(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = CompatVisitor {
            visitor,
            enum_is_tag: false,
        };
        self.0.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}

/// Hands every value on to `V`, byte strings as strings, nested deserializers wrapped.
struct CompatVisitor<V> {
    visitor: V,
    /// `visit_enum` means a tag (ciborium's `deserialize_any`), not a variant
    /// (`deserialize_enum`, a string for a unit variant).
    enum_is_tag: bool,
}

impl<V> CompatVisitor<V> {
    fn new(visitor: V) -> Self {
        Self {
            visitor,
            enum_is_tag: true,
        }
    }
}

macro_rules! visit {
    ($($method:ident($ty:ty))*) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
                self.visitor.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for CompatVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    visit! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_f64(f64) visit_char(char) visit_str(&str)
        visit_borrowed_str(&'de str) visit_string(String)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visitor.visit_str(s),
            Err(_) => self.visitor.visit_bytes(v),
        }
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visitor.visit_borrowed_str(s),
            Err(_) => self.visitor.visit_borrowed_bytes(v),
        }
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<V::Value, E> {
        match String::from_utf8(v) {
            Ok(s) => self.visitor.visit_string(s),
            Err(e) => self.visitor.visit_byte_buf(e.into_bytes()),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(Compat(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_newtype_struct(Compat(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(CompatSeq(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(CompatMap(map))
    }

    /// ciborium hands a tag to `deserialize_any` callers as an enum: its variant a marker
    /// string, its tuple content the tag number and then the tagged item.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        if !self.enum_is_tag {
            return self.visitor.visit_enum(data);
        }
        let (_, content) = data.variant::<de::IgnoredAny>()?;
        content.tuple_variant(2, TagVisitor(self.visitor))
    }
}

/// A tag's number and item: a tag-22 byte string as base64 text, any other item as itself.
struct TagVisitor<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for TagVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tagged CBOR item")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<V::Value, A::Error> {
        let tag: u64 = seq
            .next_element()?
            .ok_or_else(|| de::Error::custom("a tag without its number"))?;
        let value = if tag == EXPECTED_BASE64 {
            let bytes = seq
                .next_element_seed(RawBytes)?
                .ok_or_else(|| de::Error::custom("a tag without its item"))?;
            self.0
                .visit_string(base64::engine::general_purpose::STANDARD.encode(bytes))?
        } else {
            seq.next_element_seed(VisitorSeed(self.0))?
                .ok_or_else(|| de::Error::custom("a tag without its item"))?
        };
        Ok(value)
    }
}

/// A byte string's bytes, as they are.
struct RawBytes;

impl<'de> DeserializeSeed<'de> for RawBytes {
    type Value = Vec<u8>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_byte_buf(RawBytes)
    }
}

impl<'de> Visitor<'de> for RawBytes {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a byte string")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }
}

/// A tag's content handed to the visitor that asked for any value.
struct VisitorSeed<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for VisitorSeed<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        Compat(d).deserialize_any(self.0)
    }
}

/// A seed whose deserializer is wrapped.
struct CompatSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for CompatSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Compat(d))
    }
}

struct CompatSeq<A>(A);

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for CompatSeq<A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        self.0.next_element_seed(CompatSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct CompatMap<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CompatMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(CompatSeed(seed))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.0.next_value_seed(CompatSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::{ByteString, api::core::v1::ConfigMap};
    use serde_json::{Value, json};

    use super::super::cbor::from_slice;

    /// A ConfigMap as apimachinery's `modes.Encode` writes it: keys and strings as byte
    /// strings, `binaryData`'s bytes in tag 22, the self-described tag first.
    fn as_kube_apiserver_writes_it() -> Vec<u8> {
        use ciborium::Value as C;
        let b = |s: &str| C::Bytes(s.as_bytes().to_vec());
        let cm = C::Map(vec![
            (b("apiVersion"), b("v1")),
            (b("kind"), b("ConfigMap")),
            (
                b("metadata"),
                C::Map(vec![
                    (b("name"), b("c")),
                    (b("creationTimestamp"), b("2024-01-02T03:04:05Z")),
                ]),
            ),
            (b("data"), C::Map(vec![(b("k"), b("v"))])),
            (
                b("binaryData"),
                C::Map(vec![(
                    b("b"),
                    C::Tag(22, Box::new(C::Bytes(vec![0, 1, 2]))),
                )]),
            ),
        ]);
        let mut out = Vec::new();
        ciborium::into_writer(&C::Tag(55799, Box::new(cm)), &mut out).expect("encode");
        assert_eq!(&out[..3], &[0xd9, 0xd9, 0xf7]);
        out
    }

    #[test]
    fn byte_string_keys_and_strings_and_tag_22_read_as_json_would() {
        let body = as_kube_apiserver_writes_it();
        let cm: ConfigMap = from_slice(&body).expect("typed");
        assert_eq!(cm.metadata.name.as_deref(), Some("c"));
        assert!(cm.metadata.creation_timestamp.is_some());
        assert_eq!(
            cm.data,
            Some(BTreeMap::from([("k".to_owned(), "v".to_owned())]))
        );
        assert_eq!(
            cm.binary_data,
            Some(BTreeMap::from([(
                "b".to_owned(),
                ByteString(vec![0, 1, 2])
            )]))
        );
        let untyped: Value = from_slice(&body).expect("untyped");
        assert_eq!(untyped["binaryData"], json!({"b": "AAEC"}));
        assert_eq!(untyped["data"], json!({"k": "v"}));
    }

    #[test]
    fn watch_events_decode_as_kube_cores_adjacently_tagged_enum() {
        // serde reads the `type` of an adjacently tagged enum with `deserialize_enum`: a
        // variant, not a tag.
        let event = json!({"type": "ADDED", "object": {"metadata": {"name": "c"}}});
        let body = super::super::cbor::to_vec(&event).expect("encode");
        let decoded: kube_core::WatchEvent<ConfigMap> = from_slice(&body).expect("decode");
        match decoded {
            kube_core::WatchEvent::Added(cm) => assert_eq!(cm.metadata.name.as_deref(), Some("c")),
            other => panic!("unexpected {other:?}"),
        }
    }
}
