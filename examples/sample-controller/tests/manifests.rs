//! The generated manifests (`config/crd/` from the Foo type's markers, `config/rbac/role.yaml`
//! from the controller's `+kubebuilder:rbac` markers; `hack/verify-codegen.sh` keeps them
//! current) install with the real kubectl, and the CRD enforces the markers' validation:
//! kube-apiserver's CRD validation rejects `replicas: 11` against `maximum: 10`
//! (`k8s.io/apiextensions-apiserver/pkg/apiserver/validation`).
//!
//! kubectl is part of the test environment: the test fails, never skips, without it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kubegen_testserver::TestServer;

const KUBECTL: &str = "/usr/bin/kubectl";

fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(KUBECTL)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl is installed at /usr/bin/kubectl");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .expect("write stdin");
    drop(input);
    child.wait_with_output().expect("kubectl output")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_crd_and_role_install_with_kubectl_and_the_crd_validates() {
    let server = TestServer::start().await.expect("server");
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "sample-controller-manifests-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = kubeconfig.clone();
    let root_owned = root.to_owned();
    let outcome = tokio::task::spawn_blocking(move || {
        let root = root_owned.as_path();
        let crd = root.join("config/crd");
        let role = root.join("config/rbac/role.yaml");
        let applied = kubectl(
            &config,
            &[
                "apply",
                "-f",
                crd.to_str().expect("utf-8 path"),
                "-f",
                role.to_str().expect("utf-8 path"),
            ],
            None,
        );
        assert!(applied.status.success(), "{}", text(&applied));
        let applied = text(&applied);
        assert!(
            applied.contains("customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io created"),
            "{applied}"
        );
        assert!(
            applied.contains("clusterrole.rbac.authorization.k8s.io/manager-role created"),
            "{applied}"
        );
        let role = kubectl(&config, &["get", "clusterrole", "manager-role", "-o", "yaml"], None);
        assert!(role.status.success(), "{}", text(&role));
        assert!(text(&role).contains("deployments"), "{}", text(&role));

        let example = root.join("artifacts/example-foo.yaml");
        let created = kubectl(
            &config,
            &["apply", "-f", example.to_str().expect("utf-8 path")],
            None,
        );
        assert!(created.status.success(), "{}", text(&created));
        let too_many = "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata:\n  name: too-many\nspec:\n  deploymentName: too-many\n  replicas: 11\n";
        let refused = kubectl(&config, &["apply", "-f", "-"], Some(too_many));
        assert!(!refused.status.success(), "{}", text(&refused));
        assert!(
            text(&refused).contains("spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
            "{}",
            text(&refused)
        );
    })
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    outcome.expect("kubectl steps");
}
