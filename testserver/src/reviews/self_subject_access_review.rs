//! `SelfSubjectAccessReview` (kube's
//! `pkg/registry/authorization/selfsubjectaccessreview/rest.go`): whether the requesting
//! user may do what the spec describes (`kubectl auth can-i`).

use serde_json::Value;

use super::access::{attributes, invalid_review, status, validate_attributes, with_status};
use crate::{Engine, authn::UserInfo, authz::Authorizer, errors::ApiResult};

/// Answers a SelfSubjectAccessReview for `user`.
pub(crate) fn answer(
    authorizer: &Authorizer,
    engine: &Engine,
    user: &UserInfo,
    object: &Value,
) -> ApiResult<Value> {
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let causes = validate_attributes(&spec);
    if !causes.is_empty() {
        return Err(invalid_review("SelfSubjectAccessReview", causes));
    }
    let decision = authorizer.authorize(engine, &attributes(&spec, user.clone()));
    Ok(with_status(object, status(&decision)))
}
