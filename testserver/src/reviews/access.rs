//! What the access reviews share (kube's `pkg/registry/authorization/util/helpers.go` and
//! `pkg/apis/authorization/validation/validation.go`): a review's spec as authorizer
//! attributes, the spec's validation, and the status an authorizer decision becomes.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::{
    authn::UserInfo,
    authz::{Attributes, Decision},
    errors::{ApiError, Cause},
};

/// The API group of the reviews.
pub(crate) const GROUP: &str = "authorization.k8s.io";

/// The string at `pointer` of `v`, or `""`.
pub(crate) fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether `spec` has a non-null `key`.
fn has(spec: &Value, key: &str) -> bool {
    spec.get(key).is_some_and(|v| !v.is_null())
}

/// A `FieldValueInvalid` cause worded as `field.Invalid` words it.
pub(crate) fn invalid(field: &str, value: &str, detail: &str) -> Cause {
    Cause::invalid(field, format!("Invalid value: {value}: {detail}"))
}

/// Go's `%#v` of a `NonResourceAttributes` (or `"null"` when absent), as `field.Invalid`
/// prints a struct pointer.
pub(crate) fn non_resource_value(spec: &Value) -> String {
    match spec.get("nonResourceAttributes").filter(|v| !v.is_null()) {
        None => "\"null\"".into(),
        Some(n) => format!(
            "authorization.NonResourceAttributes{{Path:{}, Verb:{}}}",
            crate::authz::rbac::rule::go_quote(s(n, "/path")),
            crate::authz::rbac::rule::go_quote(s(n, "/verb"))
        ),
    }
}

/// `ValidateSelfSubjectAccessReviewSpec` (also the first half of
/// `ValidateSubjectAccessReviewSpec`): exactly one of the attribute kinds.
pub(crate) fn validate_attributes(spec: &Value) -> Vec<Cause> {
    let (resource, non_resource) = (
        has(spec, "resourceAttributes"),
        has(spec, "nonResourceAttributes"),
    );
    let mut causes = Vec::new();
    if resource && non_resource {
        causes.push(invalid(
            "spec.nonResourceAttributes",
            &non_resource_value(spec),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if !resource && !non_resource {
        causes.push(invalid(
            "spec.resourceAttributes",
            &non_resource_value(spec),
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    causes
}

/// `ValidateSubjectAccessReviewSpec`: the attributes, and a user or a group.
pub(crate) fn validate_subject_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = validate_attributes(spec);
    let no_groups = spec
        .get("groups")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if s(spec, "/user").is_empty() && no_groups {
        causes.push(invalid(
            "spec.user",
            &crate::authz::rbac::rule::go_quote(s(spec, "/user")),
            "at least one of user or group must be specified",
        ));
    }
    causes
}

/// The user a SubjectAccessReview's spec names (`user`, `groups`, `uid`, `extra`), as
/// given: no `system:authenticated` is added.
pub(crate) fn spec_user(spec: &Value) -> UserInfo {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let extra: BTreeMap<String, Vec<String>> = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), strings(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    UserInfo {
        name: s(spec, "/user").to_string(),
        uid: s(spec, "/uid").to_string(),
        groups: strings(spec.get("groups")),
        extra,
    }
}

/// `AuthorizationAttributesFrom`: the attributes a spec asks about, for `user`.
pub(crate) fn attributes(spec: &Value, user: UserInfo) -> Attributes {
    match spec.get("resourceAttributes").filter(|v| !v.is_null()) {
        Some(r) => Attributes {
            user,
            verb: s(r, "/verb").into(),
            resource_request: true,
            api_group: s(r, "/group").into(),
            api_version: match s(r, "/version") {
                "" => "*".into(),
                v => v.into(),
            },
            resource: s(r, "/resource").into(),
            subresource: s(r, "/subresource").into(),
            namespace: s(r, "/namespace").into(),
            name: s(r, "/name").into(),
            path: String::new(),
        },
        None => Attributes {
            user,
            verb: s(spec, "/nonResourceAttributes/verb").into(),
            resource_request: false,
            path: s(spec, "/nonResourceAttributes/path").into(),
            ..Attributes::default()
        },
    }
}

/// `SubjectAccessReviewStatus` of a decision: `allowed`, and the reason when there is one.
pub(crate) fn status(decision: &Decision) -> Value {
    let mut status = json!({"allowed": decision.allowed()});
    if !decision.reason().is_empty() {
        status["reason"] = json!(decision.reason());
    }
    status
}

/// The review with `status` set.
pub(crate) fn with_status(object: &Value, status: Value) -> Value {
    let mut out = object.clone();
    if let Some(m) = out.as_object_mut() {
        m.insert("status".into(), status);
        m.entry("metadata").or_insert_with(|| json!({}));
    }
    out
}

/// A 422 on the review kind `kind`.
pub(crate) fn invalid_review(kind: &str, causes: Vec<Cause>) -> ApiError {
    ApiError::invalid(GROUP, kind, "", causes)
}

#[cfg(test)]
mod tests {
    //! After kube's `pkg/apis/authorization/validation/validation_test.go`.

    use super::*;

    #[test]
    fn specs_need_exactly_one_kind_of_attributes_and_a_subject() {
        let causes = validate_subject_spec(&json!({}));
        let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["spec.resourceAttributes", "spec.user"]);
        assert_eq!(
            causes[0].message,
            "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified"
        );
        let both = json!({"user": "a", "resourceAttributes": {}, "nonResourceAttributes": {"path": "/x", "verb": "get"}});
        assert_eq!(
            validate_subject_spec(&both)[0].message,
            "Invalid value: authorization.NonResourceAttributes{Path:\"/x\", Verb:\"get\"}: cannot be specified in combination with resourceAttributes"
        );
        assert!(
            validate_subject_spec(&json!({"groups": ["g"], "resourceAttributes": {}})).is_empty()
        );
    }

    #[test]
    fn attributes_default_the_version_to_all() {
        let a = attributes(
            &json!({"resourceAttributes": {"verb": "get", "resource": "pods", "subresource": "log"}}),
            UserInfo::default(),
        );
        assert_eq!(
            (
                a.api_version.as_str(),
                a.subresource.as_str(),
                a.resource_request
            ),
            ("*", "log", true)
        );
        let n = attributes(
            &json!({"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}),
            UserInfo::default(),
        );
        assert_eq!((n.path.as_str(), n.resource_request), ("/healthz", false));
    }
}
