//! The `audit.k8s.io/v1` `Event` (`k8s.io/apiserver/pkg/apis/audit/v1/types.go`), the
//! fields a `Metadata`-level event carries, in the Go type's JSON spelling and order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The API version of [`AuditEvent`].
pub const API_VERSION: &str = "audit.k8s.io/v1";
/// The kind of [`AuditEvent`].
pub const KIND: &str = "Event";

/// How much of a request an event records (`audit.Level`); the test server records
/// `Metadata` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// Not audited.
    None,
    /// Who, what and when, with the response's status; no bodies.
    Metadata,
    /// `Metadata` and the request body.
    Request,
    /// `Request` and the response body.
    RequestResponse,
}

/// Where in a request's life an event was written (`audit.Stage`); the test server
/// writes `ResponseComplete` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// As soon as the request is received.
    RequestReceived,
    /// When a long-running request's response headers are sent.
    ResponseStarted,
    /// When the response is complete.
    ResponseComplete,
    /// When the handler panicked.
    Panic,
}

/// A user as audit records it (`authentication/v1.UserInfo`): empty fields are omitted,
/// so an unknown user is `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditUser {
    /// The user name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub username: String,
    /// The uid.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Extra attributes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What a resource request addresses (`audit/v1.ObjectReference`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// The resource plural.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource: String,
    /// The namespace, empty for a cluster-scoped resource or all namespaces.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The object's name, empty for a collection.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The API group, empty for the core group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// The API version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The subresource (`status`, `scale`, ...), or empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// The response's status (the bounded copy of a `metav1.Status` kube-apiserver keeps:
/// code, and for a `Status` body its status, message and reason).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseStatus {
    /// Always `{}` (the `Status`'s list metadata).
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// `Success` or `Failure`, from a `Status` body.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// The `Status`'s message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The `Status`'s reason (`NotFound`, `Forbidden`, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The HTTP status code.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub code: u16,
}

fn is_zero(code: &u16) -> bool {
    *code == 0
}

/// One audited request (`audit.k8s.io/v1` `Event`), at level `Metadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEvent {
    /// `Event`.
    pub kind: String,
    /// `audit.k8s.io/v1`.
    pub api_version: String,
    /// The level the event was recorded at.
    pub level: Level,
    /// The request's unique id (a UUID).
    #[serde(rename = "auditID")]
    pub audit_id: String,
    /// When the event was written.
    pub stage: Stage,
    /// The request's path and query.
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    /// kube's verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`; for a non-resource request the lower-cased HTTP method.
    pub verb: String,
    /// Who authenticated (`{}` when authentication failed); when impersonating, the
    /// impersonator.
    pub user: AuditUser,
    /// Whom the request impersonates, if anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<AuditUser>,
    /// The client's addresses: `X-Forwarded-For`, `X-Real-Ip`, then the peer.
    #[serde(rename = "sourceIPs", default, skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    /// The `User-Agent` header.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    /// What a resource request addresses (`None` for a non-resource request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectReference>,
    /// The response's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_status: Option<ResponseStatus>,
    /// When the request arrived.
    #[serde(with = "micro_time")]
    pub request_received_timestamp: jiff::Timestamp,
    /// When the event was written.
    #[serde(with = "micro_time")]
    pub stage_timestamp: jiff::Timestamp,
    /// `authorization.k8s.io/decision` (`allow` or `forbid`) and
    /// `authorization.k8s.io/reason`, once the request was authorized.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl AuditEvent {
    /// A `Metadata`-level event for a request received at `received`, with a fresh
    /// audit id; the request's fields are empty.
    pub(crate) fn received(received: jiff::Timestamp) -> Self {
        AuditEvent {
            kind: KIND.into(),
            api_version: API_VERSION.into(),
            level: Level::Metadata,
            audit_id: uuid::Uuid::new_v4().to_string(),
            stage: Stage::ResponseComplete,
            request_uri: String::new(),
            verb: String::new(),
            user: AuditUser::default(),
            impersonated_user: None,
            source_ips: Vec::new(),
            user_agent: String::new(),
            object_ref: None,
            response_status: None,
            request_received_timestamp: received,
            stage_timestamp: received,
            annotations: BTreeMap::new(),
        }
    }

    /// The user the request acts as: the impersonated user if any, else who
    /// authenticated.
    pub fn acting_user(&self) -> &AuditUser {
        self.impersonated_user.as_ref().unwrap_or(&self.user)
    }
}

/// Now, in `metav1.MicroTime`'s precision (whole microseconds), so an event in memory
/// equals the one read back from the log.
pub(crate) fn micro_now() -> jiff::Timestamp {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_microsecond(now.as_microsecond()).unwrap_or(now)
}

/// `metav1.MicroTime`: RFC 3339 in UTC with six fractional digits
/// (`2024-05-01T10:00:00.123456Z`).
mod micro_time {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(super) fn serialize<S: Serializer>(t: &jiff::Timestamp, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{t:.6}"))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<jiff::Timestamp, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_kube_apiservers_json_and_reads_back() {
        let at: jiff::Timestamp = "2024-05-01T10:00:00.1234567Z".parse().expect("time");
        let mut event = AuditEvent::received(at);
        event.audit_id = "id".into();
        event.request_uri = "/api/v1/namespaces/default/pods".into();
        event.verb = "list".into();
        event.user.username = "alice".into();
        event.object_ref = Some(ObjectReference {
            resource: "pods".into(),
            namespace: "default".into(),
            api_version: "v1".into(),
            ..ObjectReference::default()
        });
        event.response_status = Some(ResponseStatus {
            code: 200,
            ..ResponseStatus::default()
        });
        let json = serde_json::to_value(&event).expect("json");
        assert_eq!(
            json,
            serde_json::json!({
                "kind": "Event",
                "apiVersion": "audit.k8s.io/v1",
                "level": "Metadata",
                "auditID": "id",
                "stage": "ResponseComplete",
                "requestURI": "/api/v1/namespaces/default/pods",
                "verb": "list",
                "user": {"username": "alice"},
                "objectRef": {"resource": "pods", "namespace": "default", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "code": 200},
                "requestReceivedTimestamp": "2024-05-01T10:00:00.123456Z",
                "stageTimestamp": "2024-05-01T10:00:00.123456Z",
            })
        );
        let back: AuditEvent = serde_json::from_value(json).expect("back");
        assert_eq!(back.request_uri, event.request_uri);
        assert_eq!(back.object_ref, event.object_ref);
    }
}
