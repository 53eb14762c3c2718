//! The audit stage, after authentication (kube-apiserver's `WithAudit`, which sits
//! between authentication and impersonation): the request's
//! [`crate::audit::AuditEvent`] is begun when the request arrives ([`begin`], its
//! receive time), started once the request is authenticated ([`start`]: URI, verb,
//! user, source addresses, user agent, object), and written when the request completes
//! ([`finish`]: the impersonated user, the authorization decision, the response's
//! status), however it ended. A request that failed authentication never reaches this
//! stage; [`finish`] audits it as kube-apiserver's `WithFailedAuthenticationAudit` does.
//! Nothing happens when auditing is off.

use std::net::IpAddr;

use http::header;

use crate::{
    audit::{AuditEvent, AuditUser, ObjectReference, PeerAddr, Pending, ResponseStatus},
    authz::Decision,
    endpoints::{
        context::{RequestContext, UserInfo},
        reply::{Reply, ReplyBody},
        request_info::Route,
    },
    shared::Shared,
};

/// `authorization.k8s.io/decision`: `allow` or `forbid`.
pub(crate) const DECISION_ANNOTATION: &str = "authorization.k8s.io/decision";
/// `authorization.k8s.io/reason`: the authorizer's reason.
pub(crate) const REASON_ANNOTATION: &str = "authorization.k8s.io/reason";

/// Begins the request's event when auditing is on (kube-apiserver's
/// `WithRequestReceivedTimestamp` notes the time as the request arrives).
#[inline]
pub(crate) fn begin(shared: &Shared, cx: &mut RequestContext) {
    if shared.audit.enabled() {
        cx.audit = Some(Box::new(Pending {
            event: AuditEvent::received(crate::audit::micro_now()),
            started: false,
        }));
    }
}

/// The audit stage: records the authenticated request.
#[inline]
pub(crate) fn start(cx: &mut RequestContext) {
    let Some(mut pending) = cx.audit.take() else {
        return;
    };
    describe_request(&mut pending.event, cx);
    pending.event.user = cx.user.as_ref().map(audit_user).unwrap_or_default();
    pending.started = true;
    cx.audit = Some(pending);
}

/// Writes the request's event, now that `reply` answers it.
pub(crate) fn finish(shared: &Shared, cx: &mut RequestContext, reply: &Reply) {
    let Some(pending) = cx.audit.take() else {
        return;
    };
    let Pending { mut event, started } = *pending;
    let code = reply.status().as_u16();
    let mut status = ResponseStatus {
        code,
        ..ResponseStatus::default()
    };
    if !started {
        // The request ended before the audit stage: in authentication (no user, and
        // kube's failed-authentication message; the `Authorization` header is still
        // there), or, in tests, at the audit stage itself.
        describe_request(&mut event, cx);
        match &cx.user {
            Some(user) => event.user = audit_user(user),
            None => status.message = failed_authentication_message(cx),
        }
    }
    if let Some(impersonator) = &cx.impersonator {
        event.user = audit_user(impersonator);
        event.impersonated_user = cx.user.as_ref().map(audit_user);
    }
    if let Some(decision) = &cx.decision {
        let verdict = match decision {
            Decision::Allow(_) => "allow",
            Decision::NoOpinion(_) => "forbid",
        };
        event
            .annotations
            .insert(DECISION_ANNOTATION.into(), verdict.into());
        event
            .annotations
            .insert(REASON_ANNOTATION.into(), decision.reason().into());
    }
    if code >= 400
        && let ReplyBody::Full(body) = reply.body()
        && let Ok(body) = serde_json::from_slice::<StatusBody>(body)
        && body.kind == "Status"
    {
        status.status = body.status;
        status.reason = body.reason;
        if !body.message.is_empty() {
            status.message = body.message;
        }
    }
    event.response_status = Some(status);
    event.stage_timestamp = crate::audit::micro_now();
    shared.audit.process(event);
}

/// The fields of a `Status` body the event keeps.
#[derive(serde::Deserialize)]
struct StatusBody {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    reason: String,
}

/// The request's own fields: URI, verb, source addresses, user agent, object.
fn describe_request(event: &mut AuditEvent, cx: &RequestContext) {
    event.request_uri = cx.parts.uri.path_and_query().map_or_else(
        || cx.parts.uri.path().to_string(),
        |p| p.as_str().to_string(),
    );
    event.source_ips = source_ips(&cx.parts);
    event.user_agent = cx
        .parts
        .headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    match &cx.route {
        Some(Ok(Route::Resource(info))) => {
            event.verb = info.verb.as_str().to_string();
            event.object_ref = Some(ObjectReference {
                resource: info.resource.clone(),
                namespace: info.namespace.clone(),
                name: info.name.clone(),
                api_group: info.group.clone(),
                api_version: info.version.clone(),
                subresource: info.subresource.clone(),
            });
        }
        _ => event.verb = cx.parts.method.as_str().to_ascii_lowercase(),
    }
}

/// A user as audit records it.
fn audit_user(user: &UserInfo) -> AuditUser {
    AuditUser {
        username: user.name.clone(),
        uid: user.uid.clone(),
        groups: user.groups.clone(),
        extra: user.extra.clone(),
    }
}

/// kube-apiserver's `utilnet.SourceIPs`: the `X-Forwarded-For` addresses, then
/// `X-Real-Ip`, then the connection's peer (the in-process front's is `127.0.0.1`),
/// each once.
fn source_ips(parts: &http::request::Parts) -> Vec<String> {
    let mut ips: Vec<IpAddr> = Vec::new();
    let header_text = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    for part in header_text("x-forwarded-for").split(',') {
        if let Ok(ip) = part.trim().parse::<IpAddr>() {
            ips.push(ip);
        }
    }
    let mut push_once = |ip: IpAddr| {
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    };
    if let Ok(ip) = header_text("x-real-ip").trim().parse::<IpAddr>() {
        push_once(ip);
    }
    let peer = parts
        .extensions
        .get::<PeerAddr>()
        .map_or(IpAddr::from([127, 0, 0, 1]), |p| p.0.ip());
    push_once(peer);
    ips.iter().map(IpAddr::to_string).collect()
}

/// kube-apiserver's `getAuthMethods`: which credentials the refused request carried.
fn failed_authentication_message(cx: &RequestContext) -> String {
    let authorization = cx
        .parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .trim();
    let mut methods = Vec::new();
    let mut words = authorization.split(' ');
    match (words.next(), words.next()) {
        (Some(scheme), Some(_)) if scheme.eq_ignore_ascii_case("basic") => {
            methods.push("basic");
        }
        (Some(scheme), Some(_)) if scheme.eq_ignore_ascii_case("bearer") => {
            methods.push("bearer");
        }
        _ => {}
    }
    if methods.is_empty() {
        "Authentication failed, no credentials provided".into()
    } else {
        format!("Authentication failed, attempted: {}", methods.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::{AuthConfig, InProcess};

    fn request(method: &str, uri: &str) -> RequestContext {
        let (parts, body) = http::Request::builder()
            .method(method)
            .uri(uri)
            .body(Bytes::new())
            .expect("request")
            .into_parts();
        RequestContext::new(parts, body)
    }

    #[tokio::test]
    async fn an_impersonated_request_records_the_impersonator_as_its_user() {
        let server = InProcess::with_auth(Default::default(), &AuthConfig::default().audit());
        let shared = server.shared();
        let mut cx = request("GET", "/api/v1/namespaces/default/secrets/s");
        cx.front_user = Some(UserInfo::new("alice", ["system:authenticated"]));
        // What the impersonation stage leaves: the impersonator beside the user acted as.
        cx.impersonator = Some(UserInfo::new("admin", ["system:masters"]));
        let reply = crate::chain::serve(shared, cx).await;
        assert_eq!(reply.status().as_u16(), 404);
        let events = shared.audit_events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].user.username, "admin");
        assert_eq!(
            events[0]
                .impersonated_user
                .as_ref()
                .map(|u| u.username.as_str()),
            Some("alice")
        );
        assert_eq!(events[0].acting_user().username, "alice");
        assert_eq!(events[0].verb, "get");
    }

    #[tokio::test]
    async fn a_request_ended_by_a_later_stage_is_still_audited() {
        for stage in [
            "audit",
            "impersonation",
            "authorization",
            "endpoint",
            "registry",
        ] {
            let server = InProcess::with_auth(Default::default(), &AuthConfig::default().audit());
            let shared = server.shared();
            let mut cx = request("DELETE", "/apis/apps/v1/namespaces/default/deployments/d");
            cx.trail.fail_at = Some(stage);
            let reply = crate::chain::serve(shared, cx).await;
            assert_eq!(reply.status().as_u16(), 500, "{stage}");
            let events = shared.audit_events();
            assert_eq!(events.len(), 1, "{stage}");
            let status = events[0].response_status.clone().unwrap_or_default();
            assert_eq!(
                (status.code, status.reason.as_str()),
                (500, "InternalError")
            );
            assert_eq!(events[0].verb, "delete", "{stage}");
            assert_eq!(events[0].user.username, "system:anonymous", "{stage}");
        }
    }

    #[test]
    fn the_failed_authentication_message_names_the_credentials_tried() {
        let mut cx = request("GET", "/api");
        assert_eq!(
            failed_authentication_message(&cx),
            "Authentication failed, no credentials provided"
        );
        cx.parts.headers.insert(
            header::AUTHORIZATION,
            http::HeaderValue::from_static("Bearer x"),
        );
        assert_eq!(
            failed_authentication_message(&cx),
            "Authentication failed, attempted: bearer"
        );
    }
}
