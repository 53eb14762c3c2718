//! Writes replies in the negotiated encoding and shape: objects, lists and watch streams as
//! JSON, YAML, protobuf or CBOR; Tables and PartialObjectMetadata through [`crate::endpoints::table`] and
//! [`crate::endpoints::metadata`].

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;

use super::{
    negotiate::{Encoding, Negotiated, Shape},
    table::IncludeObject,
    watch::WatchStream,
};
use crate::{
    engine::{Engine, ListResult},
    errors::{ApiError, ApiResult},
    registry::ResourceType,
};

/// A rendered body: status code, Content-Type and bytes.
#[derive(Debug)]
pub struct Rendered {
    /// HTTP status code.
    pub code: u16,
    /// Content-Type.
    pub content_type: &'static str,
    /// Body.
    pub body: Vec<u8>,
}

fn bytes_reply(code: u16, content_type: &'static str, body: Vec<u8>) -> Rendered {
    Rendered {
        code,
        content_type,
        body,
    }
}

fn encode(encoding: Encoding, v: &Value) -> ApiResult<Vec<u8>> {
    match encoding {
        Encoding::Json => serde_json::to_vec(v).map_err(|e| ApiError::internal(e.to_string())),
        Encoding::Yaml => serde_saphyr::to_string(v)
            .map(String::into_bytes)
            .map_err(|e| ApiError::internal(e.to_string())),
        Encoding::Protobuf => crate::protobuf::encode_object(v)
            .map_err(|e| ApiError::internal(format!("encoding protobuf: {e}"))),
        Encoding::Cbor => super::cbor::encode(v).map_err(|e| ApiError::internal(e.to_string())),
    }
}

/// Renders one object.
pub fn object(
    engine: &Engine,
    rt: &ResourceType,
    neg: Negotiated,
    include: IncludeObject,
    code: u16,
    obj: &Value,
) -> ApiResult<Rendered> {
    let shaped;
    let v = match neg.shape {
        Shape::Object => obj,
        Shape::Table(version) => {
            shaped = crate::endpoints::table::for_object(engine, rt, version, obj, include);
            &shaped
        }
        Shape::Metadata(version) => {
            shaped = crate::endpoints::metadata::partial(version, obj);
            &shaped
        }
    };
    Ok(bytes_reply(
        code,
        neg.encoding.content_type(),
        encode(neg.encoding, v)?,
    ))
}

/// Renders a list (plain JSON lists are written without building one `Value`).
pub fn list(
    engine: &Engine,
    rt: &ResourceType,
    neg: Negotiated,
    include: IncludeObject,
    list: &ListResult,
) -> ApiResult<Rendered> {
    if neg == Negotiated::JSON {
        return Ok(bytes_reply(200, "application/json", list.to_bytes()));
    }
    let v = match neg.shape {
        Shape::Object => serde_json::from_slice(&list.to_bytes())
            .map_err(|e| ApiError::internal(e.to_string()))?,
        Shape::Table(version) => {
            crate::endpoints::table::for_list(engine, rt, version, list, include)
        }
        Shape::Metadata(version) => crate::endpoints::metadata::partial_list(version, list),
    };
    Ok(bytes_reply(
        200,
        neg.encoding.content_type(),
        encode(neg.encoding, &v)?,
    ))
}

/// Re-encodes a stream of JSON watch lines into the negotiated encoding and shape.
pub fn watch(
    engine: &Arc<Engine>,
    rt: &Arc<ResourceType>,
    neg: Negotiated,
    include: IncludeObject,
    stream: WatchStream,
) -> (WatchStream, &'static str) {
    if neg == Negotiated::JSON {
        return (stream, "application/json");
    }
    let (engine, rt) = (engine.clone(), rt.clone());
    let mapped = stream.filter_map(move |line| {
        let out = reshape_event(&engine, &rt, neg, include, &line);
        if let Err(err) = &out {
            tracing::error!(%err, "re-encoding a watch event");
        }
        futures::future::ready(out.ok())
    });
    let content_type = match neg.encoding {
        Encoding::Protobuf => "application/vnd.kubernetes.protobuf;stream=watch",
        Encoding::Yaml => "application/yaml",
        Encoding::Json => "application/json",
        Encoding::Cbor => super::cbor::SEQ_MEDIA_TYPE,
    };
    (mapped.boxed(), content_type)
}

fn reshape_event(
    engine: &Engine,
    rt: &ResourceType,
    neg: Negotiated,
    include: IncludeObject,
    line: &[u8],
) -> ApiResult<Bytes> {
    let mut event: Value =
        serde_json::from_slice(line).map_err(|e| ApiError::internal(e.to_string()))?;
    let event_type = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let obj = event.get_mut("object").map(Value::take).unwrap_or_default();
    // ERROR events carry a Status and BOOKMARKs only a resourceVersion: not reshaped.
    let reshaped = match neg.shape {
        _ if event_type == "ERROR" => obj,
        Shape::Object => obj,
        Shape::Table(version) => {
            crate::endpoints::table::for_watch_event(engine, rt, version, &obj, include)
        }
        Shape::Metadata(version) => crate::endpoints::metadata::partial(version, &obj),
    };
    match neg.encoding {
        Encoding::Protobuf => crate::protobuf::watch_frame(&event_type, &reshaped)
            .map(Bytes::from)
            .map_err(|e| ApiError::internal(format!("encoding protobuf: {e}"))),
        Encoding::Cbor => super::cbor::watch_event(&event_type, &reshaped)
            .map(Bytes::from)
            .map_err(|e| ApiError::internal(e.to_string())),
        Encoding::Json | Encoding::Yaml => {
            Ok(crate::endpoints::watch::event_line(&event_type, &reshaped))
        }
    }
}
