//! `LocalSubjectAccessReview` (kube's
//! `pkg/registry/authorization/localsubjectaccessreview/rest.go`): a SubjectAccessReview
//! limited to the namespace it is created in.

use serde_json::{Value, json};

use super::access::{
    attributes, invalid, invalid_review, non_resource_value, s, spec_user, status,
    validate_subject_spec, with_status,
};
use crate::{
    Engine,
    authz::{Authorizer, rbac::rule::go_quote},
    errors::{ApiError, ApiResult},
};

/// Answers a LocalSubjectAccessReview created in `namespace` (the request's).
pub(crate) fn answer(
    authorizer: &Authorizer,
    engine: &Engine,
    namespace: &str,
    object: &Value,
) -> ApiResult<Value> {
    if namespace.is_empty() {
        return Err(ApiError::bad_request(format!(
            "namespace is required on this type: {namespace}"
        )));
    }
    // The create handler's EnsureObjectNamespaceMatchesRequestNamespace.
    let mut object = object.clone();
    match s(&object, "/metadata/namespace") {
        "" => {
            if let Some(m) = object.as_object_mut() {
                let meta = m.entry("metadata").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert("namespace".into(), json!(namespace));
                }
            }
        }
        ns if ns != namespace => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        _ => {}
    }
    // ValidateLocalSubjectAccessReview.
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let mut causes = validate_subject_spec(&spec);
    if let Some(r) = spec.get("resourceAttributes").filter(|v| !v.is_null())
        && s(r, "/namespace") != namespace
    {
        causes.push(invalid(
            "spec.resourceAttributes.namespace",
            &go_quote(s(r, "/namespace")),
            "must match metadata.namespace",
        ));
    }
    if spec
        .get("nonResourceAttributes")
        .is_some_and(|v| !v.is_null())
    {
        causes.push(invalid(
            "spec.nonResourceAttributes",
            &non_resource_value(&spec),
            "disallowed on this kind of request",
        ));
    }
    if !causes.is_empty() {
        return Err(invalid_review("LocalSubjectAccessReview", causes));
    }
    let decision = authorizer.authorize(engine, &attributes(&spec, spec_user(&spec)));
    Ok(with_status(&object, status(&decision)))
}
