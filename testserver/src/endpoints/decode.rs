//! The decode step of a write: a request body read by its `Content-Type` (JSON, YAML, CBOR,
//! or protobuf for built-in kinds), as kube-apiserver's handlers decode with the negotiated
//! serializer before admission.

use http::header;
use serde_json::Value;

use super::negotiate::{self, Encoding};
use crate::{
    engine::WriteOptions,
    errors::{ApiError, ApiResult},
    schema::parse_with_duplicates,
};

/// The request's `Content-Type`, if readable.
pub(crate) fn content_type(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
}

/// [`body`] of a write's object, recording a JSON body's duplicate fields (which vanish
/// once parsed) for `fieldValidation`.
pub(crate) fn object(
    headers: &http::HeaderMap,
    body: &[u8],
    builtin: bool,
    opts: &mut WriteOptions,
) -> ApiResult<Value> {
    if negotiate::body_encoding(content_type(headers))? == Encoding::Json {
        let (value, dups) = parse_with_duplicates(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding JSON body: {e}")))?;
        opts.fields.duplicates = dups;
        return Ok(value);
    }
    self::body(headers, body, builtin)
}

/// Decodes a request body by its Content-Type: JSON, YAML, CBOR, or (built-in kinds only, as
/// apiextensions-apiserver serves custom resources in JSON, YAML and CBOR) protobuf.
pub(crate) fn body(headers: &http::HeaderMap, body: &[u8], builtin: bool) -> ApiResult<Value> {
    match negotiate::body_encoding(content_type(headers))? {
        Encoding::Json => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding JSON body: {e}"))),
        Encoding::Yaml => {
            let text = std::str::from_utf8(body)
                .map_err(|_| ApiError::bad_request("body is not UTF-8"))?;
            serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML body: {e}")))
        }
        Encoding::Protobuf if !builtin => Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
        )),
        Encoding::Protobuf => crate::protobuf::decode_object(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding protobuf body: {e}"))),
        Encoding::Cbor => super::cbor::decode(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding CBOR body: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(content_type: &str) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_str(content_type).expect("header"),
        );
        h
    }

    #[test]
    fn json_yaml_and_protobuf_only_for_builtins() {
        let json = body(&headers("application/json"), br#"{"a":1}"#, false);
        assert_eq!(json.ok(), Some(serde_json::json!({"a": 1})));
        let yaml = body(&headers("application/yaml"), b"a: 1\n", false);
        assert_eq!(yaml.ok(), Some(serde_json::json!({"a": 1})));
        let pb = body(
            &headers("application/vnd.kubernetes.protobuf"),
            b"k8s\0",
            false,
        );
        assert_eq!(pb.map_err(|e| e.code).err(), Some(415));
        let cbor = body(
            &headers("application/cbor"),
            b"\xd9\xd9\xf7\xa1\x61a\x01",
            false,
        );
        assert_eq!(cbor.ok(), Some(serde_json::json!({"a": 1})));
    }

    #[test]
    fn an_object_records_duplicate_fields() {
        let mut opts = WriteOptions::default();
        let v = object(
            &headers("application/json"),
            br#"{"a":1,"a":2}"#,
            true,
            &mut opts,
        );
        assert!(v.is_ok());
        assert!(!opts.fields.duplicates.is_empty());
    }
}
