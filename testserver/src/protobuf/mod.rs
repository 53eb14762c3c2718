//! Kubernetes' protobuf encoding (API Concepts, "Protobuf encoding"; apimachinery
//! `pkg/runtime/serializer/protobuf`): the `k8s\0` envelope around a `runtime.Unknown`
//! (type meta, raw message bytes, content encoding and type), transcoded to and from the
//! server's JSON objects with the descriptor table, and the length-prefixed framing of
//! watch streams (`pkg/runtime/serializer/protobuf.LengthDelimitedFramer`,
//! `metav1.WatchEvent` with the object's envelope as its `RawExtension`).

pub mod descriptors;
pub mod transcode;
pub mod wire;

use serde_json::Value;

pub use descriptors::Descriptors;

/// The media type.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every protobuf-encoded object starts with.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// Why a protobuf body could not be read or an object not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// The body ends inside a field.
    #[error("truncated protobuf message")]
    Truncated,
    /// A varint longer than 10 bytes.
    #[error("malformed varint")]
    BadVarint,
    /// A field number beyond the protobuf range.
    #[error("malformed field key")]
    BadTag,
    /// A wire type Kubernetes messages never use (groups).
    #[error("unsupported wire type {0}")]
    WireType(u8),
    /// A string that is not UTF-8.
    #[error("string field is not UTF-8")]
    Utf8,
    /// A field whose wire or JSON type does not fit its declaration.
    #[error("field type mismatch: {0}")]
    Mismatch(String),
    /// An embedded JSON document (RawExtension, FieldsV1) that is not JSON.
    #[error("embedded JSON: {0}")]
    RawJson(String),
    /// A time outside the representable range.
    #[error("time: {0}")]
    Time(String),
    /// Messages nested deeper than any Kubernetes type.
    #[error("message nested too deeply")]
    TooDeep,
    /// The body does not start with `k8s\0`.
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    NoMagic,
    /// The envelope names a kind this server has no message for.
    #[error("no kind {kind:?} is registered for version {api_version:?}")]
    UnknownKind {
        /// `apiVersion` from the envelope.
        api_version: String,
        /// `kind` from the envelope.
        kind: String,
    },
    /// The envelope's payload is compressed or not protobuf.
    #[error("unsupported content encoding {0:?}")]
    ContentEncoding(String),
}

fn string_field(bytes: &[u8], tag: u32) -> Result<String, ProtoError> {
    let mut r = wire::Reader::new(bytes);
    let mut out = String::new();
    while let Some((t, p)) = r.field()? {
        if let (true, wire::Payload::Bytes(b)) = (t == tag, p) {
            out = String::from_utf8(b.to_vec()).map_err(|_| ProtoError::Utf8)?;
        }
    }
    Ok(out)
}

/// Whether `body` starts with the protobuf magic.
pub fn is_protobuf(body: &[u8]) -> bool {
    body.starts_with(MAGIC)
}

/// Decodes an enveloped object into its JSON form (with `apiVersion` and `kind` set from
/// the envelope's type meta).
pub fn decode_object(body: &[u8]) -> Result<Value, ProtoError> {
    let unknown = body.strip_prefix(MAGIC).ok_or(ProtoError::NoMagic)?;
    let (mut type_meta, mut raw, mut encoding) = (&[][..], &[][..], String::new());
    let mut r = wire::Reader::new(unknown);
    while let Some((tag, p)) = r.field()? {
        match (tag, p) {
            (1, wire::Payload::Bytes(b)) => type_meta = b,
            (2, wire::Payload::Bytes(b)) => raw = b,
            (3, wire::Payload::Bytes(b)) => {
                encoding = String::from_utf8(b.to_vec()).map_err(|_| ProtoError::Utf8)?
            }
            _ => {}
        }
    }
    if !encoding.is_empty() {
        return Err(ProtoError::ContentEncoding(encoding));
    }
    let api_version = string_field(type_meta, 1)?;
    let kind = string_field(type_meta, 2)?;
    let d = Descriptors::get();
    let msg = d
        .for_kind(&api_version, &kind)
        .ok_or_else(|| ProtoError::UnknownKind {
            api_version: api_version.clone(),
            kind: kind.clone(),
        })?;
    let mut v = transcode::decode(d, msg, raw)?;
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), Value::String(api_version));
        m.insert("kind".into(), Value::String(kind));
    }
    Ok(v)
}

/// Encodes an object (its `apiVersion` and `kind` pick the message) in the envelope.
pub fn encode_object(value: &Value) -> Result<Vec<u8>, ProtoError> {
    let s = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (s("apiVersion"), s("kind"));
    let d = Descriptors::get();
    let msg = d
        .for_kind(api_version, kind)
        .ok_or_else(|| ProtoError::UnknownKind {
            api_version: api_version.into(),
            kind: kind.into(),
        })?;
    let raw = transcode::encode(d, msg, value)?;
    let mut type_meta = Vec::new();
    wire::put_bytes(&mut type_meta, 1, api_version.as_bytes());
    wire::put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 16);
    out.extend_from_slice(MAGIC);
    wire::put_bytes(&mut out, 1, &type_meta);
    wire::put_bytes(&mut out, 2, &raw);
    wire::put_bytes(&mut out, 3, b"");
    wire::put_bytes(&mut out, 4, b"");
    Ok(out)
}

/// One watch event as a frame: a 4-byte big-endian length, then a `metav1.WatchEvent`
/// (no envelope) whose `object.raw` is the object in its envelope.
pub fn watch_frame(event_type: &str, object: &Value) -> Result<Vec<u8>, ProtoError> {
    let obj = encode_object(object)?;
    let mut raw_ext = Vec::new();
    wire::put_bytes(&mut raw_ext, 1, &obj);
    let mut event = Vec::new();
    wire::put_bytes(&mut event, 1, event_type.as_bytes());
    wire::put_bytes(&mut event, 2, &raw_ext);
    let len = u32::try_from(event.len()).map_err(|_| ProtoError::Truncated)?;
    let mut out = Vec::with_capacity(event.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&event);
    Ok(out)
}

/// Reads the frames of a protobuf watch stream back into `(type, object)` pairs (for tests
/// and in-process clients).
#[cfg(test)]
pub fn read_watch_frames(mut buf: &[u8]) -> Result<Vec<(String, Value)>, ProtoError> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let len = buf.get(..4).ok_or(ProtoError::Truncated)?;
        let n = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let frame = buf.get(4..4 + n).ok_or(ProtoError::Truncated)?;
        buf = &buf[4 + n..];
        let event_type = string_field(frame, 1)?;
        let mut r = wire::Reader::new(frame);
        let mut object = Value::Null;
        while let Some((tag, p)) = r.field()? {
            if let (2, wire::Payload::Bytes(ext)) = (tag, p) {
                let mut er = wire::Reader::new(ext);
                while let Some((t, ep)) = er.field()? {
                    if let (1, wire::Payload::Bytes(raw)) = (t, ep) {
                        object = decode_object(raw)?;
                    }
                }
            }
        }
        out.push((event_type, object));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelopes_and_watch_frames_round_trip() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "5"},
                        "data": {"k": "v"}, "binaryData": {"b": "AAE="}});
        let bytes = encode_object(&cm).expect("encode");
        assert!(is_protobuf(&bytes));
        assert_eq!(decode_object(&bytes).expect("decode"), cm);
        let frames = watch_frame("ADDED", &cm).expect("frame");
        assert_eq!(
            read_watch_frames(&frames).expect("read"),
            vec![("ADDED".to_string(), cm)]
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert_eq!(decode_object(b"{}"), Err(ProtoError::NoMagic));
        assert!(decode_object(b"k8s\0\x0a\xff").is_err());
    }
}
