//! `kubegen-codegen rbac --from-audit`: an operator's requests, recorded by the test
//! server's audit log, become the `+kubebuilder:rbac` markers and the role that allow
//! exactly them.
//!
//! `testdata/audit/operator.audit.log` is the log of [`OPERATOR`]'s run below against a
//! `kubegen-testserver` (admin setup included); `operator.rbac.txt` is what
//! `rbac --from-audit` prints for it. `KUBEGEN_BLESS=1 cargo test --test rbac_audit`
//! rewrites both from a fresh run.

#![allow(clippy::unwrap_used)] // a failed call is a failed test

mod common;

use common::run;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use kubegen_codegen::rbac;
use kubegen_testserver::{AuditEvent, ClusterConfig, TestServer, UserInfo};
use serde_json::{Value, json};

/// The operator's service account.
const OPERATOR: &str = "system:serviceaccount:demo:op";

fn data(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/audit")
        .join(file)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Sends one request through the in-process front as `front`'s user.
async fn send(front: &kubegen_testserver::InProcess, method: &str, uri: &str, body: Option<Value>) {
    let mut request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("user-agent", "op/1.0");
    let bytes = match body {
        Some(body) => {
            let ct = if method == "PATCH" {
                "application/merge-patch+json"
            } else {
                "application/json"
            };
            request = request.header("content-type", ct);
            body.to_string().into_bytes()
        }
        None => Vec::new(),
    };
    let _ = front.serve(request.body(bytes).unwrap()).await;
}

/// An operator's run against a server that audits to `log`: the admin makes its
/// namespace, the operator reads and writes its objects (some of them missing), another
/// user reads a secret.
async fn record(log: &Path) {
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .audit_log_path(log)
        .start()
        .await
        .unwrap();
    let admin = server.transport();
    send(
        &admin,
        "POST",
        "/api/v1/namespaces",
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})),
    )
    .await;
    let op = admin.as_user(UserInfo::new(
        OPERATOR,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:demo",
            "system:authenticated",
        ],
    ));
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}});
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "op"}});
    let event = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
        "involvedObject": {"kind": "ConfigMap", "namespace": "demo", "name": "cm"}});
    let deployment =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}});
    let requests: Vec<(&str, &str, Option<Value>)> = vec![
        ("GET", "/version", None),
        (
            "GET",
            "/apis/coordination.k8s.io/v1/namespaces/demo/leases/op",
            None,
        ),
        (
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/demo/leases",
            Some(lease.clone()),
        ),
        (
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/demo/leases/op",
            Some(lease),
        ),
        ("GET", "/apis/apps/v1/deployments?limit=500", None),
        (
            "GET",
            "/apis/apps/v1/deployments?watch=true&resourceVersion=1",
            None,
        ),
        ("GET", "/api/v1/namespaces/demo/configmaps", None),
        ("GET", "/api/v1/namespaces/demo/configmaps?watch=true", None),
        ("POST", "/api/v1/namespaces/demo/configmaps", Some(cm)),
        (
            "PATCH",
            "/api/v1/namespaces/demo/configmaps/cm",
            Some(json!({"data": {"k": "v"}})),
        ),
        (
            "PUT",
            "/apis/apps/v1/namespaces/demo/deployments/web/status",
            Some(deployment),
        ),
        ("POST", "/api/v1/namespaces/demo/events", Some(event)),
        ("DELETE", "/api/v1/namespaces/demo/configmaps/cm", None),
        ("DELETE", "/api/v1/namespaces/demo/pods", None),
    ];
    for (method, uri, body) in requests {
        send(&op, method, uri, body).await;
    }
    let bob = admin.as_user(UserInfo::new("bob", ["system:authenticated"]));
    send(&bob, "GET", "/api/v1/namespaces/demo/secrets/token", None).await;
}

fn from_audit(log: &Path, extra: &[&str]) -> String {
    let log = log.to_str().unwrap();
    let out = run(
        &[&["rbac", "--from-audit", log][..], extra].concat(),
        Path::new(env!("CARGO_MANIFEST_DIR")),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[tokio::test]
async fn a_recorded_run_prints_the_markers_and_role_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.log");
    record(&log).await;
    let learned = from_audit(&log, &["--user", OPERATOR]);
    if std::env::var_os("KUBEGEN_BLESS").is_some() {
        std::fs::copy(&log, data("operator.audit.log")).unwrap();
        std::fs::write(data("operator.rbac.txt"), &learned).unwrap();
    }
    let golden = std::fs::read_to_string(data("operator.rbac.txt")).unwrap();
    assert_eq!(
        learned, golden,
        "a fresh run learns what the sample learned"
    );
    // Every line of the log is a valid audit.k8s.io/v1 Event.
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let event: AuditEvent = serde_json::from_str(line).unwrap();
        assert_eq!(event.api_version, "audit.k8s.io/v1");
    }
}

#[test]
fn the_sample_log_learns_the_golden_output() {
    let learned = from_audit(&data("operator.audit.log"), &["--user", OPERATOR]);
    let golden = std::fs::read_to_string(data("operator.rbac.txt")).unwrap();
    assert_eq!(learned, golden);
    // By default every user but the admins: bob's secret read joins in.
    let everyone = from_audit(&data("operator.audit.log"), &[]);
    assert!(
        everyone.contains("// +kubebuilder:rbac:groups=\"\",resources=secrets,verbs=get\n"),
        "{everyone}"
    );
    assert!(
        !everyone.contains("namespaces"),
        "the admin's requests are left out:\n{everyone}"
    );
    // --namespace: the operator's requests in demo make a Role there.
    let scoped = from_audit(
        &data("operator.audit.log"),
        &["--user", OPERATOR, "--namespace", "demo"],
    );
    assert!(
        scoped.contains("// +kubebuilder:rbac:groups=\"\",resources=configmaps,verbs=create;delete;list;patch;watch,namespace=demo\n"),
        "{scoped}"
    );
    assert!(
        scoped.contains("kind: Role\nmetadata:\n  name: manager-role\n  namespace: demo\n"),
        "{scoped}"
    );
}

/// A resource request's `(group, resource, verb)`.
type Grant = (String, String, String);

/// `(group, resource, verb)` of every resource request and `(url, verb)` of every
/// non-resource request the operator made.
fn recorded(log: &Path) -> (BTreeSet<Grant>, BTreeSet<(String, String)>) {
    let (mut resources, mut urls) = (BTreeSet::new(), BTreeSet::new());
    for line in std::fs::read_to_string(log).unwrap().lines() {
        let event: AuditEvent = serde_json::from_str(line).unwrap();
        if event.acting_user().username != OPERATOR {
            continue;
        }
        match &event.object_ref {
            Some(o) => {
                let resource = if o.subresource.is_empty() {
                    o.resource.clone()
                } else {
                    format!("{}/{}", o.resource, o.subresource)
                };
                resources.insert((o.api_group.clone(), resource, event.verb.clone()));
            }
            None => {
                let path = event.request_uri.split('?').next().unwrap_or_default();
                urls.insert((path.to_owned(), event.verb.clone()));
            }
        }
    }
    (resources, urls)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The printed markers, read back by the marker parser and generated into a role (also
/// through the CLI's `rbac --input-dir`), allow exactly the recorded requests.
#[test]
fn printed_markers_round_trip_to_a_role_allowing_exactly_the_recorded_requests() {
    let log = data("operator.audit.log");
    let printed = from_audit(&log, &["--user", OPERATOR]);
    let (markers_text, role_yaml) = printed.split_once("---\n").unwrap();

    let mut diagnostics = Vec::new();
    let markers = rbac::files::markers_in(Path::new("src/lib.rs"), markers_text, &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(markers.len(), markers_text.lines().count());
    let roles = rbac::roles(&markers, rbac::DEFAULT_ROLE_NAME);
    assert_eq!(roles.len(), 1);

    let (resources, urls) = recorded(&log);
    let (mut allowed_resources, mut allowed_urls) = (BTreeSet::new(), BTreeSet::new());
    for rule in roles[0]["rules"].as_array().unwrap() {
        for verb in strings(&rule["verbs"]) {
            for url in strings(&rule["nonResourceURLs"]) {
                allowed_urls.insert((url, verb.clone()));
            }
            for group in strings(&rule["apiGroups"]) {
                for resource in strings(&rule["resources"]) {
                    allowed_resources.insert((group.clone(), resource, verb.clone()));
                }
            }
        }
    }
    assert_eq!(allowed_resources, resources);
    assert_eq!(allowed_urls, urls);
    assert!(
        resources
            .iter()
            .any(|(_, r, v)| r == "deployments/status" && v == "update")
    );
    assert!(
        resources
            .iter()
            .any(|(_, r, v)| r == "pods" && v == "deletecollection")
    );

    // The CLI's own `rbac` over the printed markers writes the same role.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("src")).unwrap();
    std::fs::write(tmp.path().join("src/lib.rs"), markers_text).unwrap();
    let out = run(
        &["rbac", "--input-dir", "src", "--output", "role.yaml"],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(tmp.path().join("role.yaml")).unwrap();
    assert_eq!(written, format!("{}---\n{role_yaml}", rbac::files::HEADER));
}

#[test]
fn a_malformed_line_is_a_file_line_error() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(data("operator.audit.log")).unwrap();
    let first = good.lines().next().unwrap();
    std::fs::write(
        tmp.path().join("audit.log"),
        format!("{first}\n{{\"verb\": \n"),
    )
    .unwrap();
    let out = run(&["rbac", "--from-audit", "audit.log"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("audit.log:2: not JSON: "),
        "{}",
        stderr(&out)
    );

    let out = run(&["rbac", "--from-audit", "missing.log"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("missing.log: "),
        "{}",
        stderr(&out)
    );

    let out = run(&["rbac", "--user", "op"], tmp.path());
    assert_eq!(out.status.code(), Some(2), "--user needs --from-audit");
}
