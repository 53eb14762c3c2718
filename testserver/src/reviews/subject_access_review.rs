//! `SubjectAccessReview` (kube's `pkg/registry/authorization/subjectaccessreview/rest.go`):
//! whether the user the spec names may do what it describes, asked of the server's
//! authorizer.

use serde_json::Value;

use super::access::{
    attributes, invalid_review, spec_user, status, validate_subject_spec, with_status,
};
use crate::{Engine, authz::Authorizer, errors::ApiResult};

/// Answers a SubjectAccessReview.
pub(crate) fn answer(authorizer: &Authorizer, engine: &Engine, object: &Value) -> ApiResult<Value> {
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let causes = validate_subject_spec(&spec);
    if !causes.is_empty() {
        return Err(invalid_review("SubjectAccessReview", causes));
    }
    let decision = authorizer.authorize(engine, &attributes(&spec, spec_user(&spec)));
    Ok(with_status(object, status(&decision)))
}
