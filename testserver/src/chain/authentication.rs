//! Stage 2, authentication (kube-apiserver's `WithAuthentication`): who makes the
//! request. A server started with a token requires `Authorization: Bearer <token>`
//! (anything else is a 401 `Unauthorized`); otherwise every request is the anonymous
//! user. Real authenticators (client certificates, service account tokens) come with
//! the RBAC work.

use http::header;

use crate::{
    endpoints::context::{RequestContext, UserInfo},
    errors::{ApiError, ApiResult},
    shared::Shared,
};

/// Authenticates the request, recording its user.
pub(crate) fn authenticate(shared: &Shared, cx: &mut RequestContext) -> ApiResult<()> {
    if let Some(token) = &shared.token {
        let ok = cx
            .parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|t| t == token);
        if !ok {
            return Err(ApiError::unauthorized());
        }
    }
    cx.user = Some(UserInfo::anonymous());
    Ok(())
}
