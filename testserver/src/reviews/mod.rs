//! The review APIs (kube-apiserver's `pkg/registry/authentication` and
//! `pkg/registry/authorization`): create-only resources that are answered, never stored.
//! A review's `status` is computed from its `spec` and the requesting user by the
//! server's authenticators or authorizer, and the object comes back with it (201).

mod self_subject_review;
mod token_review;

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
    let rt = &scope.rt;
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("authentication.k8s.io", "selfsubjectreviews") => {
            Some(self_subject_review::answer(cx, object))
        }
        ("authentication.k8s.io", "tokenreviews") => {
            Some(token_review::answer(scope.shared, object))
        }
        _ => None,
    }
}
