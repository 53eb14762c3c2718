//! ValidatingAdmissionPolicies over HTTP, as kube-apiserver's admission chain runs them
//! (`k8s.io/apiserver/pkg/admission/plugin/policy/validating/`: `dispatcher.go` for the
//! denial text, `validator.go` for the default reason `Invalid`; the validation of the
//! policy object itself in `pkg/apis/admissionregistration/validation/validation.go`).

#![allow(clippy::unwrap_used)]

use kubegen_testserver::{ClusterConfig, TestServer};
use serde_json::{Value, json};

const API: &str = "/apis/admissionregistration.k8s.io/v1";

/// (status, warnings, body) of one request as the admin.
async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> (u16, Vec<String>, Value) {
    let response = reqwest::Client::new()
        .request(method, format!("{}{path}", server.url()))
        .bearer_auth(server.admin_token())
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let warnings = response
        .headers()
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, warnings, body)
}

fn policy(name: &str, expression: &str, message: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": expression, "message": message}]}})
}

fn binding(name: &str, policy: &str, actions: &[&str]) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy, "validationActions": actions}})
}

fn configmap(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

#[tokio::test]
async fn a_bound_policy_denies_warns_and_a_broken_one_is_refused() {
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let post = reqwest::Method::POST;
    let cms = "/api/v1/namespaces/default/configmaps";

    // A policy whose expression does not compile is refused when it is written.
    let (code, _, body) = send(
        &server,
        post.clone(),
        &format!("{API}/validatingadmissionpolicies"),
        policy("broken", "object.data.size( > 1", "x"),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("spec.validations[0].expression"),
        "{body}"
    );

    // Deny: the request is refused with kube-apiserver's text and nothing is stored.
    for (path, body) in [
        (
            "validatingadmissionpolicies",
            policy(
                "no-passwords",
                "!has(object.data) || !('password' in object.data)",
                "passwords belong in Secrets",
            ),
        ),
        (
            "validatingadmissionpolicybindings",
            binding("no-passwords", "no-passwords", &["Deny"]),
        ),
        (
            "validatingadmissionpolicies",
            policy(
                "small",
                "!has(object.data) || size(object.data) <= 2",
                "at most two keys",
            ),
        ),
        (
            "validatingadmissionpolicybindings",
            binding("small", "small", &["Warn"]),
        ),
    ] {
        let (code, _, out) = send(&server, post.clone(), &format!("{API}/{path}"), body).await;
        assert_eq!(code, 201, "{out}");
    }
    let (code, _, body) = send(
        &server,
        post.clone(),
        cms,
        configmap("creds", json!({"password": "hunter2"})),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "configmaps \"creds\" is forbidden: ValidatingAdmissionPolicy 'no-passwords' with binding 'no-passwords' denied request: passwords belong in Secrets"
    );
    assert_eq!(body["reason"], "Invalid");
    let (code, _, _) = send(
        &server,
        reqwest::Method::GET,
        &format!("{cms}/creds"),
        Value::Null,
    )
    .await;
    assert_eq!(code, 404, "nothing is stored on a denied request");

    // Warn: the request is admitted, with the failure as a Warning header.
    let (code, warnings, body) = send(
        &server,
        post,
        cms,
        configmap("big", json!({"a": "1", "b": "2", "c": "3"})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        warnings,
        vec![
            "299 - \"Validation failed for ValidatingAdmissionPolicy 'small' with binding 'small': at most two keys\""
        ]
    );
}

/// MutatingAdmissionPolicy over HTTP, as kubectl 1.36 writes it
/// (`admissionregistration.k8s.io/v1`; `k8s.io/apiserver/pkg/admission/plugin/policy/mutating/`):
/// a policy whose mutation does not compile is refused when it is written; a bound policy
/// adds a label with an ApplyConfiguration (merged with the request's labels) and an
/// annotation with a JSONPatch, before the object is stored; an unbound policy does nothing.
#[tokio::test]
async fn a_bound_mutating_policy_changes_the_stored_object() {
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let post = reqwest::Method::POST;
    let cms = "/api/v1/namespaces/default/configmaps";
    let mutating = |name: &str, mutations: Value| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"]}]},
                "mutations": mutations}})
    };

    let (code, _, body) = send(
        &server,
        post.clone(),
        &format!("{API}/mutatingadmissionpolicies"),
        mutating(
            "broken",
            json!([{"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: "}}]),
        ),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("spec.mutations[0].jsonPatch.expression"),
        "{body}"
    );

    let (code, _, body) = send(
        &server,
        post.clone(),
        &format!("{API}/mutatingadmissionpolicies"),
        mutating(
            "stamp",
            json!([
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                    "Object{metadata: Object.metadata{labels: {'stamped-by': 'policy'}}}"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression":
                    "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'example.com/size': string(size(object.data))}}]"}}
            ]),
        ),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["metadata"]["generation"], 1, "{body}");

    // Not bound yet: the object is stored as sent.
    let (code, _, body) = send(
        &server,
        post.clone(),
        cms,
        configmap("before", json!({"a": "1"})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert!(body["metadata"].get("labels").is_none(), "{body}");

    let (code, _, body) = send(
        &server,
        post.clone(),
        &format!("{API}/mutatingadmissionpolicybindings"),
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "stamp"}, "spec": {"policyName": "stamp"}}),
    )
    .await;
    assert_eq!(code, 201, "{body}");

    let mut cm = configmap("after", json!({"a": "1", "b": "2"}));
    cm["metadata"]["labels"] = json!({"app": "web"});
    let (code, _, body) = send(&server, post, cms, cm).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        body["metadata"]["labels"],
        json!({"app": "web", "stamped-by": "policy"})
    );
    assert_eq!(
        body["metadata"]["annotations"],
        json!({"example.com/size": "2"})
    );
    let (_, _, stored) = send(
        &server,
        reqwest::Method::GET,
        &format!("{cms}/after"),
        Value::Null,
    )
    .await;
    assert_eq!(stored["metadata"]["labels"]["stamped-by"], "policy");

    // Discovery lists both kinds in v1, as kube-apiserver 1.36 does.
    let (_, _, list) = send(&server, reqwest::Method::GET, API, Value::Null).await;
    let names: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(names.contains(&"mutatingadmissionpolicies"), "{names:?}");
    assert!(
        names.contains(&"mutatingadmissionpolicybindings"),
        "{names:?}"
    );
}
