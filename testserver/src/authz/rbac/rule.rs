//! One RBAC `PolicyRule` and whether it allows a request: kube's
//! `pkg/apis/rbac/v1/evaluation_helpers.go` (`VerbMatches`, `APIGroupMatches`,
//! `ResourceMatches`, `ResourceNameMatches`, `NonResourceURLMatches`, `CompactString`) and
//! `plugin/pkg/auth/authorizer/rbac/rbac.go` (`RuleAllows`).

use serde_json::{Value, json};

use crate::authz::Attributes;

/// `*`: every verb, group, resource or non-resource URL.
pub(crate) const ALL: &str = "*";

/// A `PolicyRule` of a Role or ClusterRole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PolicyRule {
    /// `verbs`.
    pub(crate) verbs: Vec<String>,
    /// `apiGroups`.
    pub(crate) api_groups: Vec<String>,
    /// `resources` (`pods`, `pods/status`, `*/scale`, `*`).
    pub(crate) resources: Vec<String>,
    /// `resourceNames`.
    pub(crate) resource_names: Vec<String>,
    /// `nonResourceURLs` (`/healthz`, `/apis/*`).
    pub(crate) non_resource_urls: Vec<String>,
}

/// The strings of the array at `key` of `rule` (non-strings are skipped: a stored object
/// passed validation, and a malformed one must not panic the authorizer).
fn strings(rule: &Value, key: &str) -> Vec<String> {
    rule.get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl PolicyRule {
    /// A rule of `verbs` on `resources` of `groups` (kube's `rbacv1helpers.NewRule(...)
    /// .Groups(...).Resources(...)`).
    pub(crate) fn resource(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Self {
        PolicyRule {
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            api_groups: groups.iter().map(|s| s.to_string()).collect(),
            resources: resources.iter().map(|s| s.to_string()).collect(),
            ..PolicyRule::default()
        }
    }

    /// A rule of `verbs` on the non-resource `urls` (`NewRule(...).URLs(...)`).
    pub(crate) fn urls(verbs: &[&str], urls: &[&str]) -> Self {
        PolicyRule {
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            non_resource_urls: urls.iter().map(|s| s.to_string()).collect(),
            ..PolicyRule::default()
        }
    }

    /// `self` limited to `names` (`.Names(...)`).
    #[cfg(test)]
    pub(crate) fn names(mut self, names: &[&str]) -> Self {
        self.resource_names = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The rule in its JSON form.
    pub(crate) fn from_value(rule: &Value) -> Self {
        PolicyRule {
            verbs: strings(rule, "verbs"),
            api_groups: strings(rule, "apiGroups"),
            resources: strings(rule, "resources"),
            resource_names: strings(rule, "resourceNames"),
            non_resource_urls: strings(rule, "nonResourceURLs"),
        }
    }

    /// The `rules` of a Role or ClusterRole object.
    pub(crate) fn of_role(role: &Value) -> Vec<PolicyRule> {
        role.get("rules")
            .and_then(Value::as_array)
            .map(|rules| rules.iter().map(PolicyRule::from_value).collect())
            .unwrap_or_default()
    }

    /// The JSON form, without empty lists (as the API serialises `omitempty` fields).
    pub(crate) fn to_value(&self) -> Value {
        let mut out = serde_json::Map::new();
        for (key, list) in [
            ("verbs", &self.verbs),
            ("apiGroups", &self.api_groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("nonResourceURLs", &self.non_resource_urls),
        ] {
            if !list.is_empty() || key == "verbs" {
                out.insert(key.into(), json!(list));
            }
        }
        Value::Object(out)
    }

    /// `VerbMatches`.
    pub(crate) fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == ALL || v == verb)
    }

    /// `APIGroupMatches`.
    pub(crate) fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == ALL || g == group)
    }

    /// `ResourceMatches`: `*`, the exact `resource[/subresource]`, or `*/subresource`
    /// when a subresource is asked for.
    pub(crate) fn resource_matches(&self, combined: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            r == ALL
                || r == combined
                || (!subresource.is_empty()
                    && r.len() == subresource.len() + 2
                    && r.starts_with("*/")
                    && r.ends_with(subresource))
        })
    }

    /// `ResourceNameMatches`: no names means every name.
    pub(crate) fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    /// `NonResourceURLMatches`: `*`, the exact path, or a prefix ending in `*`.
    pub(crate) fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| {
            u == ALL
                || u == path
                || u.strip_suffix('*')
                    .is_some_and(|_| path.starts_with(u.trim_end_matches('*')))
        })
    }

    /// `RuleAllows`: whether this rule allows the request `attributes` describe.
    pub(crate) fn allows(&self, attributes: &Attributes) -> bool {
        if attributes.resource_request {
            let combined;
            let resource = if attributes.subresource.is_empty() {
                attributes.resource.as_str()
            } else {
                combined = format!("{}/{}", attributes.resource, attributes.subresource);
                combined.as_str()
            };
            self.verb_matches(&attributes.verb)
                && self.api_group_matches(&attributes.api_group)
                && self.resource_matches(resource, &attributes.subresource)
                && self.resource_name_matches(&attributes.name)
        } else {
            self.verb_matches(&attributes.verb) && self.non_resource_url_matches(&attributes.path)
        }
    }

    /// `CompactString`: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`, the lists
    /// Go-quoted, empty ones left out (escalation messages).
    pub(crate) fn compact_string(&self) -> String {
        let parts: Vec<String> = [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(label, list)| format!("{label}:{}", go_quote_list(list)))
        .collect();
        format!("{{{}}}", parts.join(", "))
    }
}

/// Go's `%q` of a string.
pub(crate) fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub(crate) fn go_quote_list(list: &[String]) -> String {
    let quoted: Vec<String> = list.iter().map(|s| go_quote(s)).collect();
    format!("[{}]", quoted.join(" "))
}

#[cfg(test)]
mod tests {
    //! Ported from kube's `plugin/pkg/auth/authorizer/rbac/rbac_test.go`
    //! (`TestRuleMatches`) and `pkg/apis/rbac/v1/evaluation_helpers_test.go`.

    use super::*;

    fn resource_request(
        verb: &str,
        group: &str,
        resource: &str,
        sub: &str,
        name: &str,
    ) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    fn path_request(verb: &str, path: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            path: path.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn rule_matches_table() {
        // (rule, request, allowed) — TestRuleMatches's cases.
        let star = PolicyRule::resource(&["*"], &["*"], &["*"]);
        let cases: Vec<(PolicyRule, Attributes, bool)> = vec![
            (
                star.clone(),
                resource_request("get", "", "pods", "", ""),
                true,
            ),
            (
                star.clone(),
                resource_request("get", "apps", "deployments", "scale", "x"),
                true,
            ),
            (star.clone(), path_request("get", "/healthz"), false),
            // verbs
            (
                PolicyRule::resource(&["get"], &[""], &["pods"]),
                resource_request("get", "", "pods", "", ""),
                true,
            ),
            (
                PolicyRule::resource(&["get"], &[""], &["pods"]),
                resource_request("list", "", "pods", "", ""),
                false,
            ),
            // groups
            (
                PolicyRule::resource(&["get"], &[""], &["pods"]),
                resource_request("get", "apps", "pods", "", ""),
                false,
            ),
            (
                PolicyRule::resource(&["get"], &["*"], &["pods"]),
                resource_request("get", "apps", "pods", "", ""),
                true,
            ),
            // subresources: pods does not cover pods/status, pods/status does, */status does
            (
                PolicyRule::resource(&["get"], &[""], &["pods"]),
                resource_request("get", "", "pods", "status", ""),
                false,
            ),
            (
                PolicyRule::resource(&["get"], &[""], &["pods/status"]),
                resource_request("get", "", "pods", "status", ""),
                true,
            ),
            (
                PolicyRule::resource(&["get"], &[""], &["pods/status"]),
                resource_request("get", "", "pods", "", ""),
                false,
            ),
            (
                PolicyRule::resource(&["get"], &["*"], &["*/scale"]),
                resource_request("get", "apps", "deployments", "scale", ""),
                true,
            ),
            (
                PolicyRule::resource(&["get"], &["*"], &["*/scale"]),
                resource_request("get", "apps", "deployments", "status", ""),
                false,
            ),
            (
                PolicyRule::resource(&["get"], &["*"], &["*/scale"]),
                resource_request("get", "apps", "deployments", "", ""),
                false,
            ),
            (
                PolicyRule::resource(&["get"], &["*"], &["*/scale"]),
                resource_request("get", "", "scale", "", ""),
                false,
            ),
            // resourceNames
            (
                PolicyRule::resource(&["get"], &[""], &["pods"]).names(&["a"]),
                resource_request("get", "", "pods", "", "a"),
                true,
            ),
            (
                PolicyRule::resource(&["get"], &[""], &["pods"]).names(&["a"]),
                resource_request("get", "", "pods", "", "b"),
                false,
            ),
            (
                PolicyRule::resource(&["list"], &[""], &["pods"]).names(&["a"]),
                resource_request("list", "", "pods", "", ""),
                false,
            ),
            // non-resource URLs
            (
                PolicyRule::urls(&["get"], &["/healthz"]),
                path_request("get", "/healthz"),
                true,
            ),
            (
                PolicyRule::urls(&["get"], &["/healthz"]),
                path_request("get", "/healthz/ping"),
                false,
            ),
            (
                PolicyRule::urls(&["get"], &["/apis/*"]),
                path_request("get", "/apis/apps/v1"),
                true,
            ),
            (
                PolicyRule::urls(&["get"], &["/apis/*"]),
                path_request("get", "/apis"),
                false,
            ),
            (
                PolicyRule::urls(&["get"], &["/apis*"]),
                path_request("get", "/apis"),
                true,
            ),
            (
                PolicyRule::urls(&["*"], &["*"]),
                path_request("post", "/anything"),
                true,
            ),
            (
                PolicyRule::urls(&["get"], &["/healthz"]),
                resource_request("get", "", "pods", "", ""),
                false,
            ),
        ];
        for (i, (rule, request, allowed)) in cases.iter().enumerate() {
            assert_eq!(
                rule.allows(request),
                *allowed,
                "case {i}: {rule:?} {request:?}"
            );
        }
    }

    #[test]
    fn compact_string_is_kubes() {
        let rule = PolicyRule::resource(&["get", "list"], &[""], &["pods"]);
        assert_eq!(
            rule.compact_string(),
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}"#
        );
        let urls = PolicyRule::urls(&["get"], &["/healthz"]);
        assert_eq!(
            urls.compact_string(),
            r#"{NonResourceURLs:["/healthz"], Verbs:["get"]}"#
        );
        let named = PolicyRule::resource(&["get"], &[""], &["secrets"]).names(&["a"]);
        assert_eq!(
            named.compact_string(),
            r#"{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["get"]}"#
        );
    }

    #[test]
    fn parses_and_prints_json() {
        let v = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods", 3]});
        let rule = PolicyRule::from_value(&v);
        assert_eq!(rule, PolicyRule::resource(&["get"], &[""], &["pods"]));
        assert_eq!(
            rule.to_value(),
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
        );
        assert_eq!(
            PolicyRule::from_value(&json!("junk")),
            PolicyRule::default()
        );
    }
}
