//! Stage 4, authorization (kube-apiserver's `WithAuthorization`): whether the user may
//! make the request, asked of the server's authorizer ([`crate::authz`]) with the
//! request's attributes; a 403 `Forbidden` if not.

use crate::{
    authz::{Attributes, Decision},
    endpoints::{context::RequestContext, request_info::Route},
    errors::{ApiError, ApiResult},
    shared::Shared,
};

/// Authorizes the request.
pub(crate) fn authorize(shared: &Shared, cx: &mut RequestContext) -> ApiResult<()> {
    let attributes = attributes(cx);
    let decision = shared
        .auth
        .authorizer
        .authorize(&shared.engine, &attributes);
    cx.decision = Some(decision.clone());
    match decision {
        Decision::Allow(_) => Ok(()),
        Decision::NoOpinion(_) => Err(ApiError::forbidden(format!(
            "User \"{}\" cannot {} path \"{}\"",
            attributes.user.name, attributes.verb, attributes.path
        ))),
    }
}

/// The request's authorization attributes.
fn attributes(cx: &RequestContext) -> Attributes {
    let user = cx.user.clone().unwrap_or_default();
    let path = cx.parts.uri.path().to_string();
    match &cx.route {
        Some(Ok(Route::Resource(info))) => Attributes {
            user,
            verb: info.verb.as_str().to_string(),
            resource_request: true,
            api_group: info.group.clone(),
            api_version: info.version.clone(),
            resource: info.resource.clone(),
            subresource: info.subresource.clone(),
            namespace: info.namespace.clone(),
            name: info.name.clone(),
            path,
        },
        _ => Attributes {
            user,
            verb: cx.parts.method.as_str().to_ascii_lowercase(),
            resource_request: false,
            path,
            ..Attributes::default()
        },
    }
}
