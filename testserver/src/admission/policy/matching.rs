//! Whether a policy or binding applies to a request: kube-apiserver's
//! `admission/plugin/policy/matching/matching.go` with the webhook predicates it uses
//! (`webhook/predicates/rules`, `.../namespace`, `.../object`): the namespace selector,
//! then the object selector, then `excludeResourceRules`, then `resourceRules`
//! (with `resourceNames`), and `matchPolicy: Equivalent` across the versions of the
//! resource the server serves.

use serde_json::Value;

use super::{
    request::Request,
    spec::{MatchResources, NamedRule},
};
use crate::{engine::Engine, registry::GroupResource};

/// Why matching could not decide (a configuration error of the policy or binding, or a
/// missing namespace).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MatchError {
    /// A label selector that does not convert (`LabelSelectorAsSelector`).
    #[error("{0}")]
    Selector(String),
    /// The request's namespace is not in the store.
    #[error("namespaces \"{0}\" not found")]
    NamespaceNotFound(String),
}

/// Whether `selector` (a `metav1.LabelSelector`) matches `labels`; an empty selector
/// matches everything.
pub(crate) fn selector_matches(
    selector: &Value,
    labels: Option<&Value>,
) -> Result<bool, MatchError> {
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    if let Some(ml) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in ml {
            let want = v
                .as_str()
                .ok_or_else(|| MatchError::Selector(format!("matchLabels[{k}] is not a string")))?;
            if label(k) != Some(want) {
                return Ok(false);
            }
        }
    }
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let op = e
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ok = match op {
            "In" => label(key).is_some_and(|v| values.contains(&v)),
            "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
            "Exists" => label(key).is_some(),
            "DoesNotExist" => label(key).is_none(),
            other => {
                return Err(MatchError::Selector(format!(
                    "\"{other}\" is not a valid label selector operator"
                )));
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn selector_is_empty(s: Option<&Value>) -> bool {
    s.is_none_or(|s| {
        s.get("matchLabels")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty())
            && s.get("matchExpressions")
                .and_then(Value::as_array)
                .is_none_or(|a| a.is_empty())
    })
}

fn labels_of(obj: Option<&Value>) -> Option<&Value> {
    obj.and_then(|o| o.pointer("/metadata/labels"))
}

/// The Namespace object of `name` from the store.
pub(crate) fn namespace(engine: &Engine, name: &str) -> Option<std::sync::Arc<Value>> {
    engine.store().get(
        &GroupResource::new("", "namespaces"),
        &(String::new(), name.to_owned()),
    )
}

/// `namespace/matcher.go` `MatchNamespaceSelector`: cluster-scoped resources other
/// than namespaces always match; a Namespace request is matched on its own labels.
fn namespace_matches(
    engine: &Engine,
    req: &Request<'_>,
    m: &MatchResources,
) -> Result<bool, MatchError> {
    if req.namespace.is_empty() && !req.is_namespace_object() {
        return Ok(true);
    }
    let Some(selector) = m
        .namespace_selector
        .as_ref()
        .filter(|s| !selector_is_empty(Some(s)))
    else {
        return Ok(true);
    };
    if req.is_namespace_object() && req.subresource.is_empty() {
        let obj = if req.operation == "DELETE" {
            req.old_object
        } else {
            req.object
        };
        return selector_matches(selector, labels_of(obj));
    }
    let ns = namespace(engine, req.namespace)
        .ok_or_else(|| MatchError::NamespaceNotFound(req.namespace.to_owned()))?;
    selector_matches(selector, labels_of(Some(&ns)))
}

/// `object/matcher.go` `MatchObjectSelector`: the object or the old object matches.
fn object_matches(req: &Request<'_>, m: &MatchResources) -> Result<bool, MatchError> {
    let Some(selector) = m
        .object_selector
        .as_ref()
        .filter(|s| !selector_is_empty(Some(s)))
    else {
        return Ok(true);
    };
    let on = |o: Option<&Value>| -> Result<bool, MatchError> {
        match o {
            Some(o) => selector_matches(selector, labels_of(Some(o))),
            None => Ok(false),
        }
    };
    Ok(on(req.object)? || on(req.old_object)?)
}

fn listed(list: &[String], value: &str) -> bool {
    list.iter().any(|x| x == "*" || x == value)
}

/// `rules/rules.go`: operation, group, version, resource (with subresource) and scope.
fn rule_matches(rule: &NamedRule, req: &Request<'_>, version: &str) -> bool {
    let resource = rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
        (res == "*" || res == req.resource) && (sub == "*" || sub == req.subresource)
    });
    let scope = match rule.scope.as_deref() {
        None | Some("*") => true,
        Some("Namespaced") => !req.is_namespace_object() && !req.namespace.is_empty(),
        Some("Cluster") => req.is_namespace_object() || req.namespace.is_empty(),
        Some(_) => false,
    };
    listed(&rule.operations, req.operation)
        && listed(&rule.api_groups, req.group)
        && listed(&rule.api_versions, version)
        && resource
        && scope
}

fn name_matches(rule: &NamedRule, req: &Request<'_>) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == req.name)
}

/// `matchesResourceRules`: the request's own version first, then (Equivalent) the
/// other served versions of the same group and resource.
fn rules_match(engine: &Engine, rules: &[NamedRule], exact: bool, req: &Request<'_>) -> bool {
    if rules
        .iter()
        .any(|r| rule_matches(r, req, req.version) && name_matches(r, req))
    {
        return true;
    }
    if exact {
        return false;
    }
    let versions = engine.registry().versions(req.group);
    versions
        .iter()
        .filter(|v| v.as_str() != req.version)
        .filter(|v| engine.registry().get(req.group, v, req.resource).is_some())
        .any(|v| {
            rules
                .iter()
                .any(|r| rule_matches(r, req, v) && name_matches(r, req))
        })
}

/// `Matcher.Matches`: whether `m` selects the request. Selector errors count only when
/// the rules match (as in kube-apiserver).
pub(crate) fn matches(
    engine: &Engine,
    req: &Request<'_>,
    m: &MatchResources,
) -> Result<bool, MatchError> {
    let ns = namespace_matches(engine, req, m);
    if matches!(ns, Ok(false)) {
        return Ok(false);
    }
    let obj = object_matches(req, m);
    if matches!(obj, Ok(false)) {
        return Ok(false);
    }
    let exact = m.match_policy.as_deref() == Some("Exact");
    if rules_match(engine, &m.exclude_resource_rules, exact, req) {
        return Ok(false);
    }
    if !m.resource_rules.is_empty() && !rules_match(engine, &m.resource_rules, exact, req) {
        return Ok(false);
    }
    ns?;
    obj?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `rules/rules_test.go`: `*` matches resources without a subresource, `pods/*`
    /// every pods subresource, `*/status` every status.
    #[test]
    fn resources_match_with_subresources_and_wildcards() {
        let raw = |sub: &str| {
            json!({"operation": "UPDATE", "resource": {"group": "", "version": "v1", "resource": "pods"},
                   "subResource": sub, "namespace": "default"})
        };
        let rule = |res: &str| NamedRule {
            operations: vec!["*".into()],
            api_groups: vec!["".into()],
            api_versions: vec!["*".into()],
            resources: vec![res.into()],
            ..NamedRule::default()
        };
        let main = raw("");
        let status = raw("status");
        let (main, status) = (
            Request::parse(&main).expect("req"),
            Request::parse(&status).expect("req"),
        );
        assert!(rule_matches(&rule("*"), &main, "v1"));
        assert!(!rule_matches(&rule("*"), &status, "v1"));
        assert!(rule_matches(&rule("pods/*"), &status, "v1"));
        assert!(rule_matches(&rule("*/status"), &status, "v1"));
        assert!(rule_matches(&rule("pods/status"), &status, "v1"));
        assert!(!rule_matches(&rule("pods"), &status, "v1"));
        let cluster = NamedRule {
            scope: Some("Cluster".into()),
            ..rule("*")
        };
        assert!(!rule_matches(&cluster, &main, "v1"));
    }

    #[test]
    fn label_selectors_follow_metav1() {
        let labels = json!({"env": "prod"});
        let sel =
            json!({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]});
        assert_eq!(selector_matches(&sel, Some(&labels)), Ok(true));
        assert_eq!(
            selector_matches(&json!({"matchLabels": {"env": "dev"}}), Some(&labels)),
            Ok(false)
        );
        assert!(
            selector_matches(
                &json!({"matchExpressions": [{"key": "a", "operator": "Gt"}]}),
                None
            )
            .is_err()
        );
    }
}
