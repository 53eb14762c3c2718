//! ClusterRole aggregation, the computation (kube's
//! `pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`, `syncClusterRole`):
//! a ClusterRole with `aggregationRule.clusterRoleSelectors` gets the rules of every
//! other ClusterRole a selector matches — selectors in order, the roles each matches in
//! name order, each rule once. The controller that keeps the rules current is
//! `crate::controllers` `clusterrole_aggregation`; the bootstrap policy uses this too.

use std::sync::Arc;

use serde_json::Value;

use super::rule::PolicyRule;

/// The `clusterRoleSelectors` of `role`, or `None` when it aggregates nothing.
pub(crate) fn selectors(role: &Value) -> Option<&Vec<Value>> {
    role.pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
}

/// Whether the `metav1.LabelSelector` `selector` matches the labels of `obj`
/// (`LabelSelectorAsSelector`: `matchLabels` and `matchExpressions` with `In`, `NotIn`,
/// `Exists`, `DoesNotExist`; an empty selector matches everything; `None` for a selector
/// that does not convert, which matches nothing).
pub(crate) fn selector_matches(selector: &Value, obj: &Value) -> Option<bool> {
    let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    if let Some(match_labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in match_labels {
            if label(k) != Some(v.as_str()?) {
                return Some(false);
            }
        }
    }
    if let Some(exprs) = selector.get("matchExpressions").and_then(Value::as_array) {
        for expr in exprs {
            let key = expr.get("key").and_then(Value::as_str)?;
            let values: Vec<&str> = expr
                .get("values")
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let ok = match expr.get("operator").and_then(Value::as_str)? {
                "In" => label(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => return None,
            };
            if !ok {
                return Some(false);
            }
        }
    }
    Some(true)
}

/// The rules `role` aggregates from `all` (every ClusterRole), or `None` when it has no
/// aggregation rule.
pub(crate) fn aggregated_rules(role: &Value, all: &[Arc<Value>]) -> Option<Vec<Value>> {
    let selectors = selectors(role)?;
    let name = crate::meta::name(role);
    let mut sorted: Vec<&Arc<Value>> = all.iter().collect();
    sorted.sort_by(|a, b| crate::meta::name(a).cmp(crate::meta::name(b)));
    let mut rules: Vec<Value> = Vec::new();
    let mut seen: Vec<PolicyRule> = Vec::new();
    for selector in selectors {
        for other in &sorted {
            if crate::meta::name(other) == name || selector_matches(selector, other) != Some(true) {
                continue;
            }
            for rule in other
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let parsed = PolicyRule::from_value(rule);
                if !seen.contains(&parsed) {
                    seen.push(parsed);
                    rules.push(rule.clone());
                }
            }
        }
    }
    Some(rules)
}

#[cfg(test)]
mod tests {
    //! After kube's `clusterroleaggregation_controller_test.go` (`TestSyncClusterRole`).

    use serde_json::json;

    use super::*;

    #[test]
    fn unions_the_rules_of_matching_roles_once() {
        let agg = json!({"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [
            {"matchLabels": {"foo": "bar"}},
            {"matchExpressions": [{"key": "other", "operator": "Exists"}]},
        ]}});
        let r = |verb: &str| json!({"verbs": [verb], "apiGroups": [""], "resources": ["pods"]});
        let all = vec![
            Arc::new(
                json!({"metadata": {"name": "b", "labels": {"foo": "bar"}}, "rules": [r("get"), r("list")]}),
            ),
            Arc::new(
                json!({"metadata": {"name": "a", "labels": {"foo": "bar"}}, "rules": [r("list")]}),
            ),
            Arc::new(
                json!({"metadata": {"name": "c", "labels": {"other": ""}}, "rules": [r("get"), r("watch")]}),
            ),
            Arc::new(
                json!({"metadata": {"name": "d", "labels": {"foo": "baz"}}, "rules": [r("delete")]}),
            ),
            agg.clone().into(),
        ];
        assert_eq!(
            aggregated_rules(&agg, &all),
            Some(vec![r("list"), r("get"), r("watch")])
        );
        assert_eq!(
            aggregated_rules(&json!({"metadata": {"name": "x"}}), &all),
            None
        );
    }

    #[test]
    fn selectors_match_like_label_selectors() {
        let obj = json!({"metadata": {"labels": {"a": "1"}}});
        assert_eq!(selector_matches(&json!({}), &obj), Some(true));
        assert_eq!(
            selector_matches(&json!({"matchLabels": {"a": "2"}}), &obj),
            Some(false)
        );
        let not_in =
            json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]});
        assert_eq!(selector_matches(&not_in, &obj), Some(false));
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "Near"}]});
        assert_eq!(selector_matches(&bad, &obj), None);
    }
}
