//! `SelfSubjectRulesReview` (kube's
//! `pkg/registry/authorization/selfsubjectrulesreview/rest.go`): the rules the requesting
//! user has in a namespace (`kubectl auth can-i --list`): resource rules, non-resource
//! rules, whether the list is incomplete, and the errors met resolving it.

use serde_json::{Value, json};

use super::access::{s, with_status};
use crate::{
    Engine,
    authn::UserInfo,
    authz::Authorizer,
    errors::{ApiError, ApiResult},
};

/// Answers a SelfSubjectRulesReview for `user`.
pub(crate) fn answer(
    authorizer: &Authorizer,
    engine: &Engine,
    user: &UserInfo,
    object: &Value,
) -> ApiResult<Value> {
    let namespace = s(object, "/spec/namespace");
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let (rules, errors) = authorizer.rules_for(engine, user, namespace);
    let list = |v: &[String]| json!(v);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in &rules {
        if !rule.resources.is_empty() {
            let mut r = json!({"verbs": list(&rule.verbs)});
            for (key, v) in [
                ("apiGroups", &rule.api_groups),
                ("resources", &rule.resources),
                ("resourceNames", &rule.resource_names),
            ] {
                if !v.is_empty() {
                    r[key] = list(v);
                }
            }
            resource_rules.push(r);
        }
        if !rule.non_resource_urls.is_empty() {
            non_resource_rules.push(json!({
                "verbs": list(&rule.verbs),
                "nonResourceURLs": list(&rule.non_resource_urls),
            }));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    });
    if !errors.is_empty() {
        let errs = if errors.len() == 1 {
            errors[0].clone()
        } else {
            format!("[{}]", errors.join(", "))
        };
        status["evaluationError"] = json!(errs);
    }
    Ok(with_status(object, status))
}
