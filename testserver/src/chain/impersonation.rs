//! Stage 3, impersonation (kube-apiserver's `WithImpersonation`): `Impersonate-User`,
//! `Impersonate-Group` and `Impersonate-Extra-*` headers replace the authenticated user
//! once it is authorized to impersonate. A pass-through until authorization is modelled:
//! the headers are ignored and the user stays who authenticated.

use crate::{endpoints::context::RequestContext, errors::ApiResult};

/// Applies impersonation headers (none are applied yet).
pub(crate) fn impersonate(cx: &mut RequestContext) -> ApiResult<()> {
    let _ = cx;
    Ok(())
}
