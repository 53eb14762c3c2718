//! One request on its way through the handler chain (kube-apiserver keeps the same in
//! the request's `context.Context`: `request.RequestInfoFrom`, `request.UserFrom`): the
//! HTTP parts and body, the route the request-info stage resolved, the user the
//! authentication stage found, and (in test builds) the trail of stages it passed.

use bytes::Bytes;

use super::request_info::Route;
pub(crate) use crate::authn::UserInfo;
use crate::errors::{ApiError, ApiResult};

/// One request inside the chain.
#[derive(Debug)]
pub(crate) struct RequestContext {
    /// Method, URI and headers.
    pub(crate) parts: http::request::Parts,
    /// The body as received.
    pub(crate) body: Bytes,
    /// What the path addresses (an error is answered by the endpoint, after
    /// authentication and authorization); `None` until the request-info stage ran.
    pub(crate) route: Option<ApiResult<Route>>,
    /// The identity the front established for the connection: the in-process front's
    /// user; used when the request carries no bearer token.
    pub(crate) front_user: Option<UserInfo>,
    /// The user of the verified client certificate the connection's client presented
    /// (`--client-ca-file`); kube-apiserver's x509 authenticator runs before the bearer
    /// token's, so it wins over a token.
    pub(crate) client_certificate: Option<UserInfo>,
    /// The user the request acts as: who authenticated, or whom they impersonate; `None`
    /// until authentication ran.
    pub(crate) user: Option<UserInfo>,
    /// Who authenticated, when they impersonate another user (then [`Self::user`] is the
    /// impersonated one).
    pub(crate) impersonator: Option<UserInfo>,
    /// The authorization stage's decision; `None` until it ran.
    pub(crate) decision: Option<crate::authz::Decision>,
    /// The request's audit event while under way; `None` when auditing is off.
    pub(crate) audit: Option<Box<crate::audit::Pending>>,
    /// The stages passed so far.
    pub(crate) trail: Trail,
}

impl RequestContext {
    /// A request about to enter the chain.
    pub(crate) fn new(parts: http::request::Parts, body: Bytes) -> Self {
        RequestContext {
            parts,
            body,
            route: None,
            front_user: None,
            client_certificate: None,
            user: None,
            impersonator: None,
            decision: None,
            audit: None,
            trail: Trail::default(),
        }
    }
}

/// The stages a request passed, recorded in test builds (a test can also make one stage
/// fail, to see the chain end there with a `Status`); nothing in other builds.
#[derive(Debug, Default)]
pub(crate) struct Trail {
    #[cfg(test)]
    pub(crate) passed: Vec<&'static str>,
    #[cfg(test)]
    pub(crate) fail_at: Option<&'static str>,
}

impl Trail {
    /// Records that the request enters `stage`.
    #[cfg_attr(not(test), inline(always))]
    pub(crate) fn enter(&mut self, stage: &'static str) -> Result<(), ApiError> {
        #[cfg(test)]
        {
            self.passed.push(stage);
            if self.fail_at == Some(stage) {
                return Err(ApiError::internal(format!("stage {stage} failed")));
            }
        }
        #[cfg(not(test))]
        let _ = stage;
        Ok(())
    }
}
