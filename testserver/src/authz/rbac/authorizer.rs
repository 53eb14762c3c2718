//! The RBAC authorizer (kube's `plugin/pkg/auth/authorizer/rbac/rbac.go`): a request is
//! allowed by the first rule of the user's bindings that allows it, with that binding as
//! the reason; otherwise RBAC has no opinion, its reason the errors met resolving the
//! bindings' roles (a binding to a missing role grants nothing).

use super::{
    resolver::{RoleRefError, RuleResolver, Visit},
    rule::PolicyRule,
};
use crate::{
    authn::UserInfo,
    authz::{Attributes, Decision},
    store::Store,
};

/// `RBACAuthorizer.Authorize`.
pub(crate) fn authorize(store: &Store, attributes: &Attributes) -> Decision {
    let mut allowed = None;
    let mut errors: Vec<RoleRefError> = Vec::new();
    RuleResolver::new(store).visit_rules_for(
        &attributes.user,
        &attributes.namespace,
        &mut |visit| match visit {
            Visit::Rule(source, rule) if rule.allows(attributes) => {
                allowed = Some(format!("RBAC: allowed by {}", source.describe()));
                false
            }
            Visit::Rule(..) => true,
            Visit::Error(err) => {
                errors.push(err);
                true
            }
        },
    );
    match allowed {
        Some(reason) => Decision::Allow(reason),
        None if errors.is_empty() => Decision::NoOpinion(String::new()),
        None => Decision::NoOpinion(format!("RBAC: {}", aggregate(&errors))),
    }
}

/// `utilerrors.NewAggregate(errs).Error()`: one error as itself, more as `[a, b]`.
pub(crate) fn aggregate(errors: &[RoleRefError]) -> String {
    let mut messages: Vec<String> = Vec::new();
    for e in errors {
        let m = e.to_string();
        if !messages.contains(&m) {
            messages.push(m);
        }
    }
    if messages.len() == 1 {
        messages.remove(0)
    } else {
        format!("[{}]", messages.join(", "))
    }
}

/// `RBACAuthorizer.RulesFor`: the rules of `user` in `namespace`, and the errors met.
pub(crate) fn rules_for(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<PolicyRule>, Vec<RoleRefError>) {
    RuleResolver::new(store).rules_for(user, namespace)
}

#[cfg(test)]
mod tests {
    //! After kube's `plugin/pkg/auth/authorizer/rbac/rbac_test.go` (`TestAuthorizer`).

    use serde_json::{Value, json};

    use super::*;
    use crate::{Engine, EngineConfig, engine::WriteOptions};

    fn put(engine: &Engine, plural: &str, ns: Option<&str>, obj: Value) {
        let target = engine.target("rbac.authorization.k8s.io", "v1", plural, ns, None);
        engine
            .create(&target, obj, &WriteOptions::default())
            .expect("create");
    }

    fn request(user: &UserInfo, verb: &str, resource: &str, ns: &str) -> Attributes {
        Attributes {
            user: user.clone(),
            verb: verb.into(),
            resource_request: true,
            resource: resource.into(),
            namespace: ns.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn bindings_grant_their_roles_rules() {
        let engine = Engine::with_controllers(EngineConfig::default(), Vec::new());
        let ns_target = engine.target("", "v1", "namespaces", None, None);
        engine
            .create(
                &ns_target,
                json!({"metadata": {"name": "ns1"}}),
                &WriteOptions::default(),
            )
            .expect("namespace");
        put(
            &engine,
            "roles",
            Some("ns1"),
            json!({
                "metadata": {"name": "reader"},
                "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}],
            }),
        );
        put(
            &engine,
            "rolebindings",
            Some("ns1"),
            json!({
                "metadata": {"name": "alice-reads"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}],
            }),
        );
        put(
            &engine,
            "clusterrolebindings",
            None,
            json!({
                "metadata": {"name": "dangling"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gone"},
                "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"}],
            }),
        );
        let alice = UserInfo::new("alice", ["system:authenticated"]);
        let store = engine.store();
        assert_eq!(
            authorize(store, &request(&alice, "list", "pods", "ns1")),
            Decision::Allow(
                r#"RBAC: allowed by RoleBinding "alice-reads/ns1" of Role "reader" to User "alice""#.into()
            )
        );
        assert!(!authorize(store, &request(&alice, "delete", "pods", "ns1")).allowed());
        assert!(!authorize(store, &request(&alice, "list", "pods", "ns2")).allowed());
        assert!(!authorize(store, &request(&alice, "list", "pods", "")).allowed());
        let dev = UserInfo::new("bob", ["devs"]);
        assert_eq!(
            authorize(store, &request(&dev, "list", "pods", "ns1")),
            Decision::NoOpinion(
                r#"RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#.into()
            )
        );
        let (rules, errors) = rules_for(store, &alice, "ns1");
        assert_eq!(rules.len(), 1);
        assert!(errors.is_empty());
    }

    /// The cost of a decision with many bindings (run with `--ignored` to measure): 50
    /// ClusterRoleBindings and 200 RoleBindings in the namespace, none for the user.
    #[test]
    #[ignore]
    fn decision_cost() {
        let engine = Engine::with_controllers(EngineConfig::default(), Vec::new());
        let ns_target = engine.target("", "v1", "namespaces", None, None);
        engine
            .create(
                &ns_target,
                json!({"metadata": {"name": "ns1"}}),
                &WriteOptions::default(),
            )
            .expect("namespace");
        for i in 0..50 {
            put(
                &engine,
                "clusterrolebindings",
                None,
                json!({
                    "metadata": {"name": format!("crb-{i}")},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "x"},
                    "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": format!("u{i}")}],
                }),
            );
        }
        for i in 0..200 {
            put(
                &engine,
                "rolebindings",
                Some("ns1"),
                json!({
                    "metadata": {"name": format!("rb-{i}")},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"},
                    "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": format!("u{i}")}],
                }),
            );
        }
        let alice = UserInfo::new("alice", ["system:authenticated"]);
        let n = 10_000;
        let start = std::time::Instant::now();
        for _ in 0..n {
            assert!(!authorize(engine.store(), &request(&alice, "list", "pods", "ns1")).allowed());
        }
        eprintln!("{:?} per decision", start.elapsed() / n);
    }
}
