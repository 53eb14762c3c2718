//! The handler chain every request passes, in kube-apiserver's order
//! (`k8s.io/apiserver/pkg/server/config.go` `DefaultBuildHandlerChain`, outermost filter
//! first), one stage a file, shared by both fronts:
//!
//! ```text
//! request ─► request_info ─► authentication ─► audit ─► impersonation
//!         ─► authorization ─► fault_injection ─► endpoint (decode ─► admission: mutating ─► validating
//!                                          ─► registry ─► encode)
//! ```
//!
//! * [`request_info`]: what the path addresses (`WithRequestInfo`); a path nothing serves
//!   is answered by the endpoint, after authentication, as kube-apiserver does.
//! * [`authentication`]: who makes the request (`WithAuthentication`, 401 `Unauthorized`).
//! * [`audit`]: the request's audit event (`WithAudit`), written when the request
//!   completes however it ended (see [`crate::audit`]); nothing when auditing is off.
//! * [`impersonation`]: `Impersonate-*` headers (`WithImpersonation`).
//! * [`authorization`]: `WithAuthorization`, `AlwaysAllow` or RBAC (403 `Forbidden`).
//! * Priority and fairness (`WithPriorityAndFairness`, `WithMaxInFlightLimit`) is not
//!   modelled: every request is served at once.
//! * [`fault_injection`]: the test server's own stage — a configured delay, and the
//!   [`crate::FailRule`]s — where kube-apiserver's filters end.
//! * [`endpoint`]: the verb's handler (`crate::endpoints`).
//!
//! An error in any stage ends the request there, answered with its `metav1.Status`.

pub(crate) mod audit;
pub(crate) mod authentication;
pub(crate) mod authorization;
pub(crate) mod endpoint;
pub(crate) mod fault_injection;
pub(crate) mod impersonation;
pub(crate) mod request_info;

use bytes::Bytes;

use crate::{
    authn::UserInfo,
    endpoints::{
        context::RequestContext,
        reply::{self, Reply},
    },
    errors::ApiResult,
    shared::Shared,
};

/// Serves one request through the chain; `client_certificate` is the user of the
/// verified certificate the connection's client presented, if any.
pub(crate) async fn handle(
    shared: &Shared,
    req: http::Request<Bytes>,
    client_certificate: Option<UserInfo>,
) -> Reply {
    let (parts, body) = req.into_parts();
    let mut cx = RequestContext::new(parts, body);
    cx.client_certificate = client_certificate;
    serve(shared, cx).await
}

/// Serves a request already in its context (the in-process front resolves its route
/// first, for the action log and the reactors).
pub(crate) async fn serve(shared: &Shared, mut cx: RequestContext) -> Reply {
    audit::begin(shared, &mut cx);
    let reply = match run(shared, &mut cx).await {
        Ok(reply) => reply,
        Err(err) => reply::error(&err),
    };
    audit::finish(shared, &mut cx, &reply);
    reply
}

/// The stages in order; the first error ends the request.
async fn run(shared: &Shared, cx: &mut RequestContext) -> ApiResult<Reply> {
    cx.trail.enter("request_info")?;
    request_info::resolve(shared, cx);
    cx.trail.enter("authentication")?;
    authentication::authenticate(shared, cx)?;
    cx.trail.enter("audit")?;
    audit::start(cx);
    cx.trail.enter("impersonation")?;
    impersonation::impersonate(shared, cx)?;
    cx.trail.enter("authorization")?;
    authorization::authorize(shared, cx)?;
    cx.trail.enter("fault_injection")?;
    fault_injection::inject(shared, cx).await?;
    cx.trail.enter("endpoint")?;
    endpoint::serve(shared, cx).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FailRule, InProcess, Verb};

    const CREATE_TRIP: &[&str] = &[
        "request_info",
        "authentication",
        "audit",
        "impersonation",
        "authorization",
        "fault_injection",
        "endpoint",
        "decode",
        "admission.mutating",
        "admission.validating",
        "registry",
        "encode",
    ];

    fn create_request(token: Option<&str>) -> RequestContext {
        let mut builder = http::Request::builder()
            .method("POST")
            .uri("/api/v1/namespaces/default/configmaps")
            .header("content-type", "application/json");
        if let Some(token) = token {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        let body =
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let (parts, body) = builder
            .body(Bytes::from(body.to_string()))
            .expect("request")
            .into_parts();
        RequestContext::new(parts, body)
    }

    async fn trip(
        shared: &Shared,
        mut cx: RequestContext,
    ) -> (u16, serde_json::Value, Vec<&'static str>) {
        let reply = match run(shared, &mut cx).await {
            Ok(reply) => reply,
            Err(err) => reply::error(&err),
        };
        let code = reply.status().as_u16();
        let body = match reply.into_body() {
            reply::ReplyBody::Full(b) => serde_json::from_slice(&b).unwrap_or_default(),
            reply::ReplyBody::Stream(_) => serde_json::Value::Null,
        };
        (code, body, cx.trail.passed)
    }

    #[tokio::test]
    async fn a_create_passes_every_stage_in_order() {
        let server = InProcess::new();
        let (code, body, passed) = trip(server.shared(), create_request(None)).await;
        assert_eq!((code, body["kind"].as_str()), (201, Some("ConfigMap")));
        assert_eq!(passed, CREATE_TRIP);
    }

    #[tokio::test]
    async fn an_error_in_any_stage_ends_the_request_with_a_status() {
        for (i, stage) in CREATE_TRIP.iter().enumerate() {
            let server = InProcess::new();
            let mut cx = create_request(None);
            cx.trail.fail_at = Some(stage);
            let (code, status, passed) = trip(server.shared(), cx).await;
            assert_eq!(code, 500, "{stage}");
            assert_eq!(status["kind"], "Status", "{stage}");
            assert_eq!(status["message"], format!("stage {stage} failed"));
            assert_eq!(passed, CREATE_TRIP[..=i], "{stage}");
            let stored = server.engine().store().get(
                &crate::registry::GroupResource::new("", "configmaps"),
                &("default".into(), "a".into()),
            );
            assert_eq!(
                stored.is_some(),
                i > CREATE_TRIP.len() - 2,
                "{stage}: stored"
            );
        }
    }

    #[tokio::test]
    async fn real_stages_answer_with_kube_apiservers_status() {
        let engine = crate::apiserver::new_engine(crate::EngineConfig::default());
        let shared = Shared::new(
            engine,
            &crate::AuthConfig::default()
                .anonymous(false)
                .token("secret", crate::UserInfo::new("admin", ["system:masters"])),
        );
        let (code, status, passed) = trip(&shared, create_request(Some("wrong"))).await;
        assert_eq!(
            (code, status["reason"].as_str()),
            (401, Some("Unauthorized"))
        );
        assert_eq!(passed, CREATE_TRIP[..2]);

        shared
            .faults
            .fail(FailRule::on(Verb::Create).resource("configmaps").code(409));
        let (code, status, passed) = trip(&shared, create_request(Some("secret"))).await;
        assert_eq!((code, status["reason"].as_str()), (409, Some("Conflict")));
        assert_eq!(passed, CREATE_TRIP[..6]);

        let (code, _, passed) = trip(&shared, create_request(Some("secret"))).await;
        assert_eq!(code, 201);
        assert_eq!(passed, CREATE_TRIP);
    }
}
