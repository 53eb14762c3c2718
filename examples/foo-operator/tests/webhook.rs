//! Foo's webhooks end to end, as a cluster would run them: the test server (serving TLS)
//! calls the foo-operator's webhook server (`kubegen::webhook`, its own self-signed CA) for
//! every write of a Foo, through the generated `config/webhook/manifests.yaml` registered
//! with the CA injected (what cert-manager's cainjector does), and the installed kubectl
//! sees kube-apiserver's answers: `admission webhook "<name>" denied the request: <message>`
//! (`k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go`).
//!
//! kubectl is part of the test environment: the test fails, never skips, without it.

#![allow(clippy::unwrap_used, clippy::disallowed_names)]

use std::{path::Path, process::Command};

use foo_operator::{CRD_YAML, Foo, webhook};
use kube_core::params::PostParams;
use kubegen::{
    client::ResourceClient,
    webhook::{CaInjector, Server, certs::SelfSignedConfig},
};
use kubegen_testserver::TestServer;
use tokio_util::sync::CancellationToken;

const MANIFESTS: &str = include_str!("../config/webhook/manifests.yaml");

/// Runs kubectl against `kubeconfig` with `stdin`; (success, stdout + stderr).
async fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String) {
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig").arg(kubeconfig).args(args);
    let stdin = stdin.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        use std::{io::Write, process::Stdio};
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl is installed");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    })
    .await
    .unwrap()
}

fn foo_yaml(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n{spec}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_meets_foo_s_webhooks_through_the_generated_manifests() {
    let server = TestServer::builder().tls(true).start().await.unwrap();
    server.load_crd_yaml(CRD_YAML).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();

    // The operator's webhook server, with the certificate of the Service the manifests
    // name; the test server reaches that Service at the server's address.
    let hooks = webhook::server(
        Server::builder()
            .address(([127, 0, 0, 1], 0).into())
            .self_signed(SelfSignedConfig::for_service("webhook-service", "system")),
    )
    .unwrap();
    let addr = hooks.local_addr().unwrap();
    let ca = hooks.ca_bundle();
    server.register_service("system", "webhook-service", 443, addr);
    let stop = CancellationToken::new();
    let serving = tokio::spawn(hooks.run(stop.clone()));

    let manifests = dir.path().join("manifests.yaml");
    std::fs::write(&manifests, MANIFESTS).unwrap();
    let (ok, out) = kubectl(
        &kubeconfig,
        &["apply", "-f", manifests.to_str().unwrap()],
        None,
    )
    .await;
    assert!(ok, "{out}");
    let client = server.client().unwrap();
    CaInjector::new(client.clone())
        .mutating_webhook_configuration("mutating-webhook-configuration")
        .validating_webhook_configuration("validating-webhook-configuration")
        .inject(&ca)
        .await
        .unwrap();

    // The validator refuses 11 replicas, with its message in kube-apiserver's words.
    let (ok, out) = kubectl(
        &kubeconfig,
        &["create", "-f", "-"],
        Some(&foo_yaml("big", "  deploymentName: big\n  replicas: 11\n")),
    )
    .await;
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            "admission webhook \"vfoo-v1alpha1.kb.io\" denied the request: spec.replicas: Invalid value: 11: must be between 0 and 10"
        ),
        "{out}"
    );
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client.clone(), "default");
    let missing = foos.get("big").await.unwrap_err();
    assert!(
        missing.to_string().contains("not found"),
        "nothing is stored on a denied request: {missing}"
    );

    // The defaulter names the Deployment after the Foo when the Foo does not.
    let (ok, out) = kubectl(
        &kubeconfig,
        &["create", "-f", "-"],
        Some(&foo_yaml("plain", "  replicas: 2\n")),
    )
    .await;
    assert!(ok, "{out}");
    let plain = foos.get("plain").await.unwrap();
    assert_eq!(plain.spec.deployment_name, "plain");

    // Updates are validated against the old object: the Deployment's name is immutable.
    let (ok, out) = kubectl(
        &kubeconfig,
        &[
            "patch",
            "foo",
            "plain",
            "--type=merge",
            "-p",
            r#"{"spec":{"deploymentName":"other"}}"#,
        ],
        None,
    )
    .await;
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            "denied the request: spec.deploymentName: Invalid value: \"other\": field is immutable"
        ),
        "{out}"
    );

    // A typed client's create goes through the same webhooks.
    let err = foos
        .create(
            &PostParams::default(),
            &Foo::for_deployment("negative", "negative", -1),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("must be between 0 and 10"),
        "{err}"
    );

    stop.cancel();
    serving.await.unwrap().unwrap();
}
