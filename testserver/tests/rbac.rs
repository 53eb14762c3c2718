//! RBAC over HTTP, driven by the installed kubectl as each user (a kubeconfig per user
//! from `TestServer::kubeconfig_as`): what a Role allows and nothing more, kube-apiserver's
//! 403 texts (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`),
//! `kubectl auth can-i` and `--list` (`pkg/registry/authorization/*`), a binding to a
//! missing role (`plugin/pkg/auth/authorizer/rbac/rbac.go`), escalation prevention
//! (`pkg/registry/rbac/validation/rule.go` `ConfirmNoEscalation`,
//! `pkg/registry/rbac/escalation_check.go`), validation (`pkg/apis/rbac/validation`),
//! aggregation (`pkg/controller/clusterroleaggregation`) and the bootstrap policy
//! (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`); impersonation under
//! RBAC (`kubectl --as`, `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`).
//! The last tests use kubegen clients instead of kubectl: a ServiceAccount bound by a
//! RoleBinding, the in-process front and `Fake` under RBAC, and TokenReview's
//! `create tokenreviews` check.
//!
//! kubectl is part of the test environment: every test fails, never skips, without
//! `/usr/bin/kubectl`.

#![allow(clippy::unwrap_used)]

use std::{
    io::Write,
    path::PathBuf,
    process::{Command, Stdio},
    time::Duration,
};

use k8s_openapi::api::{
    authentication::v1::TokenReview,
    core::v1::ConfigMap,
    rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding},
};
use kubegen::client::ResourceClient;
use kubegen_testserver::{
    AuthConfig, ClusterConfig, EngineConfig, InProcess, TestServer, UserInfo, Workload, fake::Fake,
};

const KUBECTL: &str = "/usr/bin/kubectl";

/// A kubeconfig file for one user of a server.
struct As {
    dir: PathBuf,
    kubeconfig: PathBuf,
}

impl Drop for As {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn user(server: &TestServer, test: &str, name: &str, groups: &[&str]) -> As {
    let dir = std::env::temp_dir().join(format!(
        "kubegen-rbac-{test}-{}-{}",
        name.replace(':', "_"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let text = if name == "admin" {
        server.kubeconfig()
    } else {
        server.kubeconfig_as(name, groups)
    };
    std::fs::write(&kubeconfig, text).unwrap();
    As { dir, kubeconfig }
}

impl As {
    /// Runs kubectl as this user (with `stdin` when given), off the runtime's threads;
    /// returns (success, stdout+stderr).
    async fn run(&self, args: &[&str], stdin: Option<&str>) -> (bool, String) {
        let mut cmd = Command::new(KUBECTL);
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(
                std::env::var("RBAC_KUBECTL_V")
                    .ok()
                    .map(|v| format!("-v={v}")),
            )
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let stdin = stdin.map(str::to_string);
        tokio::task::spawn_blocking(move || {
            let mut child = cmd.spawn().unwrap();
            {
                let mut input = child.stdin.take().unwrap();
                if let Some(s) = stdin {
                    input.write_all(s.as_bytes()).unwrap();
                }
            }
            let out = child.wait_with_output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            (out.status.success(), text)
        })
        .await
        .unwrap()
    }

    async fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, text) = self.run(args, stdin).await;
        assert!(ok, "kubectl {args:?} failed: {text}");
        text
    }

    async fn fails(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, text) = self.run(args, stdin).await;
        assert!(!ok, "kubectl {args:?} succeeded: {text}");
        text
    }
}

async fn rbac_server() -> TestServer {
    // kubectl sends credentials over TLS only (clientcmd's `IsConfigTransportTLS`).
    TestServer::builder()
        .rbac()
        .tls(true)
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap()
}

const POD_READER: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-reads-pods, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
"#;

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: nginx}]
"#;

/// A user with a Role may do exactly what it grants, in its namespace; everything else is
/// a 403 worded as kube-apiserver's `forbiddenMessage`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_grants_exactly_its_rules_and_403s_are_kubes() {
    let server = rbac_server().await;
    let admin = user(&server, "exact", "admin", &[]);
    let alice = user(&server, "exact", "alice", &[]);
    admin.ok(&["apply", "-f", "-"], Some(POD_READER)).await;
    admin.ok(&["apply", "-f", "-"], Some(POD)).await;

    assert!(
        alice
            .ok(&["get", "pods", "-n", "default", "-o", "name"], None)
            .await
            .contains("pod/web")
    );
    alice
        .ok(&["get", "pod", "web", "-n", "default"], None)
        .await;

    let text = alice
        .fails(&["get", "pods", "-n", "kube-system"], None)
        .await;
    assert!(text.contains(r#"Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "kube-system""#), "{text}");
    let text = alice
        .fails(&["delete", "pod", "web", "-n", "default"], None)
        .await;
    assert!(text.contains(r#"pods "web" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "default""#), "{text}");
    let text = alice
        .fails(&["get", "secret", "s", "-n", "default"], None)
        .await;
    assert!(text.contains(r#"secrets "s" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "default""#), "{text}");
    let text = alice.fails(&["get", "nodes"], None).await;
    assert!(text.contains(r#"nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope"#), "{text}");
    let text = alice
        .fails(&["get", "deployments.apps", "-n", "default"], None)
        .await;
    assert!(text.contains(r#"deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" in the namespace "default""#), "{text}");
    let text = alice.fails(&["logs", "web", "-n", "default"], None).await;
    assert!(text.contains(r#"pods "web" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "default""#), "{text}");
    let text = alice.fails(&["get", "--raw", "/metrics"], None).await;
    assert!(
        text.contains(r#"forbidden: User "alice" cannot get path "/metrics""#),
        "{text}"
    );
    // system:public-info-viewer and system:discovery (bound to system:authenticated).
    alice.ok(&["get", "--raw", "/version"], None).await;
    alice
        .ok(&["api-resources", "--api-group", "apps"], None)
        .await;
}

/// `kubectl auth can-i` (SelfSubjectAccessReview) and `--list` (SelfSubjectRulesReview).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn can_i_answers_from_the_users_rules() {
    let server = rbac_server().await;
    let admin = user(&server, "cani", "admin", &[]);
    let alice = user(&server, "cani", "alice", &[]);
    admin.ok(&["apply", "-f", "-"], Some(POD_READER)).await;

    assert_eq!(
        alice
            .ok(&["auth", "can-i", "list", "pods", "-n", "default"], None)
            .await
            .trim(),
        "yes"
    );
    assert_eq!(
        alice
            .ok(&["auth", "can-i", "get", "pods/web", "-n", "default"], None)
            .await
            .trim(),
        "yes"
    );
    assert_eq!(
        alice
            .fails(&["auth", "can-i", "delete", "pods", "-n", "default"], None)
            .await
            .trim(),
        "no"
    );
    assert_eq!(
        alice
            .fails(
                &["auth", "can-i", "list", "pods", "-n", "kube-system"],
                None
            )
            .await
            .trim(),
        "no"
    );
    assert_eq!(
        alice
            .ok(&["auth", "can-i", "get", "/healthz"], None)
            .await
            .trim(),
        "yes"
    );
    assert_eq!(
        admin.ok(&["auth", "can-i", "*", "*"], None).await.trim(),
        "yes"
    );

    let list = alice
        .ok(&["auth", "can-i", "--list", "-n", "default"], None)
        .await;
    let pods = list
        .lines()
        .find(|l| l.starts_with("pods "))
        .unwrap_or_default();
    assert!(pods.contains("[get list]"), "{list}");
    assert!(
        list.contains("selfsubjectaccessreviews.authorization.k8s.io"),
        "{list}"
    );
    assert!(list.contains("[/healthz]"), "{list}");
    let elsewhere = alice
        .ok(&["auth", "can-i", "--list", "-n", "kube-system"], None)
        .await;
    assert!(
        !elsewhere.lines().any(|l| l.starts_with("pods ")),
        "{elsewhere}"
    );
}

/// A SubjectAccessReview asks about another user (what `kubectl auth can-i --as bob`
/// asks through impersonation); a LocalSubjectAccessReview must name its own namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subject_access_reviews_ask_about_others() {
    let server = rbac_server().await;
    let admin = user(&server, "sar", "admin", &[]);
    admin.ok(&["apply", "-f", "-"], Some(POD_READER)).await;
    let sar = |user: &str, verb: &str| {
        format!(
            "apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: {user}\n  resourceAttributes: {{namespace: default, verb: {verb}, resource: pods}}\n"
        )
    };
    let allowed = |args: &str| args.to_string();
    let out = admin
        .ok(
            &[
                "create",
                "-f",
                "-",
                "-o",
                "jsonpath={.status.allowed}|{.status.reason}",
            ],
            Some(&sar("alice", "list")),
        )
        .await;
    assert_eq!(
        allowed(&out),
        r#"true|RBAC: allowed by RoleBinding "alice-reads-pods/default" of Role "pod-reader" to User "alice""#
    );
    let out = admin
        .ok(
            &["create", "-f", "-", "-o", "jsonpath={.status.allowed}"],
            Some(&sar("bob", "list")),
        )
        .await;
    assert_eq!(out, "false");

    let local = "apiVersion: authorization.k8s.io/v1\nkind: LocalSubjectAccessReview\nmetadata: {namespace: default}\nspec:\n  user: alice\n  resourceAttributes: {namespace: kube-system, verb: list, resource: pods}\n";
    let text = admin.fails(&["create", "-f", "-"], Some(local)).await;
    assert!(text.contains(r#"spec.resourceAttributes.namespace: Invalid value: "kube-system": must match metadata.namespace"#), "{text}");
    let text = admin
        .fails(&["create", "-f", "-"], Some("apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  resourceAttributes: {verb: list, resource: pods}\n"))
        .await;
    assert!(
        text.contains(
            "spec.user: Invalid value: \"\": at least one of user or group must be specified"
        ),
        "{text}"
    );
}

/// A binding to a role that does not exist grants nothing, and the 403 says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_to_a_missing_role_grants_nothing() {
    let server = rbac_server().await;
    let admin = user(&server, "missing", "admin", &[]);
    let carol = user(&server, "missing", "carol", &[]);
    admin
        .ok(
            &[
                "create",
                "rolebinding",
                "carol-ghost",
                "--role",
                "ghost",
                "--user",
                "carol",
                "-n",
                "default",
            ],
            None,
        )
        .await;
    let text = carol.fails(&["get", "pods", "-n", "default"], None).await;
    assert!(text.contains(r#"pods is forbidden: User "carol" cannot list resource "pods" in API group "" in the namespace "default": RBAC: role.rbac.authorization.k8s.io "ghost" not found"#), "{text}");
}

const ROLE_ADMIN: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: role-admin, namespace: default}
rules:
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["roles", "rolebindings"]
  verbs: ["create", "get", "list", "update", "patch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dave-role-admin, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: dave}
"#;

/// Writing a role with rules one does not hold, or binding a role one does not hold, is
/// refused with kube's message; `escalate` and `bind` lift the refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escalation_is_refused_unless_escalate_or_bind() {
    let server = rbac_server().await;
    let admin = user(&server, "escalation", "admin", &[]);
    let dave = user(&server, "escalation", "dave", &[]);
    admin.ok(&["apply", "-f", "-"], Some(ROLE_ADMIN)).await;

    dave.ok(
        &[
            "create",
            "role",
            "getter",
            "--verb",
            "get",
            "--resource",
            "pods",
            "-n",
            "default",
        ],
        None,
    )
    .await;
    let text = dave
        .fails(
            &[
                "create",
                "role",
                "deleter",
                "--verb",
                "get,delete",
                "--resource",
                "pods",
                "-n",
                "default",
            ],
            None,
        )
        .await;
    assert!(
        text.contains("roles.rbac.authorization.k8s.io \"deleter\" is forbidden: user \"dave\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}"),
        "{text}"
    );
    // Patching a held role up to more is refused too.
    let text = dave
        .fails(
            &[
                "patch",
                "role",
                "getter",
                "-n",
                "default",
                "--type",
                "json",
                "-p",
                r#"[{"op":"add","path":"/rules/0/verbs/-","value":"delete"}]"#,
            ],
            None,
        )
        .await;
    assert!(
        text.contains("is attempting to grant RBAC permissions not currently held"),
        "{text}"
    );

    let text = dave
        .fails(
            &[
                "create",
                "rolebinding",
                "dave-edit",
                "--clusterrole",
                "edit",
                "--user",
                "erin",
                "-n",
                "default",
            ],
            None,
        )
        .await;
    assert!(text.contains("rolebindings.rbac.authorization.k8s.io \"dave-edit\" is forbidden: user \"dave\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:"), "{text}");
    // A server-side apply that creates a binding is checked too.
    let applied = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: applied-edit, namespace: default}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}\nsubjects:\n- {apiGroup: rbac.authorization.k8s.io, kind: User, name: erin}\n";
    let text = dave
        .fails(&["apply", "--server-side", "-f", "-"], Some(applied))
        .await;
    assert!(
        text.contains("is attempting to grant RBAC permissions not currently held"),
        "{text}"
    );
    // Binding a role whose rules dave holds is fine.
    dave.ok(
        &[
            "create",
            "rolebinding",
            "erin-getter",
            "--role",
            "getter",
            "--user",
            "erin",
            "-n",
            "default",
        ],
        None,
    )
    .await;

    let grants = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: escalator, namespace: default}
rules:
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["roles"]
  verbs: ["escalate"]
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["clusterroles"]
  verbs: ["bind"]
  resourceNames: ["edit"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dave-escalator, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: escalator}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: dave}
"#;
    admin.ok(&["apply", "-f", "-"], Some(grants)).await;
    dave.ok(
        &[
            "create",
            "role",
            "deleter",
            "--verb",
            "get,delete",
            "--resource",
            "pods",
            "-n",
            "default",
        ],
        None,
    )
    .await;
    dave.ok(
        &[
            "create",
            "rolebinding",
            "dave-edit",
            "--clusterrole",
            "edit",
            "--user",
            "erin",
            "-n",
            "default",
        ],
        None,
    )
    .await;
    let text = dave
        .fails(
            &[
                "create",
                "rolebinding",
                "dave-admin",
                "--clusterrole",
                "admin",
                "--user",
                "erin",
                "-n",
                "default",
            ],
            None,
        )
        .await;
    assert!(
        text.contains("is attempting to grant RBAC permissions not currently held"),
        "{text}"
    );

    // An aggregation rule can gather anything: it takes `*` on `*.*`, even with
    // `escalate` (clusterrole/policybased/storage.go).
    let cluster_writer = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: clusterrole-writer}
rules:
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["clusterroles"]
  verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: dave-clusterrole-writer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: clusterrole-writer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: dave}
"#;
    admin.ok(&["apply", "-f", "-"], Some(cluster_writer)).await;
    let aggregating = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: gatherer}\naggregationRule:\n  clusterRoleSelectors: [{matchLabels: {x: y}}]\n";
    let text = dave.fails(&["create", "-f", "-"], Some(aggregating)).await;
    assert!(text.contains(r#"clusterroles.rbac.authorization.k8s.io "gatherer" is forbidden: must have cluster-admin privileges to use the aggregationRule"#), "{text}");
    admin.ok(&["create", "-f", "-"], Some(aggregating)).await;
}

/// RBAC objects are validated with kube's messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_rules_are_422() {
    let server = rbac_server().await;
    let admin = user(&server, "invalid", "admin", &[]);
    let bad = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: bad, namespace: default}\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n- verbs: [get]\n  nonResourceURLs: [/healthz]\n";
    let text = admin.fails(&["create", "-f", "-"], Some(bad)).await;
    assert!(text.contains(r#"The Role "bad" is invalid: "#), "{text}");
    assert!(
        text.contains("rules[0].verbs: Required value: verbs must contain at least one value"),
        "{text}"
    );
    assert!(text.contains(r#"rules[1].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs"#), "{text}");
    admin
        .ok(
            &[
                "create",
                "clusterrolebinding",
                "b",
                "--clusterrole",
                "view",
                "--user",
                "x",
            ],
            None,
        )
        .await;
    let text = admin
        .fails(
            &[
                "patch",
                "clusterrolebinding",
                "b",
                "--type",
                "merge",
                "-p",
                r#"{"roleRef":{"name":"edit"}}"#,
            ],
            None,
        )
        .await;
    assert!(text.contains("cannot change roleRef"), "{text}");
}

/// The bootstrap policy is there, and a ClusterRole labelled `aggregate-to-view` joins
/// `view` (and so `edit` and `admin`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_roles_exist_and_aggregate() {
    let server = TestServer::builder()
        .rbac()
        .tls(true)
        .cluster(ClusterConfig::none().with(Workload::ClusterRoleAggregation))
        .start()
        .await
        .unwrap();
    let admin = user(&server, "aggregate", "admin", &[]);
    let names = admin.ok(&["get", "clusterroles", "-o", "name"], None).await;
    for role in [
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
    ] {
        assert!(
            names.contains(&format!("clusterrole.rbac.authorization.k8s.io/{role}\n")),
            "{role}: {names}"
        );
    }
    let view = admin
        .ok(&["get", "clusterrole", "view", "-o", "yaml"], None)
        .await;
    assert!(
        view.contains("kubernetes.io/bootstrapping: rbac-defaults"),
        "{view}"
    );
    assert!(
        view.contains("rbac.authorization.kubernetes.io/autoupdate: \"true\""),
        "{view}"
    );
    assert!(view.contains("- pods"), "{view}");
    admin
        .ok(
            &[
                "get",
                "clusterrolebinding",
                "cluster-admin",
                "system:discovery",
                "system:basic-user",
                "system:public-info-viewer",
            ],
            None,
        )
        .await;

    // Leases are not in `view` until a role labelled into it grants them.
    assert!(!view.contains("leases"), "{view}");
    let leases = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: lease-viewer\n  labels: {rbac.authorization.k8s.io/aggregate-to-view: \"true\"}\nrules:\n- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  verbs: [get, list, watch]\n";
    admin.ok(&["create", "-f", "-"], Some(leases)).await;
    for role in ["view", "edit", "admin"] {
        let mut found = false;
        for _ in 0..100 {
            let text = admin
                .ok(
                    &[
                        "get",
                        "clusterrole",
                        role,
                        "-o",
                        "jsonpath={.rules[*].resources}",
                    ],
                    None,
                )
                .await;
            if text.contains("leases") {
                found = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(found, "{role} did not aggregate lease-viewer");
    }
    let frank = user(&server, "aggregate", "frank", &[]);
    admin
        .ok(
            &[
                "create",
                "rolebinding",
                "frank-view",
                "--clusterrole",
                "view",
                "--user",
                "frank",
                "-n",
                "default",
            ],
            None,
        )
        .await;
    assert_eq!(
        frank
            .ok(
                &[
                    "auth",
                    "can-i",
                    "list",
                    "leases.coordination.k8s.io",
                    "-n",
                    "default"
                ],
                None
            )
            .await
            .trim(),
        "yes"
    );
}

// ---------------------------------------------------------------------------------------
// Impersonation under RBAC: `kubectl --as`.
// ---------------------------------------------------------------------------------------

/// The admin asks as alice and bob (`kubectl auth can-i --as`, `--list --as`, and a
/// request as alice), each answered from the impersonated user's rules.
///
/// kube-apiserver: `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`
/// (the request becomes the impersonated user's, who is added to `system:authenticated`),
/// `pkg/registry/authorization/selfsubjectaccessreview/rest.go` and
/// `selfsubjectrulesreview/rest.go` (the reviews ask about the request's user), and the
/// 403 text of `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_asks_as_other_users() {
    let server = rbac_server().await;
    let admin = user(&server, "asadmin", "admin", &[]);
    admin.ok(&["apply", "-f", "-"], Some(POD_READER)).await;

    assert_eq!(
        admin
            .ok(
                &[
                    "auth", "can-i", "list", "pods", "-n", "default", "--as", "alice"
                ],
                None
            )
            .await
            .trim(),
        "yes"
    );
    assert_eq!(
        admin
            .fails(
                &[
                    "auth", "can-i", "list", "pods", "-n", "default", "--as", "bob"
                ],
                None
            )
            .await
            .trim(),
        "no"
    );
    let text = admin
        .fails(&["get", "pods", "-n", "kube-system", "--as", "alice"], None)
        .await;
    assert!(text.contains(r#"Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "kube-system""#), "{text}");
    admin
        .ok(&["get", "pods", "-n", "default", "--as", "alice"], None)
        .await;

    let list = admin
        .ok(
            &["auth", "can-i", "--list", "-n", "default", "--as", "alice"],
            None,
        )
        .await;
    let pods = list
        .lines()
        .find(|l| l.starts_with("pods "))
        .unwrap_or_default();
    assert!(pods.contains("[get list]"), "{list}");
    // The admin's own `*.*` rule is not alice's.
    assert!(!list.lines().any(|l| l.starts_with("*.* ")), "{list}");
    let bobs = admin
        .ok(
            &["auth", "can-i", "--list", "-n", "default", "--as", "bob"],
            None,
        )
        .await;
    assert!(!bobs.lines().any(|l| l.starts_with("pods ")), "{bobs}");
}

const ALICE_IMPERSONATES_BOB: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-bob}
rules:
- apiGroups: [""]
  resources: ["users"]
  verbs: ["impersonate"]
  resourceNames: ["bob"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-impersonates-bob}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-bob}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
"#;

/// A user may impersonate only whom an `impersonate` grant names: `resourceNames: [bob]`
/// lets alice act as bob, not as carol.
///
/// kube-apiserver: `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`
/// (an `impersonate` check on `users` named by the `Impersonate-User` header, the 403 from
/// `responsewriters.Forbidden` with the user's name as the resource name) and
/// https://kubernetes.io/docs/reference/access-authn-authz/authentication/#user-impersonation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonation_needs_an_impersonate_grant_naming_the_user() {
    let server = rbac_server().await;
    let admin = user(&server, "imp", "admin", &[]);
    let alice = user(&server, "imp", "alice", &[]);

    // kubectl auth whoami hides a 403's message (`pkg/cmd/auth/whoami.go`: "not enabled
    // ... or you do not have permission"), and discovery's 403 prints as "Forbidden:
    // unknown" with kube-apiserver too (client-go's aggregated discovery; e.g.
    // kubeedge/kubeedge#6322), so the refusal's text is checked with `get --raw`.
    let text = alice
        .fails(
            &[
                "get",
                "--raw",
                "/api/v1/namespaces/default/pods",
                "--as",
                "bob",
            ],
            None,
        )
        .await;
    assert!(text.contains(r#"Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope"#), "{text}");

    admin
        .ok(&["apply", "-f", "-"], Some(ALICE_IMPERSONATES_BOB))
        .await;
    let name = alice
        .ok(
            &[
                "--as",
                "bob",
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ],
            None,
        )
        .await;
    assert_eq!(name.trim(), "bob");
    alice
        .fails(&["--as", "carol", "auth", "whoami"], None)
        .await;
    let text = alice
        .fails(
            &[
                "--as",
                "carol",
                "get",
                "--raw",
                "/api/v1/namespaces/default/pods",
            ],
            None,
        )
        .await;
    assert!(text.contains(r#"Error from server (Forbidden): users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope"#), "{text}");
    // Impersonating a group needs its own grant.
    let text = alice
        .fails(
            &["--as", "bob", "--as-group", "devs", "get", "--raw", "/api"],
            None,
        )
        .await;
    assert!(text.contains(r#"groups "devs" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope"#), "{text}");
}

/// Any authenticated user may ask who they are: the bootstrap `system:basic-user`
/// ClusterRole, bound to `system:authenticated`, allows creating selfsubjectreviews.
///
/// kube-apiserver: `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`
/// (`system:basic-user`: selfsubjectaccessreviews, selfsubjectrulesreviews,
/// selfsubjectreviews) and `pkg/registry/authentication/selfsubjectreview/rest.go`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whoami_is_allowed_to_every_user() {
    let server = rbac_server().await;
    let dana = user(&server, "whoami", "dana", &["qa"]);
    let out = dana
        .ok(
            &[
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}|{.status.userInfo.groups}",
            ],
            None,
        )
        .await;
    assert_eq!(out, r#"dana|["qa","system:authenticated"]"#);
}

// ---------------------------------------------------------------------------------------
// kubegen clients under RBAC (no kubectl).
// ---------------------------------------------------------------------------------------

fn from_json<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).unwrap()
}

/// A Role letting `subject` (an rbac `Subject` as JSON) list and create ConfigMaps in
/// `namespace`, and its RoleBinding.
fn configmap_editor(namespace: &str, subject: serde_json::Value) -> (Role, RoleBinding) {
    let role = from_json(serde_json::json!({
        "metadata": {"name": "cm-editor", "namespace": namespace},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "create"]}],
    }));
    let binding = from_json(serde_json::json!({
        "metadata": {"name": "cm-editor", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-editor"},
        "subjects": [subject],
    }));
    (role, binding)
}

async fn grant(admin: &kubegen::client::Client, role: &Role, binding: &RoleBinding) {
    let ns = role.metadata.namespace.as_deref().unwrap();
    ResourceClient::<Role>::namespaced(admin.clone(), ns)
        .create(&Default::default(), role)
        .await
        .unwrap();
    ResourceClient::<RoleBinding>::namespaced(admin.clone(), ns)
        .create(&Default::default(), binding)
        .await
        .unwrap();
}

fn config_map(name: &str) -> ConfigMap {
    from_json(serde_json::json!({"metadata": {"name": name}, "data": {"k": "v"}}))
}

/// The 403 of `err`: its code, reason and message.
fn forbidden(err: kubegen::client::Error) -> String {
    let status = err
        .status()
        .unwrap_or_else(|| panic!("not an API error: {err}"));
    assert_eq!(
        (status.code, status.reason.as_str()),
        (403, "Forbidden"),
        "{status:?}"
    );
    status.message.clone()
}

/// A ServiceAccount bound by a RoleBinding in its namespace may list ConfigMaps there and
/// nowhere else.
///
/// kube-apiserver: `plugin/pkg/auth/authorizer/rbac/rbac.go` (a `ServiceAccount` subject
/// matches `system:serviceaccount:<namespace>:<name>`,
/// `pkg/apis/rbac/v1/evaluation_helpers.go` `appliesToUser`) and
/// `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`
/// (`forbiddenMessage`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_may_do_what_its_rolebinding_allows() {
    let server = TestServer::builder()
        .rbac()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let admin = server.client().unwrap();
    let robot = server
        .client_for_service_account("default", "robot")
        .await
        .unwrap();
    let cms = ResourceClient::<ConfigMap>::namespaced(robot.clone(), "default");
    let message = forbidden(cms.list(&Default::default()).await.unwrap_err());
    assert_eq!(
        message,
        r#"configmaps is forbidden: User "system:serviceaccount:default:robot" cannot list resource "configmaps" in API group "" in the namespace "default""#
    );

    let (role, binding) = configmap_editor(
        "default",
        serde_json::json!({"kind": "ServiceAccount", "name": "robot", "namespace": "default"}),
    );
    grant(&admin, &role, &binding).await;
    cms.create(&Default::default(), &config_map("settings"))
        .await
        .unwrap();
    let names: Vec<_> = cms
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert!(names.contains(&"settings".to_string()), "{names:?}");

    let elsewhere = ResourceClient::<ConfigMap>::namespaced(robot, "kube-system");
    let message = forbidden(elsewhere.list(&Default::default()).await.unwrap_err());
    assert_eq!(
        message,
        r#"configmaps is forbidden: User "system:serviceaccount:default:robot" cannot list resource "configmaps" in API group "" in the namespace "kube-system""#
    );
    let message = forbidden(
        elsewhere
            .create(&Default::default(), &config_map("x"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        r#"configmaps is forbidden: User "system:serviceaccount:default:robot" cannot create resource "configmaps" in API group "" in the namespace "kube-system""#
    );
}

/// The in-process front authorizes as its user: alice is refused until the admin (the
/// front's default loopback user, in `system:masters`) binds her a Role.
///
/// kube-apiserver: `staging/src/k8s.io/apiserver/pkg/authorization/authorizerfactory/builtin.go`
/// and `pkg/kubeapiserver/authorizer/config.go` (`system:masters` is always allowed),
/// `plugin/pkg/auth/authorizer/rbac/rbac.go` (a `Group` subject matches the user's groups)
/// and `responsewriters/errors.go` (`forbiddenMessage`).
#[tokio::test]
async fn an_in_process_user_is_authorized_by_rbac() {
    let admin = InProcess::with_auth(EngineConfig::default(), &AuthConfig::default().rbac());
    let alice = admin.as_user(UserInfo::new("alice", ["devs"]));
    assert_eq!(alice.user().name, "alice");
    let admin_client = kubegen::client::Client::new(admin.clone());
    let cms = ResourceClient::<ConfigMap>::namespaced(
        kubegen::client::Client::new(alice.clone()),
        "default",
    );
    let message = forbidden(cms.list(&Default::default()).await.unwrap_err());
    assert_eq!(
        message,
        r#"configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default""#
    );
    let message = forbidden(
        cms.create(&Default::default(), &config_map("a"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        r#"configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default""#
    );

    // Bound through her group.
    let (role, binding) = configmap_editor(
        "default",
        serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}),
    );
    grant(&admin_client, &role, &binding).await;
    cms.create(&Default::default(), &config_map("a"))
        .await
        .unwrap();
    assert_eq!(cms.list(&Default::default()).await.unwrap().items.len(), 1);
    let message = forbidden(
        ResourceClient::<ConfigMap>::namespaced(kubegen::client::Client::new(alice), "other")
            .list(&Default::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        r#"configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "other""#
    );
}

/// `Fake::with_auth` and `Fake::as_user`: a fake under RBAC whose own client is the
/// all-powerful loopback user, and fakes of the same state acting as other users.
///
/// kube-apiserver as above (`rbac.go`, `forbiddenMessage`); the shared state is
/// client-go's `testing.Fake` (one tracker, many clients).
#[tokio::test]
async fn a_fake_under_rbac_acts_as_its_user() {
    let fake = Fake::with_auth(&AuthConfig::default().rbac());
    fake.add(&{
        let mut cm = config_map("seeded");
        cm.metadata.namespace = Some("team".into());
        cm
    })
    .unwrap();
    let alice = fake.as_user(UserInfo::new("alice", ["devs"]));
    assert_eq!(alice.user().name, "alice");
    let cms = ResourceClient::<ConfigMap>::namespaced(alice.client(), "team");
    let message = forbidden(cms.get("seeded").await.unwrap_err());
    assert_eq!(
        message,
        r#"configmaps "seeded" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "team""#
    );

    let (role, binding) = configmap_editor(
        "team",
        serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}),
    );
    grant(&fake.client(), &role, &binding).await;
    assert_eq!(
        cms.get("seeded").await.unwrap().data.unwrap()["k"],
        "v".to_string()
    );
    // The same state, reactors and action log: the admin sees what alice wrote.
    cms.create(&Default::default(), &config_map("hers"))
        .await
        .unwrap();
    ResourceClient::<ConfigMap>::namespaced(fake.client(), "team")
        .get("hers")
        .await
        .unwrap();
    assert!(
        fake.actions()
            .iter()
            .any(|a| a.matches("create", "configmaps"))
    );
    // Bob, another user of the same fake, still may not.
    let bob = fake.as_user(UserInfo::new("bob", Vec::<String>::new()));
    let message = forbidden(
        ResourceClient::<ConfigMap>::namespaced(bob.client(), "team")
            .list(&Default::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        r#"configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "team""#
    );
}

/// A TokenReview is `create tokenreviews` (cluster-scoped, authentication.k8s.io): a
/// plain user is refused; bound to an auth-delegator ClusterRole, they may review tokens.
///
/// kube-apiserver: `pkg/registry/authentication/tokenreview/storage.go`, and the
/// `system:auth-delegator` ClusterRole of
/// `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go` (create tokenreviews and
/// subjectaccessreviews), which the ClusterRole here copies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_reviews_need_create_tokenreviews() {
    let server = TestServer::builder()
        .rbac()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let token = server
        .service_account_token("default", "robot", &[])
        .await
        .unwrap();
    let review: TokenReview = from_json(serde_json::json!({"spec": {"token": token}}));
    let webhook = server.client_as("webhook", &[]).unwrap();
    let reviews = ResourceClient::<TokenReview>::cluster(webhook);
    let message = forbidden(
        reviews
            .create(&Default::default(), &review)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        r#"tokenreviews.authentication.k8s.io is forbidden: User "webhook" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope"#
    );

    let admin = server.client().unwrap();
    let role: ClusterRole = from_json(serde_json::json!({
        "metadata": {"name": "auth-delegator"},
        "rules": [
            {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
        ],
    }));
    let binding: ClusterRoleBinding = from_json(serde_json::json!({
        "metadata": {"name": "webhook-auth-delegator"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "auth-delegator"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "webhook"}],
    }));
    ResourceClient::<ClusterRole>::cluster(admin.clone())
        .create(&Default::default(), &role)
        .await
        .unwrap();
    ResourceClient::<ClusterRoleBinding>::cluster(admin)
        .create(&Default::default(), &binding)
        .await
        .unwrap();
    let status = reviews
        .create(&Default::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(status.authenticated, Some(true), "{status:?}");
    assert_eq!(
        status.user.unwrap().username.as_deref(),
        Some("system:serviceaccount:default:robot")
    );
    let bad: TokenReview = from_json(serde_json::json!({"spec": {"token": "not-a-token"}}));
    let status = reviews
        .create(&Default::default(), &bad)
        .await
        .unwrap()
        .status
        .unwrap();
    assert_ne!(status.authenticated, Some(true), "{status:?}");
}
