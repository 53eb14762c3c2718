//! Replies: a complete body or a watch stream, with a content type and status code; a
//! `Status` body for errors (kube-apiserver's `responsewriters.ErrorNegotiated`) and
//! `Warning` headers (`filters/warning.go`).

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;

use super::{aggregated_discovery, render::Rendered, watch::WatchStream};
use crate::{engine::Warnings, errors::ApiError, registry::ResourceType};

/// A reply body: complete, or a stream of watch events.
pub(crate) enum ReplyBody {
    /// The whole body.
    Full(Bytes),
    /// A chunked stream (watch).
    Stream(WatchStream),
}

impl std::fmt::Debug for ReplyBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplyBody::Full(b) => write!(f, "Full({} bytes)", b.len()),
            ReplyBody::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

/// A reply.
pub(crate) type Reply = http::Response<ReplyBody>;

/// A complete reply of `content_type`.
fn full(code: u16, content_type: &'static str, body: Vec<u8>) -> Reply {
    let mut resp = http::Response::new(ReplyBody::Full(Bytes::from(body)));
    *resp.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// `v` as a JSON reply.
pub(crate) fn json(code: u16, v: &Value) -> Reply {
    full(
        code,
        "application/json",
        serde_json::to_vec(v).unwrap_or_default(),
    )
}

/// An encoded object, list or table.
pub(crate) fn rendered(r: Rendered) -> Reply {
    full(r.code, r.content_type, r.body)
}

/// An aggregated discovery document.
pub(crate) fn aggregated(v: &Value) -> Reply {
    full(
        200,
        aggregated_discovery::MEDIA_TYPE,
        serde_json::to_vec(v).unwrap_or_default(),
    )
}

/// A watch's event stream.
pub(crate) fn stream(stream: WatchStream, content_type: &'static str) -> Reply {
    let mut resp = http::Response::new(ReplyBody::Stream(stream));
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    resp
}

/// Renders an error as a Status reply (with `Retry-After` when set).
pub(crate) fn error(err: &ApiError) -> Reply {
    let mut resp = json(err.code, &err.to_status());
    if let Some(secs) = err.details.retry_after_seconds
        && let Ok(v) = HeaderValue::from_str(&secs.to_string())
    {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

/// One `Warning: 299 - "<text>"` header per warning (apiserver `filters/warning.go`,
/// `net.NewWarningHeader`: agent `-`, the text quoted with `"` and `\` escaped).
pub(crate) fn with_warnings(mut reply: Reply, warnings: &Warnings) -> Reply {
    for w in warnings.take() {
        let quoted = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{quoted}\"")) {
            reply.headers_mut().append(header::WARNING, v);
        }
    }
    reply
}

/// The `Status` a completed DELETE answers with (`details` name the object).
pub(crate) fn deleted_status(rt: &ResourceType, obj: &Value) -> Value {
    let mut details = serde_json::json!({
        "name": crate::meta::name(obj),
        "kind": rt.plural,
        "uid": crate::meta::uid(obj),
    });
    if !rt.group.is_empty()
        && let Some(d) = details.as_object_mut()
    {
        d.insert("group".into(), Value::String(rt.group.clone()));
    }
    serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_a_status_with_retry_after() {
        let reply = error(&ApiError::injected(429, Some(3)));
        assert_eq!(reply.status(), 429);
        assert_eq!(reply.headers()[header::RETRY_AFTER], "3");
        assert_eq!(reply.headers()[header::CONTENT_TYPE], "application/json");
        let ReplyBody::Full(body) = reply.into_body() else {
            panic!("a full body");
        };
        let status: Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(
            (status["kind"].as_str(), status["code"].as_u64()),
            (Some("Status"), Some(429))
        );
    }

    #[test]
    fn warnings_are_quoted_299_headers() {
        let warnings = Warnings::default();
        warnings.add("a \"b\"".into());
        let reply = with_warnings(json(200, &Value::Null), &warnings);
        assert_eq!(reply.headers()[header::WARNING], "299 - \"a \\\"b\\\"\"");
    }
}
