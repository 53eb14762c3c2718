//! Which rules apply to a user in a namespace (kube's
//! `pkg/registry/rbac/validation/rule.go`, `DefaultRuleResolver`): the rules of the roles
//! every ClusterRoleBinding naming the user grants, then those of the RoleBindings of the
//! namespace. Read straight from the store: the ClusterRoleBindings are one list (a
//! handful of objects), the RoleBindings a range scan of one namespace, each role one
//! lookup by key, so a request costs no scan of the whole store.

use std::sync::Arc;

use serde_json::Value;

use super::rule::{PolicyRule, go_quote};
use crate::{authn::UserInfo, registry::GroupResource, store::Store};

/// The RBAC API group.
pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";

/// Why a binding's role could not be read (`GetRoleReferenceRules`' errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RoleRefError {
    /// The role does not exist. Printed as the informer listers kube's authorizer reads
    /// through print it (`role.rbac.authorization.k8s.io "x" not found`); the registry's
    /// form is [`RoleRefError::registry_message`].
    #[error("{}.{GROUP} {} not found", .kind.to_lowercase(), go_quote(.name))]
    NotFound {
        /// `Role` or `ClusterRole`.
        kind: String,
        /// The role's name.
        name: String,
    },
    /// A `roleRef.kind` that is neither.
    #[error("unsupported role reference kind: {}", go_quote(.0))]
    UnsupportedKind(String),
}

impl RoleRefError {
    /// The message as the registry (kube's policy-based storage reads roles through it)
    /// prints it: `roles.rbac.authorization.k8s.io "x" not found`.
    pub(crate) fn registry_message(&self) -> String {
        match self {
            RoleRefError::NotFound { kind, name } => format!(
                "{}s.{GROUP} {} not found",
                kind.to_lowercase(),
                go_quote(name)
            ),
            other => other.to_string(),
        }
    }
}

/// A binding's `roleRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RoleRef {
    /// `apiGroup`.
    pub(crate) api_group: String,
    /// `Role` or `ClusterRole`.
    pub(crate) kind: String,
    /// The role's name.
    pub(crate) name: String,
}

impl RoleRef {
    /// The `roleRef` of a binding object.
    pub(crate) fn of(binding: &Value) -> Self {
        let s = |key: &str| {
            binding
                .pointer(&format!("/roleRef/{key}"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        RoleRef {
            api_group: s("apiGroup"),
            kind: s("kind"),
            name: s("name"),
        }
    }
}

/// Where a rule came from, described as kube's `clusterRoleBindingDescriber` and
/// `roleBindingDescriber` do (the authorizer's reason).
#[derive(Debug, Clone)]
pub(crate) struct Source<'a> {
    binding: &'a Value,
    subject: &'a Value,
}

impl Source<'_> {
    /// `ClusterRoleBinding "x" of ClusterRole "y" to User "z"`, or `RoleBinding "x/ns"
    /// of Role "y" to ServiceAccount "sa/ns"`.
    pub(crate) fn describe(&self) -> String {
        let binding_ns = crate::meta::namespace(self.binding);
        let role_ref = RoleRef::of(self.binding);
        let s = |key: &str| {
            self.subject
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (kind, name, sa_ns) = (s("kind"), s("name"), s("namespace"));
        let subject = if kind == "ServiceAccount" {
            let ns = if sa_ns.is_empty() { binding_ns } else { &sa_ns };
            format!("{kind} {}", go_quote(&format!("{name}/{ns}")))
        } else {
            format!("{kind} {}", go_quote(&name))
        };
        let name = crate::meta::name(self.binding);
        if binding_ns.is_empty() {
            format!(
                "ClusterRoleBinding {} of {} {} to {subject}",
                go_quote(name),
                role_ref.kind,
                go_quote(&role_ref.name)
            )
        } else {
            format!(
                "RoleBinding {} of {} {} to {subject}",
                go_quote(&format!("{name}/{binding_ns}")),
                role_ref.kind,
                go_quote(&role_ref.name)
            )
        }
    }
}

/// What a visitor of the rules sees: a rule and where it came from, or an error reading a
/// binding's role.
pub(crate) enum Visit<'a> {
    /// A rule granted by `source`.
    Rule(&'a Source<'a>, &'a PolicyRule),
    /// A binding names a role that cannot be read.
    Error(RoleRefError),
}

/// Reads the rules that apply to users from the roles and bindings of a store.
pub(crate) struct RuleResolver<'a> {
    store: &'a Store,
}

fn gr(resource: &str) -> GroupResource {
    GroupResource::new(GROUP, resource)
}

impl<'a> RuleResolver<'a> {
    /// A resolver over `store`.
    pub(crate) fn new(store: &'a Store) -> Self {
        RuleResolver { store }
    }

    /// `GetRoleReferenceRules`: the rules of the role `role_ref` names, for a binding in
    /// `namespace` (empty for a ClusterRoleBinding).
    pub(crate) fn role_reference_rules(
        &self,
        role_ref: &RoleRef,
        namespace: &str,
    ) -> Result<Vec<PolicyRule>, RoleRefError> {
        let (resource, ns) = match role_ref.kind.as_str() {
            "Role" => ("roles", namespace),
            "ClusterRole" => ("clusterroles", ""),
            other => return Err(RoleRefError::UnsupportedKind(other.to_string())),
        };
        let key = (ns.to_string(), role_ref.name.clone());
        match self.store.get(&gr(resource), &key) {
            Some(role) if !(resource == "roles" && ns.is_empty()) => Ok(PolicyRule::of_role(&role)),
            _ => Err(RoleRefError::NotFound {
                kind: role_ref.kind.clone(),
                name: role_ref.name.clone(),
            }),
        }
    }

    fn bindings(&self, resource: &str, namespace: Option<&str>) -> Vec<Arc<Value>> {
        self.store
            .list(&gr(resource), namespace, None, None, None, &|_| true)
            .map(|page| page.items)
            .unwrap_or_default()
    }

    /// `VisitRulesFor`: calls `visitor` with each rule that applies to `user` in
    /// `namespace` (ClusterRoleBindings first, then the namespace's RoleBindings) and each
    /// error met; stops when `visitor` returns false.
    pub(crate) fn visit_rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
        visitor: &mut dyn FnMut(Visit<'_>) -> bool,
    ) {
        let mut scopes = vec![self.bindings("clusterrolebindings", None)];
        if !namespace.is_empty() {
            scopes.push(self.bindings("rolebindings", Some(namespace)));
        }
        for (i, bindings) in scopes.iter().enumerate() {
            let binding_ns = if i == 0 { "" } else { namespace };
            for binding in bindings {
                let Some(subject) = applies_to(user, binding, binding_ns) else {
                    continue;
                };
                match self.role_reference_rules(&RoleRef::of(binding), binding_ns) {
                    Err(err) => {
                        if !visitor(Visit::Error(err)) {
                            return;
                        }
                    }
                    Ok(rules) => {
                        let source = Source { binding, subject };
                        for rule in &rules {
                            if !visitor(Visit::Rule(&source, rule)) {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }

    /// `RulesFor`: every rule that applies to `user` in `namespace`, and the errors met.
    pub(crate) fn rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
    ) -> (Vec<PolicyRule>, Vec<RoleRefError>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        self.visit_rules_for(user, namespace, &mut |visit| {
            match visit {
                Visit::Rule(_, rule) => rules.push(rule.clone()),
                Visit::Error(err) => errors.push(err),
            }
            true
        });
        (rules, errors)
    }
}

/// `appliesTo`: the first subject of `binding` that is `user`.
fn applies_to<'b>(user: &UserInfo, binding: &'b Value, namespace: &str) -> Option<&'b Value> {
    binding
        .get("subjects")?
        .as_array()?
        .iter()
        .find(|s| applies_to_user(user, s, namespace))
}

/// `appliesToUser`: a User by name, a Group by membership, a ServiceAccount by its user
/// name `system:serviceaccount:<namespace>:<name>` (the namespace defaulting to the
/// binding's).
fn applies_to_user(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let s = |key: &str| subject.get(key).and_then(Value::as_str).unwrap_or_default();
    match s("kind") {
        "User" => user.name == s("name"),
        "Group" => user.in_group(s("name")),
        "ServiceAccount" => {
            let sa_ns = if s("namespace").is_empty() {
                namespace
            } else {
                s("namespace")
            };
            !sa_ns.is_empty()
                && user
                    .name
                    .strip_prefix("system:serviceaccount:")
                    .and_then(|rest| rest.split_once(':'))
                    .is_some_and(|(ns, name)| ns == sa_ns && name == s("name"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    //! After kube's `pkg/registry/rbac/validation/rule_test.go` (`TestAppliesTo`,
    //! `TestDefaultRuleResolver`).

    use serde_json::json;

    use super::*;

    #[test]
    fn subjects_apply_as_in_kube() {
        let alice = UserInfo::new("alice", ["devs"]);
        let sa = UserInfo::new(
            "system:serviceaccount:ns1:builder",
            ["system:serviceaccounts"],
        );
        let cases = [
            (json!({"kind": "User", "name": "alice"}), &alice, "", true),
            (json!({"kind": "User", "name": "bob"}), &alice, "", false),
            (json!({"kind": "Group", "name": "devs"}), &alice, "", true),
            (json!({"kind": "Group", "name": "alice"}), &alice, "", false),
            (
                json!({"kind": "ServiceAccount", "name": "builder"}),
                &sa,
                "ns1",
                true,
            ),
            (
                json!({"kind": "ServiceAccount", "name": "builder"}),
                &sa,
                "ns2",
                false,
            ),
            (
                json!({"kind": "ServiceAccount", "name": "builder"}),
                &sa,
                "",
                false,
            ),
            (
                json!({"kind": "ServiceAccount", "name": "builder", "namespace": "ns1"}),
                &sa,
                "ns2",
                true,
            ),
            (json!({"kind": "Robot", "name": "alice"}), &alice, "", false),
        ];
        for (i, (subject, user, ns, applies)) in cases.iter().enumerate() {
            assert_eq!(applies_to_user(user, subject, ns), *applies, "case {i}");
        }
    }

    #[test]
    fn sources_are_described_as_kube_does() {
        let crb =
            json!({"metadata": {"name": "x"}, "roleRef": {"kind": "ClusterRole", "name": "y"}});
        let user = json!({"kind": "User", "name": "z"});
        assert_eq!(
            Source {
                binding: &crb,
                subject: &user
            }
            .describe(),
            r#"ClusterRoleBinding "x" of ClusterRole "y" to User "z""#
        );
        let rb = json!({"metadata": {"name": "x", "namespace": "ns"}, "roleRef": {"kind": "Role", "name": "y"}});
        let sa = json!({"kind": "ServiceAccount", "name": "sa"});
        assert_eq!(
            Source {
                binding: &rb,
                subject: &sa
            }
            .describe(),
            r#"RoleBinding "x/ns" of Role "y" to ServiceAccount "sa/ns""#
        );
    }

    #[test]
    fn role_ref_errors_print_like_listers_and_registry() {
        let err = RoleRefError::NotFound {
            kind: "ClusterRole".into(),
            name: "gone".into(),
        };
        assert_eq!(
            err.to_string(),
            r#"clusterrole.rbac.authorization.k8s.io "gone" not found"#
        );
        assert_eq!(
            err.registry_message(),
            r#"clusterroles.rbac.authorization.k8s.io "gone" not found"#
        );
    }
}
