//! CBOR (KEP-4222; apimachinery `pkg/runtime/serializer/cbor/cbor.go` and
//! `cbor/internal/modes/{encode,decode}.go`): `application/cbor` bodies and replies and
//! `application/cbor-seq` watch streams, transcoded to and from the JSON values the server
//! works on.
//!
//! What the encoder writes: every body (and every watch event, each one CBOR data item of a
//! `cbor-seq` stream) starts with the self-described CBOR tag 55799 (`0xd9 0xd9 0xf7`), as
//! `cbor.go` prefixes it; map keys and strings are text strings. (kube-apiserver's
//! `modes.Encode` writes Go strings and field names as byte strings, which its decoder
//! reads as strings too; this server knows objects as JSON values, not Go types, and
//! writes the text form RFC 8949 gives strings.) What the decoder accepts, as
//! `modes.Decode` does for unstructured objects: text or byte strings as map keys and as
//! strings, a byte string in tag 22 ("expected later base64") as the base64 text JSON has
//! for a `[]byte`, the content of any other tag but the bignums (2, 3: rejected), no
//! duplicate map keys (`DupMapKeyEnforcedAPF`), no NaN or infinities.

use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Number, Value};

/// `application/cbor`.
pub const MEDIA_TYPE: &str = "application/cbor";
/// `application/cbor-seq`: a watch stream, one CBOR data item per event (RFC 8742).
pub const SEQ_MEDIA_TYPE: &str = "application/cbor-seq";
/// The self-described CBOR tag 55799 as the encoder prefixes it.
pub const SELF_DESCRIBED: [u8; 3] = [0xd9, 0xd9, 0xf7];

/// RFC 8949 3.4.5.2: the byte string is expected to be shown in base64.
const EXPECTED_BASE64: u64 = 22;

/// Why a CBOR body could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CborError {
    /// Not a well-formed CBOR data item (or more than one).
    #[error("malformed CBOR: {0}")]
    Malformed(String),
    /// A map key other than a (UTF-8) text or byte string.
    #[error("CBOR map keys must be strings")]
    NonTextKey,
    /// A map with the same key twice.
    #[error("duplicate CBOR map key {0:?}")]
    DuplicateKey(String),
    /// A bignum tag (2 or 3), which JSON numbers cannot hold.
    #[error("unsupported CBOR tag {0}")]
    Tag(u64),
    /// A number JSON cannot hold (NaN, infinities, integers beyond 64 bits).
    #[error("CBOR number out of range")]
    Number,
    /// A byte string read as a string holds invalid UTF-8.
    #[error("CBOR byte string is not UTF-8")]
    Utf8,
    /// The value could not be encoded.
    #[error("encoding CBOR: {0}")]
    Encode(String),
}

/// Encodes `value` as one self-described CBOR data item.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CborError> {
    let mut out = SELF_DESCRIBED.to_vec();
    ciborium::into_writer(value, &mut out).map_err(|e| CborError::Encode(e.to_string()))?;
    Ok(out)
}

/// One watch event, `{type, object}`, as a self-described CBOR data item.
pub fn watch_event(event_type: &str, object: &Value) -> Result<Vec<u8>, CborError> {
    #[derive(Serialize)]
    struct Event<'a> {
        #[serde(rename = "type")]
        event_type: &'a str,
        object: &'a Value,
    }
    encode(&Event { event_type, object })
}

/// Decodes one CBOR data item (the whole of `body`) into the JSON value it stands for.
pub fn decode(body: &[u8]) -> Result<Value, CborError> {
    let mut reader = body;
    let item: ciborium::Value =
        ciborium::from_reader(&mut reader).map_err(|e| CborError::Malformed(e.to_string()))?;
    if !reader.is_empty() {
        return Err(CborError::Malformed(format!(
            "{} bytes after the data item",
            reader.len()
        )));
    }
    to_json(item)
}

fn to_json(item: ciborium::Value) -> Result<Value, CborError> {
    use ciborium::Value as C;
    Ok(match item {
        C::Null => Value::Null,
        C::Bool(b) => Value::Bool(b),
        C::Text(s) => Value::String(s),
        C::Bytes(b) => Value::String(String::from_utf8(b).map_err(|_| CborError::Utf8)?),
        C::Tag(EXPECTED_BASE64, inner) if inner.is_bytes() => {
            let b = inner.into_bytes().unwrap_or_default();
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        C::Integer(i) => {
            let i = i128::from(i);
            if let Ok(n) = i64::try_from(i) {
                Value::Number(n.into())
            } else {
                Value::Number(u64::try_from(i).map_err(|_| CborError::Number)?.into())
            }
        }
        C::Float(f) => Value::Number(Number::from_f64(f).ok_or(CborError::Number)?),
        C::Tag(tag @ (2 | 3), _) => return Err(CborError::Tag(tag)),
        C::Tag(_, inner) => to_json(*inner)?,
        C::Array(items) => Value::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?),
        C::Map(pairs) => {
            let mut map = Map::with_capacity(pairs.len());
            for (k, v) in pairs {
                let key = match k {
                    C::Text(key) => key,
                    C::Bytes(b) => String::from_utf8(b).map_err(|_| CborError::Utf8)?,
                    _ => return Err(CborError::NonTextKey),
                };
                if map.contains_key(&key) {
                    return Err(CborError::DuplicateKey(key));
                }
                map.insert(key, to_json(v)?);
            }
            Value::Object(map)
        }
        _ => return Err(CborError::Malformed("unsupported simple value".into())),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_round_trip_with_the_self_described_tag() {
        let v = json!({"a": [1, -2, 2.5, "x", null, true], "b": {"c": u64::MAX}});
        let body = encode(&v).expect("encode");
        assert_eq!(
            &body[..3],
            &[0xd9, 0xd9, 0xf7],
            "cbor.go: self-described prefix"
        );
        // The first map header follows: text keys.
        assert_eq!(decode(&body).expect("decode"), v);
    }

    #[test]
    fn byte_strings_read_as_strings_and_bad_items_are_refused() {
        // modes/encode.go writes strings and field names as byte strings, []byte in tag 22.
        let mut body = Vec::new();
        let m = ciborium::Value::Map(vec![
            (
                ciborium::Value::Bytes(b"b".to_vec()),
                ciborium::Value::Tag(22, Box::new(ciborium::Value::Bytes(vec![0, 1, 2]))),
            ),
            (
                ciborium::Value::Text("s".into()),
                ciborium::Value::Bytes(b"text".to_vec()),
            ),
        ]);
        ciborium::into_writer(&m, &mut body).expect("encode");
        assert_eq!(
            decode(&body).expect("decode"),
            json!({"b": "AAEC", "s": "text"})
        );

        let int_key = ciborium::Value::Map(vec![(1.into(), 2.into())]);
        let mut body = Vec::new();
        ciborium::into_writer(&int_key, &mut body).expect("encode");
        assert!(matches!(decode(&body), Err(CborError::NonTextKey)));

        // {"a": 1, "a": 2}
        let dup = [0xa2, 0x61, b'a', 0x01, 0x61, b'a', 0x02];
        assert!(matches!(decode(&dup), Err(CborError::DuplicateKey(k)) if k == "a"));
        assert!(matches!(decode(&[0xa1]), Err(CborError::Malformed(_))));
        assert!(matches!(
            decode(&[0x01, 0x02]),
            Err(CborError::Malformed(_))
        ));
    }
}
