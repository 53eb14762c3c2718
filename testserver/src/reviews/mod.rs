//! The review APIs (kube-apiserver's `pkg/registry/authentication` and
//! `pkg/registry/authorization`): create-only resources that are answered, never stored.
//! A review's `status` is computed from its `spec` and the requesting user by the
//! server's authenticators or authorizer, and the object comes back with it (201).

mod access;
mod local_subject_access_review;
mod self_subject_access_review;
mod self_subject_review;
mod self_subject_rules_review;
mod subject_access_review;
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
    let (authorizer, engine) = (&scope.shared.auth.authorizer, scope.engine());
    let anonymous = crate::authn::UserInfo::anonymous();
    let user = cx.user.as_ref().unwrap_or(&anonymous);
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("authentication.k8s.io", "selfsubjectreviews") => {
            Some(self_subject_review::answer(cx, object))
        }
        ("authentication.k8s.io", "tokenreviews") => {
            Some(token_review::answer(scope.shared, object))
        }
        (access::GROUP, "subjectaccessreviews") => {
            Some(subject_access_review::answer(authorizer, engine, object))
        }
        (access::GROUP, "localsubjectaccessreviews") => {
            let namespace = scope.target.namespace.as_deref().unwrap_or_default();
            Some(local_subject_access_review::answer(
                authorizer, engine, namespace, object,
            ))
        }
        (access::GROUP, "selfsubjectaccessreviews") => Some(self_subject_access_review::answer(
            authorizer, engine, user, object,
        )),
        (access::GROUP, "selfsubjectrulesreviews") => Some(self_subject_rules_review::answer(
            authorizer, engine, user, object,
        )),
        _ => None,
    }
}
