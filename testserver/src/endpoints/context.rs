//! One request on its way through the handler chain (kube-apiserver keeps the same in
//! the request's `context.Context`: `request.RequestInfoFrom`, `request.UserFrom`): the
//! HTTP parts and body, the route the request-info stage resolved, the user the
//! authentication stage found, and (in test builds) the trail of stages it passed.

use bytes::Bytes;

use super::request_info::Route;
use crate::errors::{ApiError, ApiResult};

/// Who makes a request (kube-apiserver's `user.Info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserInfo {
    /// The user name (`system:anonymous`).
    pub(crate) name: String,
    /// The groups (`system:unauthenticated`).
    pub(crate) groups: Vec<String>,
}

impl UserInfo {
    /// The user of a request with no credentials (kube-apiserver's anonymous
    /// authenticator).
    pub(crate) fn anonymous() -> Self {
        UserInfo {
            name: "system:anonymous".into(),
            groups: vec!["system:unauthenticated".into()],
        }
    }
}

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
    /// The authenticated user; `None` until authentication ran.
    pub(crate) user: Option<UserInfo>,
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
            user: None,
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
