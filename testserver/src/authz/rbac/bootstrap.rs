//! The bootstrap policy kube-apiserver writes at start (kube's
//! `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`, written by
//! `pkg/registry/rbac/rest/storage_rbac.go`'s post-start hook), in every authorization
//! mode: the user-facing roles `cluster-admin`, `admin`, `edit`, `view` (the last three
//! aggregated from `system:aggregate-to-*` through their aggregation rules), the
//! discovery roles `system:discovery`, `system:basic-user`, `system:public-info-viewer`,
//! and their ClusterRoleBindings, each labelled `kubernetes.io/bootstrapping:
//! rbac-defaults` and annotated `rbac.authorization.kubernetes.io/autoupdate: "true"`.
//!
//! `admin`, `edit` and `view` are written with their aggregated rules already in place
//! (kube-apiserver writes them empty and kube-controller-manager's aggregation controller
//! fills them within a moment): so they grant what they should even on a server that runs
//! no cluster (`ClusterConfig::none()`, the fakes). When the cluster runs, its
//! `clusterrole-aggregation` controller keeps them current as labelled roles come and go.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{aggregation::aggregated_rules, resolver::GROUP, rule::PolicyRule};

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];
const READ_WRITE: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

/// The label every bootstrap object carries (`bootstrappolicy.Label`).
pub(crate) const BOOTSTRAP_LABEL: (&str, &str) = ("kubernetes.io/bootstrapping", "rbac-defaults");
/// The annotation every bootstrap object carries (`rbacv1.AutoUpdateAnnotationKey`).
pub(crate) const AUTO_UPDATE: (&str, &str) =
    ("rbac.authorization.kubernetes.io/autoupdate", "true");

const AGGREGATE_TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
const AGGREGATE_TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
const AGGREGATE_TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";

fn metadata(name: &str, labels: &[(&str, &str)]) -> Value {
    let mut l = serde_json::Map::new();
    for (k, v) in labels.iter().chain([&BOOTSTRAP_LABEL]) {
        l.insert(k.to_string(), json!(v));
    }
    json!({
        "name": name,
        "labels": l,
        "annotations": {AUTO_UPDATE.0: AUTO_UPDATE.1},
    })
}

fn role(name: &str, labels: &[(&str, &str)], rules: Vec<PolicyRule>) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(name, labels),
        "rules": rules.iter().map(PolicyRule::to_value).collect::<Vec<_>>(),
    })
}

fn aggregating(name: &str, labels: &[(&str, &str)], selector_label: &str) -> Value {
    let mut r = role(name, labels, Vec::new());
    r["aggregationRule"] =
        json!({"clusterRoleSelectors": [{"matchLabels": {selector_label: "true"}}]});
    r
}

/// The bootstrap ClusterRoles, aggregated roles filled in.
pub(crate) fn cluster_roles() -> Vec<Value> {
    let res = PolicyRule::resource;
    let mut roles = vec![
        role(
            "cluster-admin",
            &[],
            vec![
                res(&["*"], &["*"], &["*"]),
                PolicyRule::urls(&["*"], &["*"]),
            ],
        ),
        role(
            "system:discovery",
            &[],
            vec![PolicyRule::urls(
                &["get"],
                &[
                    "/livez",
                    "/readyz",
                    "/healthz",
                    "/version",
                    "/version/",
                    "/openapi",
                    "/openapi/*",
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                ],
            )],
        ),
        role(
            "system:basic-user",
            &[],
            vec![
                res(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                res(
                    &["create"],
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        role(
            "system:public-info-viewer",
            &[],
            vec![PolicyRule::urls(
                &["get"],
                &["/livez", "/readyz", "/healthz", "/version", "/version/"],
            )],
        ),
        aggregating("admin", &[], AGGREGATE_TO_ADMIN),
        aggregating("edit", &[(AGGREGATE_TO_ADMIN, "true")], AGGREGATE_TO_EDIT),
        aggregating("view", &[(AGGREGATE_TO_EDIT, "true")], AGGREGATE_TO_VIEW),
        role(
            "system:aggregate-to-admin",
            &[(AGGREGATE_TO_ADMIN, "true")],
            vec![
                res(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["localsubjectaccessreviews"],
                ),
                res(READ_WRITE, &[GROUP], &["roles", "rolebindings"]),
            ],
        ),
        role(
            "system:aggregate-to-edit",
            &[(AGGREGATE_TO_EDIT, "true")],
            vec![
                res(
                    READ,
                    &[""],
                    &[
                        "pods/attach",
                        "pods/proxy",
                        "pods/exec",
                        "pods/portforward",
                        "secrets",
                        "services/proxy",
                    ],
                ),
                res(&["impersonate"], &[""], &["serviceaccounts"]),
                res(
                    WRITE,
                    &[""],
                    &[
                        "pods",
                        "pods/attach",
                        "pods/proxy",
                        "pods/exec",
                        "pods/portforward",
                    ],
                ),
                res(
                    WRITE,
                    &[""],
                    &[
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "serviceaccounts",
                        "services",
                        "services/proxy",
                        "persistentvolumeclaims",
                        "configmaps",
                        "secrets",
                    ],
                ),
                res(
                    WRITE,
                    &["apps"],
                    &[
                        "statefulsets",
                        "statefulsets/scale",
                        "daemonsets",
                        "deployments",
                        "deployments/scale",
                        "deployments/rollback",
                        "replicasets",
                        "replicasets/scale",
                    ],
                ),
                res(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
                res(WRITE, &["batch"], &["jobs", "cronjobs"]),
                res(
                    WRITE,
                    &["extensions"],
                    &[
                        "daemonsets",
                        "deployments",
                        "deployments/scale",
                        "deployments/rollback",
                        "ingresses",
                        "replicasets",
                        "replicasets/scale",
                        "replicationcontrollers/scale",
                        "networkpolicies",
                    ],
                ),
                res(WRITE, &["policy"], &["poddisruptionbudgets"]),
                res(
                    WRITE,
                    &["networking.k8s.io"],
                    &["networkpolicies", "ingresses"],
                ),
            ],
        ),
        role(
            "system:aggregate-to-view",
            &[(AGGREGATE_TO_VIEW, "true")],
            vec![
                res(
                    READ,
                    &[""],
                    &[
                        "pods",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "serviceaccounts",
                        "services",
                        "services/status",
                        "endpoints",
                        "persistentvolumeclaims",
                        "persistentvolumeclaims/status",
                        "configmaps",
                    ],
                ),
                res(
                    READ,
                    &[""],
                    &[
                        "limitranges",
                        "resourcequotas",
                        "bindings",
                        "events",
                        "pods/status",
                        "resourcequotas/status",
                        "namespaces/status",
                        "replicationcontrollers/status",
                        "pods/log",
                    ],
                ),
                res(READ, &[""], &["namespaces"]),
                res(READ, &["discovery.k8s.io"], &["endpointslices"]),
                res(
                    READ,
                    &["apps"],
                    &[
                        "controllerrevisions",
                        "statefulsets",
                        "statefulsets/status",
                        "statefulsets/scale",
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/status",
                        "deployments/scale",
                        "replicasets",
                        "replicasets/status",
                        "replicasets/scale",
                    ],
                ),
                res(
                    READ,
                    &["autoscaling"],
                    &[
                        "horizontalpodautoscalers",
                        "horizontalpodautoscalers/status",
                    ],
                ),
                res(
                    READ,
                    &["batch"],
                    &["jobs", "cronjobs", "cronjobs/status", "jobs/status"],
                ),
                res(
                    READ,
                    &["extensions"],
                    &[
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/scale",
                        "deployments/status",
                        "ingresses",
                        "ingresses/status",
                        "replicasets",
                        "replicasets/scale",
                        "replicasets/status",
                        "replicationcontrollers/scale",
                        "networkpolicies",
                    ],
                ),
                res(
                    READ,
                    &["policy"],
                    &["poddisruptionbudgets", "poddisruptionbudgets/status"],
                ),
                res(
                    READ,
                    &["networking.k8s.io"],
                    &["networkpolicies", "ingresses", "ingresses/status"],
                ),
            ],
        ),
    ];
    aggregate_all(&mut roles);
    roles
}

/// Fills every aggregating role's rules, until nothing changes (`admin` aggregates `edit`,
/// which aggregates `view`).
pub(crate) fn aggregate_all(roles: &mut [Value]) {
    for _ in 0..roles.len() {
        let snapshot: Vec<Arc<Value>> = roles.iter().cloned().map(Arc::new).collect();
        let mut changed = false;
        for role in roles.iter_mut() {
            if let Some(rules) = aggregated_rules(role, &snapshot) {
                let rules = Value::Array(rules);
                if role.get("rules") != Some(&rules) {
                    role["rules"] = rules;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
}

fn binding(role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": GROUP, "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(role, &[]),
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })
}

/// The bootstrap ClusterRoleBindings.
pub(crate) fn cluster_role_bindings() -> Vec<Value> {
    use crate::authn::{ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, SYSTEM_MASTERS};
    vec![
        binding("cluster-admin", &[SYSTEM_MASTERS]),
        binding("system:discovery", &[ALL_AUTHENTICATED]),
        binding("system:basic-user", &[ALL_AUTHENTICATED]),
        binding(
            "system:public-info-viewer",
            &[ALL_AUTHENTICATED, ALL_UNAUTHENTICATED],
        ),
    ]
}

#[cfg(test)]
mod tests {
    //! After kube's `bootstrappolicy/policy_test.go` (the aggregated roles' contents).

    use super::*;

    fn rules_of(roles: &[Value], name: &str) -> Vec<PolicyRule> {
        let role = roles
            .iter()
            .find(|r| crate::meta::name(r) == name)
            .expect("role");
        PolicyRule::of_role(role)
    }

    #[test]
    fn admin_edit_view_nest() {
        let roles = cluster_roles();
        let (view, edit, admin) = (
            rules_of(&roles, "view"),
            rules_of(&roles, "edit"),
            rules_of(&roles, "admin"),
        );
        assert!(!view.is_empty());
        assert!(
            super::super::covers::covers(&edit, &view).0,
            "edit covers view"
        );
        assert!(
            super::super::covers::covers(&admin, &edit).0,
            "admin covers edit"
        );
        assert!(!super::super::covers::covers(&view, &edit).0);
        assert!(
            view.iter()
                .all(|r| r.verbs.iter().all(|v| READ.contains(&v.as_str())))
        );
        for r in roles.iter().chain(cluster_role_bindings().iter()) {
            assert_eq!(
                r["metadata"]["labels"][BOOTSTRAP_LABEL.0],
                BOOTSTRAP_LABEL.1
            );
            assert_eq!(r["metadata"]["annotations"][AUTO_UPDATE.0], AUTO_UPDATE.1);
        }
    }
}
