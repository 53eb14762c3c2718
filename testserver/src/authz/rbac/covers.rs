//! Whether one set of rules covers another (kube's
//! `staging/src/k8s.io/component-helpers/auth/rbac/validation/policy_comparator.go`:
//! `Covers`, `BreakdownRule`) and the compaction of the uncovered rules for messages
//! (`pkg/registry/rbac/validation/policy_compact.go`: `CompactRules`).

use super::rule::{ALL, PolicyRule};

/// `Covers`: whether `owner` covers every rule of `servant`, and the atomic rules it
/// does not cover.
pub(crate) fn covers(owner: &[PolicyRule], servant: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    let uncovered: Vec<PolicyRule> = servant
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect();
    (uncovered.is_empty(), uncovered)
}

/// `BreakdownRule`: one rule per group, resource, verb (and resource name); one per
/// non-resource URL and verb.
pub(crate) fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    let one = |s: &String| vec![s.clone()];
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: one(verb),
                    ..PolicyRule::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(base);
                } else {
                    for name in &rule.resource_names {
                        out.push(PolicyRule {
                            resource_names: one(name),
                            ..base.clone()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: one(verb),
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|i| has(set, i))
}

/// `resourceCoversAll`.
fn resource_covers_all(set: &[String], covers: &[String]) -> bool {
    if has(set, ALL) || has_all(set, covers) {
        return true;
    }
    covers.iter().all(|path| {
        has(set, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(set, &format!("*/{sub}")))
    })
}

/// `nonResourceURLCovers`.
fn non_resource_url_covers(owner: &str, sub: &str) -> bool {
    owner == sub || (owner.ends_with('*') && sub.starts_with(owner.trim_end_matches('*')))
}

/// `ruleCovers`: whether `owner` covers the atomic `sub`.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, ALL) || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resource_covers_all(&owner.resources, &sub.resources);
    let urls = sub.non_resource_urls.iter().all(|path| {
        owner
            .non_resource_urls
            .iter()
            .any(|o| non_resource_url_covers(o, path))
    });
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// `CompactRules`: the rules with one group and one resource and nothing else but verbs
/// merged per group and resource (their verbs appended in order); the others as they are.
pub(crate) fn compact(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.is_empty()
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            out.push(rule.clone());
            continue;
        }
        match simple
            .iter_mut()
            .find(|s| s.api_groups == rule.api_groups && s.resources == rule.resources)
        {
            Some(existing) => existing.verbs.extend(rule.verbs.iter().cloned()),
            None => simple.push(rule.clone()),
        }
    }
    out.extend(simple);
    out
}

#[cfg(test)]
mod tests {
    //! Cases from kube's `policy_comparator_test.go` and `policy_compact_test.go`.

    use super::*;

    fn r(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        PolicyRule::resource(verbs, groups, resources)
    }

    #[test]
    fn covers_exact_and_star() {
        let owner = vec![r(&["*"], &["*"], &["*"])];
        assert!(covers(&owner, &[r(&["get"], &[""], &["pods"])]).0);
        let owner = vec![r(&["get", "list"], &[""], &["pods"])];
        assert!(covers(&owner, &[r(&["get"], &[""], &["pods"])]).0);
        let (ok, missing) = covers(
            &owner,
            &[r(&["get", "delete"], &[""], &["pods", "secrets"])],
        );
        assert!(!ok);
        assert_eq!(
            missing,
            vec![
                r(&["delete"], &[""], &["pods"]),
                r(&["get"], &[""], &["secrets"]),
                r(&["delete"], &[""], &["secrets"]),
            ]
        );
    }

    #[test]
    fn covers_subresources_and_names() {
        // TestCoversSubresourceWildcard: */scale covers deployments/scale.
        let owner = vec![r(&["get"], &["*"], &["*/scale"])];
        assert!(covers(&owner, &[r(&["get"], &["apps"], &["deployments/scale"])]).0);
        assert!(!covers(&owner, &[r(&["get"], &["apps"], &["deployments"])]).0);
        // A named owner rule does not cover an unnamed servant rule.
        let owner = vec![r(&["get"], &[""], &["secrets"]).names(&["a"])];
        assert!(!covers(&owner, &[r(&["get"], &[""], &["secrets"])]).0);
        assert!(covers(&owner, &[r(&["get"], &[""], &["secrets"]).names(&["a"])]).0);
    }

    #[test]
    fn covers_non_resource_urls() {
        let owner = vec![PolicyRule::urls(&["get"], &["/apis/*"])];
        assert!(covers(&owner, &[PolicyRule::urls(&["get"], &["/apis/apps"])]).0);
        assert!(!covers(&owner, &[PolicyRule::urls(&["get"], &["/healthz"])]).0);
        assert!(!covers(&owner, &[PolicyRule::urls(&["post"], &["/apis/apps"])]).0);
    }

    #[test]
    fn compacts_simple_rules_by_resource() {
        let rules = vec![
            r(&["get"], &[""], &["pods"]),
            r(&["list"], &[""], &["pods"]),
            r(&["get"], &[""], &["secrets"]).names(&["a"]),
        ];
        assert_eq!(
            compact(&rules),
            vec![
                r(&["get"], &[""], &["secrets"]).names(&["a"]),
                r(&["get", "list"], &[""], &["pods"]),
            ]
        );
    }
}
