//! The operator's RBAC, proven (issue 39): its manager runs as its ServiceAccount, bound to
//! the role `kubegen-codegen rbac` generated from its `+kubebuilder:rbac` markers
//! (`config/rbac/role.yaml`), on a test server that authorizes by RBAC as kube-apiserver
//! does (`plugin/pkg/auth/authorizer/rbac/rbac.go`). The whole life of a Foo — finalizer,
//! Deployment, status, events, leader election, cleanup — needs nothing more; and each
//! marker is needed: generated from a copy of `src/` with one marker deleted, the role
//! leaves the operator with kube-apiserver's 403 naming the verb and the resource the
//! marker granted (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`).

use std::time::Duration;

use foo_operator::{CRD_YAML, Foo, operator};
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Event};
use kube_core::params::{DeleteParams, ListParams, PostParams};
use kubegen::client::ResourceClient;
use kubegen_testserver::{TestServer, audit::AuditEvent};

/// The role the operator ships.
const ROLE: &str = include_str!("../config/rbac/role.yaml");
/// The ServiceAccount the operator runs as.
const SERVICE_ACCOUNT: &str = "foo-operator";
const USER: &str = "system:serviceaccount:default:foo-operator";
const WAIT: Duration = Duration::from_secs(20);

/// The first request of the operator the server refused, as the operator was told.
fn first_forbidden(server: &TestServer) -> Option<String> {
    server
        .audit_events()
        .into_iter()
        .filter(|e: &AuditEvent| e.user.username == USER)
        .find(|e| e.response_status.as_ref().is_some_and(|s| s.code == 403))
        .and_then(|e| e.response_status.map(|s| s.message))
}

/// Runs a Foo's whole life with the operator bound to `role`: `Ok` when the operator
/// created its Deployment, reported it Ready, recorded `Synced`, and removed its
/// finalizer when the Foo was deleted; `Err` with the first 403 the operator met, or
/// with what it never got to.
async fn life_of_a_foo(role: &str) -> Result<(), String> {
    let server = TestServer::builder()
        .rbac()
        .audit()
        .start()
        .await
        .map_err(|e| e.to_string())?;
    server.load_crd_yaml(CRD_YAML).map_err(|e| e.to_string())?;
    let operator_client = server
        .client_with_role("default", SERVICE_ACCOUNT, role)
        .await
        .map_err(|e| e.to_string())?;
    let admin = server.client().map_err(|e| e.to_string())?;
    let options = operator::Options {
        workers: 2,
        probe_addr: ([127, 0, 0, 1], 0).into(),
        metrics_addr: ([127, 0, 0, 1], 0).into(),
        identity: "rbac-test".into(),
        lease_namespace: "default".into(),
        shards: None,
        election: kubegen::leaderelection::LeaderElectionConfig::default(),
    };
    let manager = operator::manager(operator_client, &options).map_err(|e| e.to_string())?;
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(manager.run(stop.clone()));

    let foos = ResourceClient::<Foo>::namespaced(admin.clone(), "default");
    let deployments = ResourceClient::<Deployment>::namespaced(admin.clone(), "default");
    let events = ResourceClient::<Event>::namespaced(admin.clone(), "default");
    let result = async {
        foos.create(&PostParams::default(), &Foo::for_deployment("a", "a", 1))
            .await
            .map_err(|e| e.to_string())?;
        let mut step = "the Deployment, the Ready status and the Synced event";
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(message) = first_forbidden(&server) {
                return Err(message);
            }
            let ready = foos.get("a").await.ok().is_some_and(|f| {
                f.status.is_some_and(|s| {
                    s.conditions
                        .iter()
                        .any(|c| c.type_ == operator::READY && c.status == "True")
                })
            });
            let synced = events.list(&ListParams::default()).await.is_ok_and(|l| {
                l.items
                    .iter()
                    .any(|e| e.reason.as_deref() == Some("Synced"))
            });
            if step.starts_with("the Deployment")
                && ready
                && synced
                && deployments.get("a").await.is_ok()
            {
                foos.delete("a", &DeleteParams::default())
                    .await
                    .map_err(|e| e.to_string())?;
                step = "the Foo's deletion (its finalizer removed)";
            } else if step.starts_with("the Foo's deletion") && foos.get("a").await.is_err() {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("timed out waiting for {step}"));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    .await;
    stop.cancel();
    let _ = running.await;
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_role_is_all_the_operator_needs() {
    if let Err(message) = life_of_a_foo(ROLE).await {
        panic!("the operator, bound to config/rbac/role.yaml: {message}");
    }
}

/// The `+kubebuilder:rbac` markers of `src/`, with the file each is in.
fn markers(src: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(src).expect("src/") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        for line in text.lines().filter(|l| l.contains("+kubebuilder:rbac:")) {
            found.push((path.clone(), line.to_string()));
        }
    }
    found.sort();
    found
}

/// What the 403 of a role without `marker` names: `resource "<resource>" in API group
/// "<group>"` (core spelled `""`).
fn named_in_the_403(marker: &str) -> String {
    let field = |key: &str| {
        marker
            .split([':', ','])
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
            .unwrap_or_default()
            .to_string()
    };
    let group = match field("groups").as_str() {
        "core" => String::new(),
        g => g.to_string(),
    };
    format!(
        "resource \"{}\" in API group \"{group}\"",
        field("resources")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_marker_is_needed_a_deleted_one_is_a_403_naming_its_resource() {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = markers(&crate_dir.join("src"));
    assert_eq!(all.len(), 5, "the operator's markers: {all:?}");
    for (file, marker) in all {
        // A copy of src/ without this one marker, and the role generated from it.
        let copy = tempfile::tempdir().expect("tempdir");
        for entry in std::fs::read_dir(crate_dir.join("src")).expect("src/") {
            let path = entry.expect("entry").path();
            let mut text = std::fs::read_to_string(&path).expect("read");
            if path == file {
                text = text.replacen(&format!("{marker}\n"), "", 1);
            }
            std::fs::write(copy.path().join(path.file_name().expect("name")), text).expect("write");
        }
        let role = kubegen_codegen::rbac::files::generate(copy.path(), "manager-role")
            .expect("generate")
            .expect("a role");
        assert_ne!(role, ROLE, "deleting {marker:?} changed nothing");
        let refused = life_of_a_foo(&role)
            .await
            .expect_err(&format!("the operator ran without {marker:?}"));
        let named = named_in_the_403(&marker);
        assert!(
            refused.contains(&named) && refused.contains(&format!("User \"{USER}\" cannot ")),
            "without {marker:?} the operator's 403 should name {named}: {refused}"
        );
    }
}
