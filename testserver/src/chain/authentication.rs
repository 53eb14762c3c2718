//! Stage 2, authentication (kube-apiserver's `WithAuthentication`): who makes the
//! request, from its credentials (see [`crate::authn`]); a credential no authenticator
//! accepts, or no credential when anonymous requests are off, is a 401 `Unauthorized`.
//! The `Authorization` header is removed once read, as kube-apiserver strips it before
//! the request goes further.

use http::header;

use crate::{endpoints::context::RequestContext, errors::ApiResult, shared::Shared};

/// Authenticates the request, recording its user.
pub(crate) fn authenticate(shared: &Shared, cx: &mut RequestContext) -> ApiResult<()> {
    let user = shared.auth.authenticator.authenticate(
        &shared.engine,
        &cx.parts.headers,
        cx.client_certificate.as_ref(),
        cx.front_user.as_ref(),
    )?;
    cx.parts.headers.remove(header::AUTHORIZATION);
    cx.user = Some(user);
    Ok(())
}
