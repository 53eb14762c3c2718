//! Whether a hook is called for a request (kube-apiserver's `generic/webhook.go`
//! `ShouldCallHook` with `predicates/namespace`, `predicates/object`, `predicates/rules`
//! and `matchconditions`).

use std::{collections::BTreeMap, sync::Arc};

use kube_cel::{KubeCelExt, cel};
use serde_json::Value;

use super::{Hook, Rule};
use crate::{
    admission::request::Request,
    engine::Engine,
    errors::{ApiError, ApiResult},
    registry::{GroupResource, ResourceType},
};

/// Requests no webhook sees: those for the admission configurations themselves
/// (`rules.IsExemptAdmissionConfigurationResource`), so a bad hook cannot lock itself in.
pub(crate) fn exempt(rt: &ResourceType) -> bool {
    rt.group == super::GROUP
        && matches!(
            rt.plural.as_str(),
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

/// The version the hook is called in (the request's, or an equivalent one its rules
/// name under `matchPolicy: Equivalent`), `None` when it is not called, or the error
/// that ends the request (a `matchConditions` failure under `failurePolicy: Fail`).
pub(crate) fn should_call(
    engine: &Engine,
    hook: &Hook,
    request: &Request,
) -> ApiResult<Option<Arc<ResourceType>>> {
    if !namespace_matches(engine, hook, request)? || !object_matches(hook, request)? {
        return Ok(None);
    }
    let mut matched = hook
        .rules
        .iter()
        .any(|r| rule_matches(r, request, &request.rt))
        .then(|| request.rt.clone());
    if matched.is_none() && !hook.exact {
        // Honour earlier rules first, as kube-apiserver does.
        'rules: for rule in &hook.rules {
            for equivalent in equivalents(engine, &request.rt) {
                if rule_matches(rule, request, &equivalent) {
                    matched = Some(equivalent);
                    break 'rules;
                }
            }
        }
    }
    let Some(rt) = matched else {
        return Ok(None);
    };
    if hook.match_conditions.is_empty() {
        return Ok(Some(rt));
    }
    let review = request.to_json("", &rt);
    match conditions_match(hook, &review) {
        Ok(true) => Ok(Some(rt)),
        Ok(false) => Ok(None),
        Err(err) if hook.ignore_failures => {
            tracing::warn!(hook = %hook.name, %err, "match condition failed, failing open");
            Ok(None)
        }
        Err(err) => {
            tracing::warn!(hook = %hook.name, %err, "match condition failed, failing closed");
            Err(ApiError::forbidden(format!(
                "{} \"{}\" is forbidden: {err}",
                qualified(&request.rt),
                request.name
            )))
        }
    }
}

fn qualified(rt: &ResourceType) -> String {
    if rt.group.is_empty() {
        rt.plural.clone()
    } else {
        format!("{}.{}", rt.plural, rt.group)
    }
}

/// The other served versions of the request's resource (a CRD's other versions).
fn equivalents(engine: &Engine, rt: &ResourceType) -> Vec<Arc<ResourceType>> {
    engine
        .registry()
        .versions(&rt.group)
        .iter()
        .filter(|v| **v != rt.version)
        .filter_map(|v| engine.registry().get(&rt.group, v, &rt.plural))
        .collect()
}

/// One rule against the request seen as `rt` (`predicates/rules/rules.go`).
pub(crate) fn rule_matches(rule: &Rule, request: &Request, rt: &ResourceType) -> bool {
    let any = |list: &[String], value: &str| list.iter().any(|x| x == "*" || x == value);
    let scope = match rule.scope.as_str() {
        "Cluster" => !rt.namespaced,
        "Namespaced" => rt.namespaced,
        _ => true,
    };
    let resource = rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
        (res == "*" || res == rt.plural) && (sub == "*" || sub == request.subresource)
    });
    scope
        && any(&rule.operations, request.operation.as_str())
        && any(&rule.api_groups, &rt.group)
        && any(&rule.api_versions, &rt.version)
        && resource
}

fn labels(obj: Option<&Value>) -> BTreeMap<String, String> {
    obj.and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// A `metav1.LabelSelector` (matchLabels and matchExpressions) against labels; `null`
/// and `{}` match everything.
pub(crate) fn selector_matches(
    selector: &Value,
    labels: &BTreeMap<String, String>,
) -> ApiResult<bool> {
    if let Some(match_labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in match_labels {
            if labels.get(k).map(String::as_str) != v.as_str() {
                return Ok(false);
            }
        }
    }
    for expr in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<&str> = expr
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let value = labels.get(key).map(String::as_str);
        let ok = match expr.get("operator").and_then(Value::as_str) {
            Some("In") => value.is_some_and(|v| values.contains(&v)),
            Some("NotIn") => value.is_none_or(|v| !values.contains(&v)),
            Some("Exists") => value.is_some(),
            Some("DoesNotExist") => value.is_none(),
            other => {
                return Err(ApiError::internal(format!(
                    "Internal error occurred: {other:?} is not a valid label selector operator"
                )));
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn is_empty_selector(selector: &Value) -> bool {
    selector.as_object().is_none_or(|m| m.is_empty())
}

/// `namespaceSelector` (`predicates/namespace/matcher.go`): cluster-scoped objects always
/// match, except a Namespace, matched on its own labels; others on their namespace's.
fn namespace_matches(engine: &Engine, hook: &Hook, request: &Request) -> ApiResult<bool> {
    if is_empty_selector(&hook.namespace_selector) {
        return Ok(true);
    }
    let rt = &request.rt;
    let labels = if rt.group.is_empty() && rt.plural == "namespaces" {
        let obj = request.object.as_ref().or(request.old_object.as_ref());
        labels(obj)
    } else if !rt.namespaced {
        return Ok(true);
    } else {
        let ns = engine.store().get(
            &GroupResource::new("", "namespaces"),
            &(String::new(), request.namespace.clone()),
        );
        labels(ns.as_deref())
    };
    selector_matches(&hook.namespace_selector, &labels)
}

/// `objectSelector` (`predicates/object/matcher.go`): the new or the old object's labels.
fn object_matches(hook: &Hook, request: &Request) -> ApiResult<bool> {
    if is_empty_selector(&hook.object_selector) {
        return Ok(true);
    }
    Ok(
        selector_matches(&hook.object_selector, &labels(request.object.as_ref()))?
            || selector_matches(&hook.object_selector, &labels(request.old_object.as_ref()))?,
    )
}

/// The `matchConditions` (CEL over `object`, `oldObject` and `request`): false when any
/// is false, true when all are true, else the first error (`matchconditions/matcher.go`).
fn conditions_match(hook: &Hook, review: &Value) -> Result<bool, String> {
    let mut ctx = cel::Context::default().with_all();
    for (var, key) in [
        ("object", "object"),
        ("oldObject", "oldObject"),
        ("request", ""),
    ] {
        let value = if key.is_empty() {
            review.clone()
        } else {
            review.get(key).cloned().unwrap_or(Value::Null)
        };
        ctx.add_variable(var, value)
            .map_err(|err| format!("{var}: {err}"))?;
    }
    let mut first_error = None;
    for (name, expression) in &hook.match_conditions {
        let outcome = cel::Program::compile(expression)
            .map_err(|err| format!("compilation failed: {err}"))
            .and_then(|p| p.execute(&ctx).map_err(|err| err.to_string()));
        match outcome {
            Ok(cel::Value::Bool(false)) => return Ok(false),
            Ok(cel::Value::Bool(true)) => {}
            Ok(other) => {
                first_error.get_or_insert(format!(
                    "matchCondition {name:?}: expected a bool, got {other:?}"
                ));
            }
            Err(err) => {
                first_error.get_or_insert(format!("matchCondition {name:?}: {err}"));
            }
        }
    }
    match first_error {
        Some(err) => Err(err),
        None => Ok(true),
    }
}
