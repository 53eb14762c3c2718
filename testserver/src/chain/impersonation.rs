//! Stage 3, impersonation (kube-apiserver's `WithImpersonation`): `Impersonate-User`,
//! `Impersonate-Group` and `Impersonate-Extra-*` headers replace the authenticated user
//! once it is authorized to impersonate. A pass-through until authorization is modelled:
//! the headers are ignored and the user stays who authenticated.

use crate::{endpoints::context::RequestContext, errors::ApiResult, shared::Shared};

/// Applies impersonation headers (none are applied yet).
pub(crate) fn impersonate(shared: &Shared, cx: &mut RequestContext) -> ApiResult<()> {
    let _ = (shared, cx);
    Ok(())
}
