//! AdmissionReview bodies: decoding a request (keeping its objects as raw JSON, which the
//! defaulter's patch is computed against) and building error answers.

use base64::Engine;
use kube_core::{
    DynamicObject, Status,
    admission::{AdmissionRequest, AdmissionResponse, AdmissionReview},
};
use serde_json::Value;

/// Why an AdmissionReview body could not be read; answered with a 400 in the review.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The body was empty.
    #[error("request body is empty")]
    Empty,
    /// The request was not `application/json`.
    #[error("contentType={0}, expected application/json")]
    ContentType(String),
    /// The body is not an AdmissionReview.
    #[error("couldn't decode the AdmissionReview: {0}")]
    Decode(#[source] serde_json::Error),
    /// The review carries no `request`.
    #[error("the AdmissionReview has no request")]
    NoRequest,
    /// The request's object (or old object) is missing or is not what the handler takes.
    #[error("couldn't decode the {field}: {message}")]
    Object {
        /// `object` or `oldObject`.
        field: &'static str,
        /// Why.
        message: String,
    },
}

/// A decoded admission request: the request without its objects, and the objects as the
/// API server sent them.
#[derive(Debug)]
pub(crate) struct Decoded {
    /// `object` and `old_object` are `None` here; see the fields below.
    pub(crate) request: AdmissionRequest<DynamicObject>,
    pub(crate) object: Option<Value>,
    pub(crate) old_object: Option<Value>,
}

impl Decoded {
    /// Decodes `field` (`object` or `oldObject`) as `T`.
    pub(crate) fn typed<T: serde::de::DeserializeOwned>(
        &self,
        field: &'static str,
    ) -> Result<T, ReviewError> {
        let raw = match field {
            "object" => self.object.as_ref(),
            _ => self.old_object.as_ref(),
        };
        let raw = raw.ok_or(ReviewError::Object {
            field,
            message: "there is no content to decode".into(),
        })?;
        T::deserialize(raw).map_err(|e| ReviewError::Object {
            field,
            message: e.to_string(),
        })
    }
}

/// Decodes an AdmissionReview body.
pub(crate) fn decode(body: &[u8]) -> Result<Decoded, ReviewError> {
    if body.is_empty() {
        return Err(ReviewError::Empty);
    }
    let mut value: Value = serde_json::from_slice(body).map_err(ReviewError::Decode)?;
    let Some(Value::Object(request)) = value.get_mut("request") else {
        return Err(ReviewError::NoRequest);
    };
    let mut take = |key: &str| request.remove(key).filter(|v| !v.is_null());
    let (object, old_object) = (take("object"), take("oldObject"));
    let review: AdmissionReview<DynamicObject> =
        serde_json::from_value(value).map_err(ReviewError::Decode)?;
    let request: AdmissionRequest<DynamicObject> =
        review.try_into().map_err(|_| ReviewError::NoRequest)?;
    Ok(Decoded {
        request,
        object,
        old_object,
    })
}

/// The request's uid, if `body` has one where a review keeps it (to echo it in an error
/// answer to a request that did not decode).
pub(crate) fn uid_of(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/request/uid")?.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        403 => "Forbidden",
        422 => "Invalid",
        500 => "InternalError",
        _ => "",
    }
}

/// An error answer to `request` (controller-runtime's `Errored`): not allowed, `code` and
/// `message` in the result.
pub(crate) fn errored(
    request: &AdmissionRequest<DynamicObject>,
    code: u16,
    message: impl Into<String>,
) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request);
    response.allowed = false;
    response.result = Status::failure(&message.into(), reason_for(code)).with_code(code);
    response
}

/// An error answer to a body that did not decode (admission.k8s.io/v1), with `uid`.
pub(crate) fn errored_undecoded(uid: String, code: u16, message: &str) -> AdmissionResponse {
    let mut response = AdmissionResponse::invalid(message);
    response.uid = uid;
    response.result = Status::failure(message, reason_for(code)).with_code(code);
    response
}

/// An allowed answer to `request` with code 200 (controller-runtime's `Allowed`).
pub(crate) fn allowed(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request);
    response.result.code = 200;
    response
}

/// The review that carries `response`, serialised. The patch goes out base64-encoded, as
/// Go encodes a `[]byte` (kube-core's `Vec<u8>` would be an array of numbers).
pub(crate) fn encode(response: AdmissionResponse) -> Vec<u8> {
    let mut review = match serde_json::to_value(response.into_review()) {
        Ok(review) => review,
        Err(error) => {
            // An AdmissionReview of plain data always serialises; keep the API server's
            // contract anyway.
            let fallback = errored_undecoded(String::new(), 500, &error.to_string());
            return serde_json::to_vec(&fallback.into_review()).unwrap_or_default();
        }
    };
    if let Some(patch) = review.pointer_mut("/response/patch")
        && let Some(bytes) = patch.as_array().map(|a| {
            a.iter()
                .filter_map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect::<Vec<u8>>()
        })
    {
        *patch = Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    serde_json::to_vec(&review).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},"name":"x","namespace":"default","operation":"CREATE","userInfo":{"username":"me"},"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","creationTimestamp":null},"data":{"a":"b"}},"oldObject":null,"dryRun":false}}"#;

    #[test]
    fn decode_keeps_the_raw_object() -> Result<(), ReviewError> {
        let decoded = decode(BODY.as_bytes())?;
        assert_eq!(decoded.request.uid, "u-1");
        assert!(decoded.request.object.is_none());
        assert!(decoded.old_object.is_none());
        let raw = decoded
            .object
            .as_ref()
            .and_then(|o| o.pointer("/metadata/creationTimestamp"));
        assert_eq!(raw, Some(&Value::Null), "raw JSON kept as sent");
        assert_eq!(decoded.request.types.api_version, "admission.k8s.io/v1");
        Ok(())
    }

    #[test]
    fn bad_bodies_are_errors() {
        assert!(matches!(decode(b""), Err(ReviewError::Empty)));
        assert!(matches!(decode(b"{"), Err(ReviewError::Decode(_))));
        assert!(matches!(
            decode(b"{\"kind\":\"AdmissionReview\"}"),
            Err(ReviewError::NoRequest)
        ));
        assert_eq!(uid_of(BODY.as_bytes()), "u-1");
        assert_eq!(uid_of(b"nonsense"), "");
    }

    #[test]
    fn errored_answer_echoes_uid_and_code() -> Result<(), ReviewError> {
        let decoded = decode(BODY.as_bytes())?;
        let response = errored(&decoded.request, 400, "bad");
        let v = serde_json::from_slice::<Value>(&encode(response)).map_err(ReviewError::Decode)?;
        assert_eq!(v["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(v["response"]["uid"], "u-1");
        assert_eq!(v["response"]["allowed"], false);
        assert_eq!(v["response"]["status"]["code"], 400);
        assert_eq!(v["response"]["status"]["message"], "bad");
        Ok(())
    }
}
