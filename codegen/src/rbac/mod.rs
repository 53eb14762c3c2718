//! RBAC markers → `ClusterRole` / `Role` manifests (controller-gen's `rbac` generator,
//! `sigs.k8s.io/controller-tools/pkg/rbac/parser.go`), so a controller's permissions are
//! declared beside the code that needs them:
//!
//! ```text
//! // +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update
//! // +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
//! ```
//!
//! * [`RuleMarker::from_args`]: one marker's arguments (`groups`, `resources`,
//!   `resourceNames`, `verbs`, `urls`, `namespace`, `roleName`; lists `;`-separated;
//!   `core` is the core group `""`).
//! * [`normalize`]: controller-gen's merge: rules that differ only in verbs, only in
//!   resources, only in groups or only in URLs become one; every list sorted and
//!   de-duplicated; a `*` verb stands alone; rules sorted.
//! * [`roles`]: one `ClusterRole` (no `namespace`) or `Role` per namespace and role name,
//!   sorted by namespace then name.
//! * `files` (feature `files`): the CLI's `rbac` command: every marker in the `.rs` files
//!   of a directory, `update` / `verify` of the role file.
//! * `audit` (feature `files`): `rbac --from-audit`: the markers, and the role, that allow
//!   the requests an audit log recorded.
//! * A [`RuleMarker`] prints as its marker (`Display`), which reads back as the same
//!   marker.

#[cfg(feature = "files")]
pub mod audit;
#[cfg(feature = "files")]
pub mod files;
mod print;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

/// The default role name, controller-gen's (`rbac:roleName=manager-role` in kubebuilder's
/// Makefile).
pub const DEFAULT_ROLE_NAME: &str = "manager-role";

/// One `+kubebuilder:rbac` marker.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleMarker {
    /// API groups (`""` is the core group).
    pub groups: Vec<String>,
    /// Resources, with subresources as `deployments/status`.
    pub resources: Vec<String>,
    /// Object names the rule is limited to.
    pub resource_names: Vec<String>,
    /// Verbs (`get`, `list`, ..., `*`).
    pub verbs: Vec<String>,
    /// Non-resource URLs (`/metrics`).
    pub urls: Vec<String>,
    /// A `Role` in this namespace instead of the `ClusterRole`.
    pub namespace: Option<String>,
    /// A role name other than the generator's.
    pub role_name: Option<String>,
}

fn list(v: &str) -> Vec<String> {
    v.split(';').map(|s| s.trim().to_owned()).collect()
}

impl RuleMarker {
    /// Reads a marker's `key=value` arguments; `Err` says what is wrong.
    pub fn from_args(args: &[(String, String)]) -> Result<Self, String> {
        let mut rule = RuleMarker::default();
        for (k, v) in args {
            match k.as_str() {
                "groups" => rule.groups = list(v),
                "resources" => rule.resources = non_empty(k, v)?,
                "resourceNames" => rule.resource_names = non_empty(k, v)?,
                "verbs" => rule.verbs = non_empty(k, v)?,
                "urls" => rule.urls = non_empty(k, v)?,
                "namespace" if !v.is_empty() => rule.namespace = Some(v.clone()),
                "roleName" if !v.is_empty() => rule.role_name = Some(v.clone()),
                "namespace" | "roleName" => return Err(format!("`{k}` is empty")),
                other => {
                    return Err(format!(
                        "unknown argument `{other}` (expected groups, resources, resourceNames, verbs, urls, namespace, roleName)"
                    ));
                }
            }
        }
        if rule.verbs.is_empty() {
            return Err("needs `verbs=...`".into());
        }
        if rule.resources.is_empty() && rule.urls.is_empty() {
            return Err("needs `resources=...` or `urls=...`".into());
        }
        if !rule.urls.is_empty() && (!rule.resources.is_empty() || rule.namespace.is_some()) {
            // kube-apiserver's RBAC validation: non-resource URLs only in ClusterRoles,
            // and never in a rule with resources.
            return Err("`urls` cannot be combined with `resources` or `namespace`".into());
        }
        for g in &mut rule.groups {
            if g == "core" {
                g.clear();
            }
        }
        Ok(rule)
    }
}

fn non_empty(key: &str, v: &str) -> Result<Vec<String>, String> {
    let items = list(v);
    if items.iter().any(String::is_empty) {
        return Err(format!("`{key}={v}` has an empty item"));
    }
    Ok(items)
}

/// One rule of a role, every list sorted and de-duplicated.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct PolicyRule {
    /// `apiGroups`.
    pub groups: BTreeSet<String>,
    /// `resources`.
    pub resources: BTreeSet<String>,
    /// `resourceNames`.
    pub resource_names: BTreeSet<String>,
    /// `nonResourceURLs`.
    pub urls: BTreeSet<String>,
    /// `verbs`.
    pub verbs: BTreeSet<String>,
}

impl PolicyRule {
    /// The rule as `rbac.authorization.k8s.io/v1` JSON (empty lists omitted, as the Go
    /// types' `omitempty` does).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for (key, items) in [
            ("apiGroups", &self.groups),
            ("nonResourceURLs", &self.urls),
            ("resourceNames", &self.resource_names),
            ("resources", &self.resources),
            ("verbs", &self.verbs),
        ] {
            if !items.is_empty() {
                m.insert(key.to_owned(), json!(items));
            }
        }
        Value::Object(m)
    }
}

/// Which of a rule's lists a merge step unions (the others must be equal).
#[derive(Clone, Copy)]
enum Part {
    Verbs,
    Resources,
    Groups,
    Urls,
}

fn merge(rules: Vec<PolicyRule>, part: Part) -> Vec<PolicyRule> {
    let mut merged: BTreeMap<PolicyRule, BTreeSet<String>> = BTreeMap::new();
    for mut rule in rules {
        let field = match part {
            Part::Verbs => &mut rule.verbs,
            Part::Resources => &mut rule.resources,
            Part::Groups => &mut rule.groups,
            Part::Urls => &mut rule.urls,
        };
        let taken = std::mem::take(field);
        merged.entry(rule).or_default().extend(taken);
    }
    merged
        .into_iter()
        .map(|(mut rule, items)| {
            match part {
                Part::Verbs => rule.verbs = items,
                Part::Resources => rule.resources = items,
                Part::Groups => rule.groups = items,
                Part::Urls => rule.urls = items,
            }
            rule
        })
        .collect()
}

/// controller-gen's `NormalizeRules`: one rule per resource first, then merges of rules
/// that differ only in verbs, then only in resources, only in groups, only in URLs.
pub fn normalize(markers: &[RuleMarker]) -> Vec<PolicyRule> {
    let mut rules = Vec::new();
    for m in markers {
        let base = PolicyRule {
            groups: m.groups.iter().cloned().collect(),
            resources: BTreeSet::new(),
            resource_names: m.resource_names.iter().cloned().collect(),
            urls: m.urls.iter().cloned().collect(),
            verbs: m.verbs.iter().cloned().collect(),
        };
        if m.resources.is_empty() {
            rules.push(base);
        } else {
            for r in &m.resources {
                let mut rule = base.clone();
                rule.resources.insert(r.clone());
                rules.push(rule);
            }
        }
    }
    let mut rules = merge(rules, Part::Verbs);
    for part in [Part::Resources, Part::Groups, Part::Urls] {
        rules = merge(rules, part);
    }
    for rule in &mut rules {
        if rule.verbs.contains("*") {
            rule.verbs = BTreeSet::from(["*".to_owned()]);
        }
    }
    rules.sort();
    rules
}

/// The roles of `markers`: a `ClusterRole` named `role_name` for markers without a
/// namespace, a `Role` per namespace; a marker's `roleName` overrides the name. Sorted by
/// namespace, then name.
pub fn roles(markers: &[RuleMarker], role_name: &str) -> Vec<Value> {
    let mut grouped: BTreeMap<(String, String), Vec<RuleMarker>> = BTreeMap::new();
    for m in markers {
        let name = m.role_name.clone().unwrap_or_else(|| role_name.to_owned());
        grouped
            .entry((m.namespace.clone().unwrap_or_default(), name))
            .or_default()
            .push(m.clone());
    }
    grouped
        .into_iter()
        .map(|((namespace, name), markers)| {
            let rules: Vec<Value> = normalize(&markers)
                .iter()
                .map(PolicyRule::to_json)
                .collect();
            let (kind, metadata) = if namespace.is_empty() {
                ("ClusterRole", json!({"name": name}))
            } else {
                ("Role", json!({"name": name, "namespace": namespace}))
            };
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": kind,
                "metadata": metadata,
                "rules": rules,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(args: &str) -> RuleMarker {
        let args = crate::markers::value::split_args(args).expect("args");
        RuleMarker::from_args(&args).expect("rule")
    }

    fn rules(markers: &[&str]) -> Vec<Value> {
        let markers: Vec<RuleMarker> = markers.iter().map(|m| marker(m)).collect();
        normalize(&markers)
            .iter()
            .map(PolicyRule::to_json)
            .collect()
    }

    // Behaviours of controller-tools' pkg/rbac/parser_test.go and NormalizeRules.
    #[test]
    fn rules_that_differ_in_verbs_only_merge_and_core_is_the_empty_group() {
        assert_eq!(
            rules(&[
                "groups=core,resources=pods,verbs=get",
                r#"groups="",resources=pods,verbs=list;get"#,
            ]),
            vec![json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]})]
        );
    }

    #[test]
    fn rules_that_differ_in_resources_or_groups_only_merge() {
        assert_eq!(
            rules(&[
                "groups=apps,resources=deployments,verbs=get;list",
                "groups=apps,resources=statefulsets,verbs=list;get",
                "groups=batch,resources=deployments;statefulsets,verbs=get;list",
            ]),
            vec![json!({
                "apiGroups": ["apps", "batch"],
                "resources": ["deployments", "statefulsets"],
                "verbs": ["get", "list"],
            })]
        );
    }

    #[test]
    fn a_star_verb_stands_alone_and_urls_merge() {
        assert_eq!(
            rules(&[
                "groups=apps,resources=deployments,verbs=get;*",
                "urls=/metrics,verbs=get",
                "urls=/healthz,verbs=get",
            ]),
            vec![
                json!({"nonResourceURLs": ["/healthz", "/metrics"], "verbs": ["get"]}),
                json!({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]}),
            ]
        );
    }

    #[test]
    fn resource_names_keep_rules_apart() {
        assert_eq!(
            rules(&[
                "groups=coordination.k8s.io,resources=leases,verbs=get;update,resourceNames=my-op",
                "groups=coordination.k8s.io,resources=leases,verbs=create",
            ])
            .len(),
            2
        );
    }

    #[test]
    fn namespaces_and_role_names_make_separate_roles() {
        let markers = [
            marker("groups=apps,resources=deployments,verbs=get"),
            marker(r#"groups="",resources=secrets,verbs=get,namespace=infra"#),
            marker("groups=apps,resources=deployments,verbs=list,roleName=reader"),
        ];
        let roles = roles(&markers, DEFAULT_ROLE_NAME);
        let names: Vec<(&str, &str)> = roles
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap_or_default(),
                    r["metadata"]["name"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("ClusterRole", "manager-role"),
                ("ClusterRole", "reader"),
                ("Role", "manager-role")
            ]
        );
        assert_eq!(roles[2]["metadata"]["namespace"], "infra");
    }

    #[test]
    fn malformed_markers_say_what_is_wrong() {
        let err = |args: &str| {
            RuleMarker::from_args(&crate::markers::value::split_args(args).expect("args"))
                .expect_err(args)
        };
        assert!(err("groups=apps,resources=deployments").contains("verbs"));
        assert!(err("groups=apps,verbs=get").contains("resources"));
        assert!(err("groups=apps,resources=pods,verbs=get,verb=list").contains("`verb`"));
        assert!(err("urls=/metrics,resources=pods,verbs=get").contains("urls"));
        assert!(err("groups=apps,resources=pods;,verbs=get").contains("empty item"));
    }
}
