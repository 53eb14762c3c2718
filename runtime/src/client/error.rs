//! The client's one error type: API errors carry the server's `Status`; transport, decode,
//! auth and configuration failures are kept apart so callers can tell "the server said no"
//! from "we never got a clean answer".

use std::time::Duration;

use kube_core::Status;

use super::{auth::AuthError, cbor::CborError, config::ConfigError, transport::TransportError};

/// Reasons the API server puts in `Status.reason` (apimachinery's `StatusReason`).
pub mod reason {
    /// The resource does not exist.
    pub const NOT_FOUND: &str = "NotFound";
    /// The resource already exists.
    pub const ALREADY_EXISTS: &str = "AlreadyExists";
    /// The write conflicted with a newer version of the object.
    pub const CONFLICT: &str = "Conflict";
    /// The requested resource version is no longer available.
    pub const GONE: &str = "Gone";
    /// The requested resource version has been compacted away.
    pub const EXPIRED: &str = "Expired";
    /// The client sent too many requests.
    pub const TOO_MANY_REQUESTS: &str = "TooManyRequests";
    /// The caller is not allowed to perform the action.
    pub const FORBIDDEN: &str = "Forbidden";
    /// The caller did not authenticate.
    pub const UNAUTHORIZED: &str = "Unauthorized";
    /// The object failed validation.
    pub const INVALID: &str = "Invalid";
    /// The server is temporarily unable to serve the request.
    pub const SERVICE_UNAVAILABLE: &str = "ServiceUnavailable";
    /// The request timed out on the server.
    pub const TIMEOUT: &str = "Timeout";
    /// The server failed internally.
    pub const INTERNAL_ERROR: &str = "InternalError";
    /// The request was malformed.
    pub const BAD_REQUEST: &str = "BadRequest";
    /// The method is not supported for this resource.
    pub const METHOD_NOT_ALLOWED: &str = "MethodNotAllowed";
}

/// Every failure a client call can report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server answered with a failure `Status` (or a non-2xx code, turned into one).
    ///
    /// Its message is one line; for the failures a newcomer meets first (the resource is not
    /// served: its CRD is not installed; forbidden by RBAC; credentials rejected) it ends
    /// with what to do ([`Error::hint`]).
    #[error("{}", api_line(.0))]
    Api(Box<Status>),
    /// The request never got a complete answer: connection, TLS, timeout, broken body.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// A response (or one line of a watch) could not be decoded.
    #[error("decode: {0}")]
    Decode(#[source] serde_json::Error),
    /// A CBOR response (or one item of a CBOR watch) could not be decoded.
    #[error("decode: {0}")]
    DecodeCbor(#[source] CborError),
    /// A request body could not be encoded.
    #[error("encode: {0}")]
    Encode(#[source] serde_json::Error),
    /// A request body could not be encoded as CBOR.
    #[error("encode: {0}")]
    EncodeCbor(#[source] CborError),
    /// kube-core refused to build the request (bad name, invalid parameters).
    #[error("request: {0}")]
    Request(#[from] kube_core::request::Error),
    /// Credentials could not be obtained.
    #[error("auth: {0}")]
    Auth(#[from] AuthError),
    /// The client configuration is unusable.
    #[error("config: {0}")]
    Config(#[from] ConfigError),
    /// Discovery found no resource for the requested kind.
    #[error("discovery: {0}")]
    Discovery(String),
}

impl Error {
    /// Builds an API error from a response's status code and body.
    ///
    /// A body that is a `Status` is kept as is (its code filled in from the response when the
    /// server left it at 0); anything else becomes a `Status` whose reason follows the code,
    /// as client-go's `NewGenericServerResponse` does. The body itself is never copied into the
    /// error: it may be an object carrying secrets.
    pub fn from_response(code: http::StatusCode, body: &[u8]) -> Self {
        let parsed = if body.starts_with(&super::cbor::SELF_DESCRIBED) {
            super::cbor::from_slice::<Status>(body).ok()
        } else {
            serde_json::from_slice::<Status>(body).ok()
        };
        let parsed =
            parsed.filter(|s| !s.reason.is_empty() || !s.message.is_empty() || s.code != 0);
        let mut status = parsed.unwrap_or_else(|| {
            Status::failure(
                code.canonical_reason().unwrap_or("unknown error"),
                reason_for_code(code.as_u16()),
            )
        });
        if status.code == 0 {
            status.code = code.as_u16();
        }
        Error::Api(Box::new(status))
    }

    /// The API `Status`, if the server answered.
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Api(s) => Some(s),
            _ => None,
        }
    }

    /// The HTTP code of an API error.
    pub fn code(&self) -> Option<u16> {
        self.status().map(|s| s.code)
    }

    /// The server's `Status.details.retryAfterSeconds`, if it asked the client to wait.
    pub fn retry_after(&self) -> Option<Duration> {
        self.status()
            .and_then(|s| s.details.as_ref())
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s)))
    }

    fn has_reason(&self, reason: &str, code: u16) -> bool {
        match self.status() {
            Some(s) if s.reason == reason => true,
            // client-go: an unknown reason falls back to the code
            Some(s) if s.reason.is_empty() || s.reason == "Unknown" => s.code == code,
            _ => false,
        }
    }

    /// 404: the object (or its namespace) does not exist.
    pub fn is_not_found(&self) -> bool {
        self.has_reason(reason::NOT_FOUND, 404)
    }

    /// 409 AlreadyExists: a create found the name taken.
    pub fn is_already_exists(&self) -> bool {
        self.status()
            .is_some_and(|s| s.reason == reason::ALREADY_EXISTS)
    }

    /// 409 Conflict: the write was based on a stale resourceVersion.
    pub fn is_conflict(&self) -> bool {
        self.has_reason(reason::CONFLICT, 409)
    }

    /// 410 Gone: the requested resourceVersion is too old.
    pub fn is_gone(&self) -> bool {
        self.has_reason(reason::GONE, 410)
    }

    /// 410 Expired: the resourceVersion (or continue token) was compacted away.
    pub fn is_resource_expired(&self) -> bool {
        self.status().is_some_and(|s| s.reason == reason::EXPIRED)
    }

    /// Either 410 flavour: the caller must relist.
    pub fn is_gone_or_expired(&self) -> bool {
        self.is_gone() || self.is_resource_expired()
    }

    /// 429: the server (API Priority and Fairness) asked the client to back off.
    pub fn is_too_many_requests(&self) -> bool {
        self.has_reason(reason::TOO_MANY_REQUESTS, 429)
    }

    /// 403: authenticated but not allowed.
    pub fn is_forbidden(&self) -> bool {
        self.has_reason(reason::FORBIDDEN, 403)
    }

    /// 401: the credentials were missing or rejected.
    pub fn is_unauthorized(&self) -> bool {
        self.has_reason(reason::UNAUTHORIZED, 401)
    }

    /// 422: the object failed validation.
    pub fn is_invalid(&self) -> bool {
        self.has_reason(reason::INVALID, 422)
    }

    /// 503: the server is temporarily unavailable.
    pub fn is_service_unavailable(&self) -> bool {
        self.has_reason(reason::SERVICE_UNAVAILABLE, 503)
    }

    /// 404 for the resource itself, not for an object: the API server does not serve this
    /// group/version/resource (a custom resource whose CRD is not installed). kube-apiserver
    /// answers an unknown path with apimachinery's generic 404 message, "the server could
    /// not find the requested resource" (apimachinery `errors.NewGenericServerResponse`,
    /// apiserver `endpoints/handlers/responsewriters`), with no object name in `details`.
    pub fn is_resource_not_served(&self) -> bool {
        self.is_not_found()
            && self.status().is_some_and(|s| {
                s.message.starts_with(RESOURCE_NOT_SERVED)
                    && s.details.as_ref().is_none_or(|d| d.name.is_empty())
            })
    }

    /// What to do about this error, for the ones a user meets first: a resource not served
    /// (install the CRD), 403 Forbidden (grant the permission), 401 Unauthorized (renew the
    /// credentials). `None` for the rest.
    pub fn hint(&self) -> Option<&'static str> {
        self.status().and_then(status_hint)
    }
}

/// apimachinery's message for a 404 on a path the server does not serve.
const RESOURCE_NOT_SERVED: &str = "the server could not find the requested resource";

fn status_hint(status: &Status) -> Option<&'static str> {
    let error = Error::Api(Box::new(status.clone()));
    if error.is_resource_not_served() {
        Some(
            "the API server does not serve this resource: install its CustomResourceDefinition \
             (kubectl apply -f config/crd/) or check its group and version",
        )
    } else if error.is_forbidden() {
        Some(
            "grant this permission to the identity's Role or ClusterRole (a +kubebuilder:rbac \
             marker, then hack/update-codegen.sh and kubectl apply -f config/rbac/role.yaml)",
        )
    } else if error.is_unauthorized() {
        Some("the credentials were rejected: renew the kubeconfig's token or certificate")
    } else {
        None
    }
}

/// `API error <code>: <reason>: <message>`, then the hint when there is one; one line.
fn api_line(status: &Status) -> String {
    let message = status.message.replace('\n', " ");
    let line = format!("API error {}: {}: {}", status.code, status.reason, message);
    match status_hint(status) {
        Some(hint) => format!("{line} ({hint})"),
        None => line,
    }
}

/// The reason apimachinery assigns to a bare HTTP code.
pub(crate) fn reason_for_code(code: u16) -> &'static str {
    match code {
        400 => reason::BAD_REQUEST,
        401 => reason::UNAUTHORIZED,
        403 => reason::FORBIDDEN,
        404 => reason::NOT_FOUND,
        405 => reason::METHOD_NOT_ALLOWED,
        409 => reason::CONFLICT,
        410 => reason::GONE,
        422 => reason::INVALID,
        429 => reason::TOO_MANY_REQUESTS,
        500 => reason::INTERNAL_ERROR,
        503 => reason::SERVICE_UNAVAILABLE,
        504 => reason::TIMEOUT,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(json: serde_json::Value) -> Error {
        let body = serde_json::to_vec(&json).expect("json");
        let code = json["code"]
            .as_u64()
            .and_then(|c| u16::try_from(c).ok())
            .expect("code");
        Error::from_response(http::StatusCode::from_u16(code).expect("code"), &body)
    }

    #[test]
    fn a_resource_the_server_does_not_serve_says_install_the_crd() {
        // kube-apiserver's answer to a path no API group serves (the CRD is not installed):
        // apimachinery's generic 404 message, empty details.
        let err = status(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server could not find the requested resource",
            "reason": "NotFound", "details": {}, "code": 404
        }));
        assert!(err.is_resource_not_served());
        let line = err.to_string();
        assert_eq!(
            line,
            "API error 404: NotFound: the server could not find the requested resource (the API \
             server does not serve this resource: install its CustomResourceDefinition (kubectl \
             apply -f config/crd/) or check its group and version)"
        );
        assert!(!line.contains('\n'));
        // An object that does not exist is an ordinary 404: no hint.
        let err = status(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "widgets.example.com \"w\" not found", "reason": "NotFound",
            "details": {"name": "w", "group": "example.com", "kind": "widgets"}, "code": 404
        }));
        assert!(err.is_not_found() && !err.is_resource_not_served());
        assert_eq!(err.hint(), None);
        assert_eq!(
            err.to_string(),
            "API error 404: NotFound: widgets.example.com \"w\" not found"
        );
    }

    #[test]
    fn forbidden_says_which_permission_to_grant_and_how() {
        // kube-apiserver's RBAC denial (apiserver `endpoints/handlers/responsewriters.forbiddenMessage`).
        let err = status(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "widgets.example.com is forbidden: User \"system:serviceaccount:default:op\" \
                        cannot list resource \"widgets\" in API group \"example.com\" in the namespace \"default\"",
            "reason": "Forbidden", "details": {"group": "example.com", "kind": "widgets"}, "code": 403
        }));
        let line = err.to_string();
        assert!(
            line.starts_with("API error 403: Forbidden: widgets.example.com is forbidden: User"),
            "{line}"
        );
        assert!(
            line.ends_with(
                "(grant this permission to the identity's Role or ClusterRole (a +kubebuilder:rbac \
             marker, then hack/update-codegen.sh and kubectl apply -f config/rbac/role.yaml))"
            ),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn unauthorized_says_renew_the_credentials() {
        let err = Error::from_response(http::StatusCode::UNAUTHORIZED, b"");
        assert_eq!(
            err.to_string(),
            "API error 401: Unauthorized: Unauthorized (the credentials were rejected: renew the \
             kubeconfig's token or certificate)"
        );
    }

    #[test]
    fn no_cluster_configured_says_where_configuration_comes_from() {
        let err = Error::Config(ConfigError::Infer {
            kubeconfig: "failed to read kubeconfig: no such file".into(),
            in_cluster: "KUBERNETES_SERVICE_HOST is not set".into(),
        });
        let line = err.to_string();
        assert!(
            line.starts_with(
                "config: no Kubernetes cluster configured: set KUBECONFIG or --kubeconfig, or \
                 create ~/.kube/config (in a pod: mount a service account)"
            ),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    fn status_body(code: u16, reason: &str) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "boom", "reason": reason, "code": code
        }))
        .unwrap()
    }

    #[test]
    fn status_body_is_kept_and_classified() {
        type Case = (u16, &'static str, fn(&Error) -> bool);
        let cases: &[Case] = &[
            (404, "NotFound", Error::is_not_found),
            (409, "AlreadyExists", Error::is_already_exists),
            (409, "Conflict", Error::is_conflict),
            (410, "Gone", Error::is_gone),
            (410, "Expired", Error::is_resource_expired),
            (429, "TooManyRequests", Error::is_too_many_requests),
            (403, "Forbidden", Error::is_forbidden),
            (401, "Unauthorized", Error::is_unauthorized),
            (422, "Invalid", Error::is_invalid),
        ];
        for (code, reason, pred) in cases {
            let code = http::StatusCode::from_u16(*code).unwrap();
            let err = Error::from_response(code, &status_body(code.as_u16(), reason));
            assert!(pred(&err), "{reason} not classified");
            assert_eq!(err.status().unwrap().message, "boom");
        }
    }

    #[test]
    fn already_exists_is_not_a_conflict() {
        let err = Error::from_response(
            http::StatusCode::CONFLICT,
            &status_body(409, "AlreadyExists"),
        );
        assert!(err.is_already_exists());
        assert!(!err.is_conflict());
    }

    #[test]
    fn non_status_body_falls_back_to_the_code() {
        let err = Error::from_response(http::StatusCode::NOT_FOUND, b"<html>nope</html>");
        assert!(err.is_not_found());
        assert_eq!(err.code(), Some(404));
        assert!(!format!("{err:?}").contains("nope"));
    }

    #[test]
    fn transport_errors_are_not_api_errors() {
        let err = Error::from(TransportError::Connect("refused".into()));
        assert!(err.status().is_none());
        assert!(!err.is_not_found());
    }

    #[test]
    fn retry_after_comes_from_status_details() {
        let body = serde_json::to_vec(&serde_json::json!({
            "kind": "Status", "reason": "TooManyRequests", "code": 429,
            "details": {"retryAfterSeconds": 3}
        }))
        .unwrap();
        let err = Error::from_response(http::StatusCode::TOO_MANY_REQUESTS, &body);
        assert_eq!(err.retry_after(), Some(Duration::from_secs(3)));
    }
}
