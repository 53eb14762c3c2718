//! CBOR on the wire (KEP-4222; apimachinery `pkg/runtime/serializer/cbor/cbor.go`):
//! `application/cbor` bodies and `application/cbor-seq` watch streams, read and written
//! with ciborium through the same serde impls as JSON.
//!
//! A body is one CBOR data item, prefixed with the self-described tag 55799 (`0xd9 0xd9
//! 0xf7`, which the apimachinery encoder always writes and this module writes too); a
//! watch stream is a sequence of data items (RFC 8742), each a `WatchEvent` map `{type,
//! object}` with its own prefix. [`CborSeqDecoder`] splits a streamed body into items the
//! way [`LineDecoder`](super::LineDecoder) splits JSON lines, by reading the items' heads
//! (no decode) to find where each one ends.

use bytes::{Bytes, BytesMut};
use serde::{Serialize, de::DeserializeOwned};

use super::cbor_compat::CompatValue;

/// `application/cbor`.
pub const CBOR_MEDIA_TYPE: &str = "application/cbor";
/// `application/cbor-seq`: a watch stream of CBOR data items.
pub const CBOR_SEQ_MEDIA_TYPE: &str = "application/cbor-seq";
/// The self-described CBOR tag 55799 as it prefixes a body.
pub const SELF_DESCRIBED: [u8; 3] = [0xd9, 0xd9, 0xf7];

/// ciborium's buffer for one string (a longer one is read into an allocation of its own).
const SCRATCH: usize = 4096;

/// How deep a data item's arrays, maps and tags may nest (ciborium's own limit is 256;
/// apimachinery's decoder allows 64).
const MAX_DEPTH: usize = 256;

/// Why a CBOR body could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CborError {
    /// The bytes are not one well-formed CBOR data item.
    #[error("malformed CBOR at byte {0}")]
    Malformed(usize),
    /// Arrays, maps and tags nest deeper than the decoder allows.
    #[error("CBOR nested too deeply")]
    TooDeep,
    /// The data item does not have the shape the target type expects.
    #[error("decoding CBOR: {0}")]
    Decode(String),
    /// A value could not be written.
    #[error("encoding CBOR: {0}")]
    Encode(String),
}

/// Encodes `value` as one self-described CBOR data item.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CborError> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&SELF_DESCRIBED);
    ciborium::into_writer(value, &mut out).map_err(|e| CborError::Encode(e.to_string()))?;
    Ok(out)
}

/// `body` without its self-described prefix (ciborium reads a tag where a map is expected,
/// but hands it to `deserialize_any` callers as an enum).
fn untagged(body: &[u8]) -> &[u8] {
    body.strip_prefix(&SELF_DESCRIBED[..]).unwrap_or(body)
}

/// Decodes a `T` from one CBOR data item (the whole of `body`, prefix optional), reading
/// strings written as byte strings and tag-22 byte strings as kube-apiserver means them
/// (see `cbor_compat.rs`).
pub fn from_slice<T: DeserializeOwned>(body: &[u8]) -> Result<T, CborError> {
    let mut reader = untagged(body);
    let value =
        ciborium::de::from_reader_with_buffer::<CompatValue<T>, _>(&mut reader, &mut [0; SCRATCH])
            .map_err(|e| CborError::Decode(e.to_string()))?
            .0;
    if !reader.is_empty() {
        return Err(CborError::Malformed(body.len() - reader.len()));
    }
    Ok(value)
}

/// Whether a response's `Content-Type` is CBOR (`application/cbor`, or
/// `application/cbor-seq` for a watch).
pub(crate) fn is_cbor_content_type(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| ct.split(';').next().unwrap_or_default().trim())
        .is_some_and(|base| base == CBOR_MEDIA_TYPE || base == CBOR_SEQ_MEDIA_TYPE)
}

/// The length of the data item at the start of `buf`: `Ok(None)` when `buf` holds only
/// part of it.
pub fn item_len(buf: &[u8]) -> Result<Option<usize>, CborError> {
    let mut pos = 0;
    // Items still to read at each open level; `None` is an indefinite-length level,
    // ended by a break (0xff).
    let mut pending: Vec<Option<u64>> = vec![Some(1)];
    loop {
        match pending.last_mut() {
            None => return Ok(Some(pos)),
            Some(Some(0)) => {
                pending.pop();
                continue;
            }
            Some(Some(n)) => *n -= 1,
            Some(None) => {
                if buf.get(pos) == Some(&0xff) {
                    pos += 1;
                    pending.pop();
                    continue;
                }
            }
        }
        let Some(&initial) = buf.get(pos) else {
            return Ok(None);
        };
        let start = pos;
        pos += 1;
        let major = initial >> 5;
        let info = initial & 0x1f;
        let arg = match info {
            0..=23 => Some(u64::from(info)),
            24..=27 => {
                let width = 1usize << (info - 24);
                let Some(bytes) = buf.get(pos..pos + width) else {
                    return Ok(None);
                };
                pos += width;
                Some(bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
            }
            31 if matches!(major, 2..=5) => None,
            _ => return Err(CborError::Malformed(start)),
        };
        let nested = match (major, arg) {
            (0 | 1 | 7, _) => None,
            (2 | 3, Some(len)) => {
                let len = usize::try_from(len).map_err(|_| CborError::Malformed(start))?;
                pos = pos.checked_add(len).ok_or(CborError::Malformed(start))?;
                if pos > buf.len() {
                    return Ok(None);
                }
                None
            }
            // An indefinite-length string: definite chunks until a break.
            (2 | 3, None) => Some(None),
            (4, n) => Some(n),
            (5, n) => Some(n.map(|n| n.saturating_mul(2))),
            (6, _) => Some(Some(1)),
            _ => return Err(CborError::Malformed(start)),
        };
        if let Some(level) = nested {
            if pending.len() > MAX_DEPTH {
                return Err(CborError::TooDeep);
            }
            pending.push(level);
        }
    }
}

/// Splits a streamed `application/cbor-seq` body into its data items.
///
/// Items that lie whole inside one chunk are handed out as slices of it (no copy); only an
/// item split across chunks is assembled in the buffer.
#[derive(Debug, Default)]
pub struct CborSeqDecoder {
    buf: BytesMut,
}

impl CborSeqDecoder {
    /// A decoder with an empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a chunk and adds the items it completed to `items`. A malformed item ends
    /// the stream: there is no delimiter to resynchronise on.
    pub fn push_bytes(
        &mut self,
        chunk: Bytes,
        items: &mut impl Extend<Bytes>,
    ) -> Result<(), CborError> {
        let mut rest = if self.buf.is_empty() {
            chunk
        } else {
            self.buf.extend_from_slice(&chunk);
            self.buf.split().freeze()
        };
        while !rest.is_empty() {
            match item_len(&rest)? {
                Some(len) => items.extend([rest.split_to(len)]),
                None => break,
            }
        }
        self.buf.extend_from_slice(&rest);
        Ok(())
    }

    /// Ends the input: an error if part of an item is left.
    pub fn finish(&mut self) -> Result<(), CborError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            let at = self.buf.len();
            self.buf.clear();
            Err(CborError::Malformed(at))
        }
    }

    /// Bytes held while waiting for the end of an item.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn bodies_carry_the_self_described_tag_and_round_trip() {
        // cbor.go: "self-described CBOR tag" 0xd9d9f7 before every encoded object.
        let v = json!({"kind": "ConfigMap", "data": {"k": "v"}, "n": [1, -1, 1.5, null]});
        let body = to_vec(&v).unwrap();
        assert_eq!(&body[..3], &SELF_DESCRIBED);
        assert_eq!(from_slice::<Value>(&body).unwrap(), v);
        assert_eq!(
            from_slice::<Value>(&body[3..]).unwrap(),
            v,
            "prefix optional"
        );
        assert_eq!(item_len(&body).unwrap(), Some(body.len()));
        for cut in 0..body.len() {
            assert_eq!(item_len(&body[..cut]).unwrap(), None, "cut at {cut}");
        }
        let mut trailing = body.clone();
        trailing.push(0);
        assert!(matches!(
            from_slice::<Value>(&trailing),
            Err(CborError::Malformed(_))
        ));
    }

    #[test]
    fn a_sequence_split_anywhere_yields_its_items() {
        let events: Vec<Value> = (0..5)
            .map(|i| json!({"type": "ADDED", "object": {"i": i, "s": "x".repeat(i * 40)}}))
            .collect();
        let stream: Vec<u8> = events.iter().flat_map(|e| to_vec(e).unwrap()).collect();
        for step in [1, 7, 64, stream.len()] {
            let mut dec = CborSeqDecoder::new();
            let mut items = Vec::new();
            for chunk in stream.chunks(step) {
                dec.push_bytes(Bytes::copy_from_slice(chunk), &mut items)
                    .unwrap();
            }
            dec.finish().unwrap();
            let got: Vec<Value> = items.iter().map(|i| from_slice(i).unwrap()).collect();
            assert_eq!(got, events, "chunks of {step}");
        }
        // Indefinite-length map and string (other encoders may write them).
        let indefinite = [0xbf, 0x61, b'a', 0x7f, 0x61, b'b', 0xff, 0xff];
        assert_eq!(item_len(&indefinite).unwrap(), Some(indefinite.len()));
        assert!(matches!(item_len(&[0x1c]), Err(CborError::Malformed(0))));
        let mut dec = CborSeqDecoder::new();
        dec.push_bytes(Bytes::from_static(&[0xa1]), &mut Vec::new())
            .unwrap();
        assert!(dec.finish().is_err());
    }
}
