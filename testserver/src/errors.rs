//! API errors as kube-apiserver reports them: a `metav1.Status` body with a reason and code.

use serde_json::{Value, json};

/// The `reason` of a failure `Status` (metav1.StatusReason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// 404: the object or resource does not exist.
    NotFound,
    /// 409: an object with that name exists.
    AlreadyExists,
    /// 409: the resourceVersion precondition failed.
    Conflict,
    /// 422: the object failed validation.
    Invalid,
    /// 400: the request could not be understood.
    BadRequest,
    /// 405: the verb is not supported on this resource.
    MethodNotAllowed,
    /// 410: the requested resourceVersion is no longer available (watch).
    Gone,
    /// 410: the continue token or resourceVersion expired (list).
    Expired,
    /// 406: no media type in Accept can be served.
    NotAcceptable,
    /// 415: the content type is not supported here.
    UnsupportedMediaType,
    /// 429: come back later.
    TooManyRequests,
    /// 401: missing or wrong credentials.
    Unauthorized,
    /// 403: the request is not allowed.
    Forbidden,
    /// 500: something went wrong inside the server.
    InternalError,
    /// 503: the server cannot serve now.
    ServiceUnavailable,
    /// 504: the request timed out.
    Timeout,
}

impl Reason {
    /// The reason string used in `Status.reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NotFound => "NotFound",
            Reason::AlreadyExists => "AlreadyExists",
            Reason::Conflict => "Conflict",
            Reason::Invalid => "Invalid",
            Reason::BadRequest => "BadRequest",
            Reason::MethodNotAllowed => "MethodNotAllowed",
            Reason::Gone => "Gone",
            Reason::Expired => "Expired",
            Reason::NotAcceptable => "NotAcceptable",
            Reason::UnsupportedMediaType => "UnsupportedMediaType",
            Reason::TooManyRequests => "TooManyRequests",
            Reason::Unauthorized => "Unauthorized",
            Reason::Forbidden => "Forbidden",
            Reason::InternalError => "InternalError",
            Reason::ServiceUnavailable => "ServiceUnavailable",
            Reason::Timeout => "Timeout",
        }
    }

    /// The reason a bare HTTP code maps to (used by fault injection).
    pub fn for_code(code: u16) -> Reason {
        match code {
            400 => Reason::BadRequest,
            401 => Reason::Unauthorized,
            403 => Reason::Forbidden,
            404 => Reason::NotFound,
            405 => Reason::MethodNotAllowed,
            409 => Reason::Conflict,
            410 => Reason::Gone,
            406 => Reason::NotAcceptable,
            415 => Reason::UnsupportedMediaType,
            422 => Reason::Invalid,
            429 => Reason::TooManyRequests,
            503 => Reason::ServiceUnavailable,
            504 => Reason::Timeout,
            _ => Reason::InternalError,
        }
    }
}

/// One field-level cause inside an `Invalid` status (`details.causes[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueInvalid`, `FieldValueRequired`, ...
    pub reason: String,
    /// Human readable explanation.
    pub message: String,
    /// The JSON path of the field, e.g. `metadata.name`.
    pub field: String,
}

impl Cause {
    /// A `FieldValueInvalid` cause.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Cause {
            reason: "FieldValueInvalid".into(),
            message: message.into(),
            field: field.into(),
        }
    }

    /// A `FieldValueRequired` cause.
    pub fn required(field: &str) -> Self {
        Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: field.into(),
        }
    }
}

/// A failed API call: turns into a `metav1.Status` body with `code` as the HTTP status.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code} {}: {message}", reason.as_str())]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// Machine-readable reason.
    pub reason: Reason,
    /// Human readable message.
    pub message: String,
    /// `details` of the Status (boxed: errors travel through many `Result`s).
    pub details: Box<Details>,
}

/// The `details` of a failure Status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Details {
    /// `details.name`.
    pub name: Option<String>,
    /// `details.group`.
    pub group: Option<String>,
    /// `details.kind` (the resource's plural for most errors, like kube-apiserver).
    pub kind: Option<String>,
    /// `details.causes`.
    pub causes: Vec<Cause>,
    /// `details.retryAfterSeconds` and the `Retry-After` header.
    pub retry_after_seconds: Option<u32>,
}

/// Result alias for engine operations.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A bare error with a code, reason and message.
    pub fn new(code: u16, reason: Reason, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: Box::default(),
        }
    }

    fn with_details(mut self, group: &str, resource: &str, name: &str) -> Self {
        self.details.group = Some(group.to_string());
        self.details.kind = Some(resource.to_string());
        self.details.name = Some(name.to_string());
        self
    }

    /// `<resource>.<group> "name" not found`.
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        ApiError::new(
            404,
            Reason::NotFound,
            format!("{} \"{name}\" not found", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// `<resource>.<group> "name" already exists`.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        ApiError::new(
            409,
            Reason::AlreadyExists,
            format!("{} \"{name}\" already exists", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// The optimistic-concurrency failure kube-apiserver reports on a stale resourceVersion.
    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        ApiError::new(
            409,
            Reason::Conflict,
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(group, resource)
            ),
        )
        .with_details(group, resource, name)
    }

    /// 422 with field causes; `kind` is the object's Kind as in kube-apiserver.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let summary: Vec<String> = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        let mut err = ApiError::new(
            422,
            Reason::Invalid,
            format!(
                "{} \"{name}\" is invalid: {}",
                qualified(group, kind),
                summary.join(", ")
            ),
        )
        .with_details(group, kind, name);
        err.details.causes = causes;
        err
    }

    /// 400.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(400, Reason::BadRequest, message)
    }

    /// 405.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        ApiError::new(405, Reason::MethodNotAllowed, message)
    }

    /// 410 Gone, as sent in a watch ERROR event for a compacted resourceVersion.
    pub fn gone(message: impl Into<String>) -> Self {
        ApiError::new(410, Reason::Gone, message)
    }

    /// 410 Expired, as a list returns for a compacted continue token.
    pub fn expired(message: impl Into<String>) -> Self {
        ApiError::new(410, Reason::Expired, message)
    }

    /// 415.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        ApiError::new(415, Reason::UnsupportedMediaType, message)
    }

    /// 401.
    pub fn unauthorized() -> Self {
        ApiError::new(401, Reason::Unauthorized, "Unauthorized")
    }

    /// 403.
    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(403, Reason::Forbidden, message)
    }

    /// 500.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(500, Reason::InternalError, message)
    }

    /// Any code, with its usual reason; 429/503 carry a retry-after hint.
    pub fn injected(code: u16, retry_after_seconds: Option<u32>) -> Self {
        let reason = Reason::for_code(code);
        let mut err = ApiError::new(code, reason, format!("injected failure ({code})"));
        err.details.retry_after_seconds = retry_after_seconds;
        err
    }

    /// The `metav1.Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason.as_str(),
            "code": self.code,
        });
        let mut details = serde_json::Map::new();
        if let Some(name) = &self.details.name {
            details.insert("name".into(), json!(name));
        }
        if let Some(group) = &self.details.group
            && !group.is_empty()
        {
            details.insert("group".into(), json!(group));
        }
        if let Some(kind) = &self.details.kind {
            details.insert("kind".into(), json!(kind));
        }
        if !self.details.causes.is_empty() {
            let causes: Vec<Value> = self
                .details
                .causes
                .iter()
                .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                .collect();
            details.insert("causes".into(), Value::Array(causes));
        }
        if let Some(secs) = self.details.retry_after_seconds {
            details.insert("retryAfterSeconds".into(), json!(secs));
        }
        if !details.is_empty() {
            status["details"] = Value::Object(details);
        }
        status
    }
}

fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_status_names_resource_and_group() {
        let s = ApiError::not_found("apps", "deployments", "web").to_status();
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["code"], 404);
        assert_eq!(s["message"], "deployments.apps \"web\" not found");
        assert_eq!(s["details"]["group"], "apps");
        assert_eq!(s["details"]["kind"], "deployments");
    }

    #[test]
    fn invalid_status_lists_causes() {
        let s = ApiError::invalid(
            "",
            "ConfigMap",
            "X",
            vec![Cause::invalid("metadata.name", "bad")],
        )
        .to_status();
        assert_eq!(s["code"], 422);
        assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
    }
}
