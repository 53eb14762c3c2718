//! Script tests: the `kubegen-testserver` binary driven by the installed kubectl, the way
//! users poke a cluster: built-in kinds, a CRD kind (cert-manager's Certificate), typed
//! `create` subcommands, server-side Tables, apply conflicts, diff, watch and namespace
//! deletion.
//!
//! kubectl is part of the test environment: every test fails, never skips, without
//! `/usr/bin/kubectl`.

#![allow(clippy::unwrap_used)]

use std::{
    io::{BufRead, BufReader, Read},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::Duration,
};

const KUBECTL: &str = "/usr/bin/kubectl";

struct Server {
    child: Child,
    url: String,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start(name: &str) -> Server {
    let dir = std::env::temp_dir().join(format!("kubegen-kubectl-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let crd = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/crds/cert-manager.io_certificates.yaml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .args(["--addr", "127.0.0.1:0", "--kubeconfig-out"])
        .arg(dir.join("kubeconfig"))
        .arg("--crd")
        .arg(crd)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "printed URL: {url:?}");
    Server { child, url, dir }
}

impl Server {
    fn kubectl(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(KUBECTL);
        cmd.arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .arg("--server")
            .arg(&self.url)
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args);
        cmd
    }

    /// Runs kubectl (with `stdin` as a file body when given); returns (success, stdout+stderr).
    fn run(&self, args: &[&str], stdin: Option<&str>) -> (bool, String) {
        let mut cmd = self.kubectl(args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        {
            use std::io::Write;
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
    }

    fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, text) = self.run(args, stdin);
        assert!(ok, "kubectl {args:?} failed: {text}");
        text
    }

    /// `kubectl get <kind> -w` while `during` runs; returns what the watch printed.
    fn watch_while(&self, kind: &str, during: impl FnOnce()) -> String {
        let mut child = self
            .kubectl(&["get", kind, "-w", "-o", "name"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        thread::sleep(Duration::from_millis(1500));
        during();
        thread::sleep(Duration::from_millis(1500));
        child.kill().unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child.wait().unwrap();
        out
    }
}

const CONFIGMAP: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  labels:
    app: demo
data:
  a: \"1\"
";

#[test]
fn kubectl_drives_a_builtin_kind() {
    require_kubectl();
    let s = start("builtin");
    assert!(
        s.ok(&["get", "namespaces", "-o", "name"], None)
            .contains("namespace/kube-system")
    );
    s.ok(&["create", "-f", "-"], Some(CONFIGMAP));
    let (ok, text) = s.run(&["create", "-f", "-"], Some(CONFIGMAP));
    assert!(
        !ok && text.contains("AlreadyExists") || text.contains("already exists"),
        "{text}"
    );
    let changed = CONFIGMAP.replace("\"1\"", "\"2\"");
    let (ok, text) = s.run(&["apply", "--server-side", "-f", "-"], Some(&changed));
    assert!(
        !ok && text.contains("conflict with \"kubectl-create\""),
        "{text}"
    );
    s.ok(
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&changed),
    );
    s.ok(
        &["patch", "configmap", "demo", "-p", r#"{"data":{"b":"2"}}"#],
        None,
    );
    s.ok(
        &[
            "patch",
            "configmap",
            "demo",
            "--type=merge",
            "-p",
            r#"{"data":{"c":"3"}}"#,
        ],
        None,
    );
    s.ok(
        &[
            "patch",
            "configmap",
            "demo",
            "--type=json",
            "-p",
            r#"[{"op":"add","path":"/data/d","value":"4"}]"#,
        ],
        None,
    );
    s.ok(&["label", "configmap", "demo", "tier=web"], None);
    let data = s.ok(
        &["get", "configmap", "demo", "-o", "jsonpath={.data}"],
        None,
    );
    assert_eq!(data.trim(), r#"{"a":"2","b":"2","c":"3","d":"4"}"#);
    assert!(
        s.ok(&["get", "configmaps", "-l", "tier=web", "-o", "name"], None)
            .contains("configmap/demo")
    );
    let managers = s.ok(
        &[
            "get",
            "configmap",
            "demo",
            "--show-managed-fields",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}",
        ],
        None,
    );
    assert!(managers.contains("kubectl"), "{managers}");
    let watched = s.watch_while("configmaps", || {
        s.ok(&["delete", "configmap", "demo"], None);
    });
    assert!(watched.contains("configmap/demo"), "{watched}");
    let (ok, _) = s.run(&["get", "configmap", "demo"], None);
    assert!(!ok, "deleted");
}

const CERTIFICATE: &str = "apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web
spec:
  secretName: web-tls
  issuerRef:
    name: ca
";

#[test]
fn kubectl_drives_a_crd_kind() {
    require_kubectl();
    let s = start("crd");
    // Built-in kinds publish k8s-openapi's definitions under /openapi/v3.
    let explained = s.ok(&["explain", "deployment.spec.replicas"], None);
    assert!(
        explained.contains("FIELD: replicas <integer>")
            && explained.contains("Number of desired pods"),
        "{explained}"
    );
    // `kubectl explain` reads the CRD's schema from /openapi/v3 (apiextensions-apiserver
    // publishes each served version's openAPIV3Schema).
    let explained = s.ok(&["explain", "certificates.spec.secretName"], None);
    assert!(
        explained.contains("FIELD: secretName <string>")
            && explained.contains("Name of the Secret resource"),
        "{explained}"
    );
    s.ok(&["create", "-f", "-"], Some(CERTIFICATE));
    s.ok(&["apply", "--server-side", "-f", "-"], Some(CERTIFICATE));
    s.ok(
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&CERTIFICATE.replace("web-tls", "web-tls-2")),
    );
    s.ok(
        &[
            "patch",
            "certificate",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"duration":"1h"}}"#,
        ],
        None,
    );
    s.ok(
        &[
            "patch",
            "certificate",
            "web",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/secretName","value":"s3"}]"#,
        ],
        None,
    );
    let (ok, text) = s.run(
        &[
            "patch",
            "certificate",
            "web",
            "-p",
            r#"{"spec":{"secretName":"x"}}"#,
        ],
        None,
    );
    assert!(
        !ok && text.contains("not supported"),
        "strategic merge is refused for CRs: {text}"
    );
    s.ok(&["label", "certificate", "web", "team=a"], None);
    let spec = s.ok(
        &[
            "get",
            "certificate",
            "web",
            "-o",
            "jsonpath={.spec.secretName} {.spec.duration} {.metadata.labels.team}",
        ],
        None,
    );
    assert_eq!(spec.trim(), "s3 1h a");
    assert!(
        s.ok(&["get", "certs", "-o", "name"], None)
            .contains("certificate.cert-manager.io/web")
    );
    let watched = s.watch_while("certificates", || {
        s.ok(&["delete", "certificate", "web"], None);
    });
    assert!(
        watched.contains("certificate.cert-manager.io/web"),
        "{watched}"
    );
}

/// kubectl must be installed for the tests below: they fail, not skip, without it.
fn require_kubectl() {
    assert!(
        Path::new(KUBECTL).exists(),
        "{KUBECTL} is required by this test (it drives the server the way users do)"
    );
}

/// kubectl's typed `create` subcommands send built-in kinds as protobuf
/// (`application/vnd.kubernetes.protobuf`, API Concepts "Protobuf encoding"): they must
/// work as they do against kube-apiserver, and what they created reads back in JSON.
#[test]
fn kubectl_typed_create_subcommands_send_protobuf() {
    require_kubectl();
    let s = start("protobuf");
    s.ok(&["create", "namespace", "demo"], None);
    s.ok(
        &[
            "create",
            "configmap",
            "cfg",
            "-n",
            "demo",
            "--from-literal=a=b",
        ],
        None,
    );
    s.ok(
        &[
            "create",
            "deployment",
            "web",
            "-n",
            "demo",
            "--image=nginx:1",
            "--replicas=2",
        ],
        None,
    );
    s.ok(&["create", "serviceaccount", "bot", "-n", "demo"], None);
    s.ok(
        &[
            "create",
            "secret",
            "generic",
            "token",
            "-n",
            "demo",
            "--from-literal=t=s3cr3t",
        ],
        None,
    );
    let data = s.ok(
        &[
            "get",
            "configmap",
            "cfg",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.a}",
        ],
        None,
    );
    assert_eq!(data.trim(), "b");
    let spec = s.ok(
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "demo",
            "-o",
            "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.spec.selector.matchLabels.app}",
        ],
        None,
    );
    assert_eq!(spec.trim(), "2 nginx:1 web");
    let secret = s.ok(
        &[
            "get",
            "secret",
            "token",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.t}",
        ],
        None,
    );
    assert_eq!(secret.trim(), "czNjcjN0");
    s.ok(&["delete", "deployment", "web", "-n", "demo"], None);
}

/// `kubectl get` asks for `meta.k8s.io/v1` Tables (API Concepts, "Receiving resources as
/// Tables"): built-ins print kube-apiserver's printers.go columns, custom resources their
/// CRD's additionalPrinterColumns (apiextensions-apiserver tableconvertor).
#[test]
fn kubectl_get_prints_server_side_table_columns() {
    require_kubectl();
    let s = start("tables");
    s.ok(
        &[
            "create",
            "deployment",
            "web",
            "--image=nginx:1",
            "--replicas=3",
        ],
        None,
    );
    let out = s.ok(&["get", "deployments"], None);
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{out}"
    );
    assert!(out.lines().nth(1).unwrap().starts_with("web "), "{out}");
    assert!(out.contains("/3"), "{out}");
    let wide = s.ok(&["get", "deployments", "-o", "wide"], None);
    assert!(
        wide.contains("CONTAINERS") && wide.contains("nginx:1"),
        "{wide}"
    );
    s.ok(
        &[
            "create",
            "configmap",
            "cfg",
            "--from-literal=a=b",
            "--from-literal=c=d",
        ],
        None,
    );
    let out = s.ok(&["get", "configmaps", "-A"], None);
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAMESPACE", "NAME", "DATA", "AGE"], "{out}");
    let row: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..3], ["default", "cfg", "2"], "{out}");
    let out = s.ok(&["get", "namespaces"], None);
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "STATUS", "AGE"], "{out}");

    s.ok(&["create", "-f", "-"], Some(CERTIFICATE));
    let out = s.ok(&["get", "certificates"], None);
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "READY", "SECRET", "AGE"], "{out}");
    let row: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..2], ["web", "web-tls"], "{out}");
    let wide = s.ok(&["get", "certificates", "-o", "wide"], None);
    assert!(wide.contains("ISSUER") && wide.contains(" ca "), "{wide}");
}

/// A session over many kinds, as a user drives a cluster (issue 16 item 9): typed `create`
/// subcommands for fifteen kinds (each sent as protobuf), server-side apply conflicts
/// between two field managers (API docs "Server-Side Apply", Conflicts), `kubectl diff`
/// (a dry-run patch, `dryRun=All`), and namespace deletion held by a finalizer
/// (NamespaceLifecycle admission: creates in a terminating namespace are forbidden).
#[test]
fn kubectl_session_across_kinds() {
    require_kubectl();
    let s = start("session");
    s.ok(&["create", "namespace", "demo"], None);
    let n = ["-n", "demo"];
    let creates: [&[&str]; 15] = [
        &["create", "configmap", "cfg", "--from-literal=a=1"],
        &["create", "secret", "generic", "token", "--from-literal=t=x"],
        &["create", "serviceaccount", "bot"],
        &["create", "deployment", "web", "--image=nginx:1"],
        &["create", "job", "once", "--image=busybox"],
        &[
            "create",
            "cronjob",
            "tick",
            "--image=busybox",
            "--schedule=*/5 * * * *",
        ],
        &["create", "role", "reader", "--verb=get", "--resource=pods"],
        &[
            "create",
            "rolebinding",
            "readers",
            "--role=reader",
            "--user=ann",
        ],
        &[
            "create",
            "clusterrole",
            "viewer",
            "--verb=list",
            "--resource=nodes",
        ],
        &[
            "create",
            "clusterrolebinding",
            "viewers",
            "--clusterrole=viewer",
            "--user=ann",
        ],
        &["create", "service", "clusterip", "web", "--tcp=80:8080"],
        &["create", "quota", "small", "--hard=pods=10"],
        &["create", "priorityclass", "high", "--value=1000"],
        &["create", "ingress", "site", "--rule=example.com/=web:80"],
        &[
            "create",
            "poddisruptionbudget",
            "web",
            "--selector=app=web",
            "--min-available=1",
        ],
    ];
    for args in creates {
        s.ok(&[args, &n[..]].concat(), None);
    }
    let names = s.ok(
        &[
            "get",
            "configmap,secret,serviceaccount,deployment,job,cronjob,role,rolebinding,service,\
             resourcequota,ingress,poddisruptionbudget",
            "-n",
            "demo",
            "-o",
            "name",
        ],
        None,
    );
    for want in [
        "configmap/cfg",
        "secret/token",
        "serviceaccount/bot",
        "deployment.apps/web",
        "job.batch/once",
        "cronjob.batch/tick",
        "role.rbac.authorization.k8s.io/reader",
        "rolebinding.rbac.authorization.k8s.io/readers",
        "service/web",
        "resourcequota/small",
        "ingress.networking.k8s.io/site",
        "poddisruptionbudget.policy/web",
    ] {
        assert!(names.lines().any(|l| l == want), "{want} missing: {names}");
    }
    let cluster = s.ok(
        &[
            "get",
            "clusterrole/viewer",
            "clusterrolebinding/viewers",
            "priorityclass/high",
            "-o",
            "name",
        ],
        None,
    );
    assert_eq!(cluster.lines().count(), 3, "{cluster}");

    // Server-side apply: two managers, one field.
    let settings = |value: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: demo\n\
             data:\n  mode: \"{value}\"\n"
        )
    };
    s.ok(
        &["apply", "--server-side", "--field-manager=alice", "-f", "-"],
        Some(&settings("fast")),
    );
    let (ok, text) = s.run(
        &["apply", "--server-side", "--field-manager=bob", "-f", "-"],
        Some(&settings("safe")),
    );
    assert!(!ok, "bob's apply must conflict");
    assert!(
        text.contains("conflict with \"alice\"") && text.contains(".data.mode"),
        "{text}"
    );
    s.ok(
        &[
            "apply",
            "--server-side",
            "--field-manager=bob",
            "--force-conflicts",
            "-f",
            "-",
        ],
        Some(&settings("safe")),
    );
    let managers = s.ok(
        &[
            "get",
            "configmap",
            "settings",
            "-n",
            "demo",
            "--show-managed-fields",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}",
        ],
        None,
    );
    assert_eq!(managers.trim(), "bob", "forcing takes the field from alice");

    // kubectl diff: a dry-run patch; exit code 1 and the changed line when they differ.
    let (same, text) = s.run(&["diff", "-f", "-"], Some(&settings("safe")));
    assert!(same, "no difference: {text}");
    let (same, text) = s.run(&["diff", "-f", "-"], Some(&settings("slow")));
    assert!(!same, "a difference exits 1: {text}");
    assert!(
        text.contains("-  mode: safe") && text.contains("+  mode: slow"),
        "{text}"
    );
    assert!(
        !text.contains("resourceVersion"),
        "dry runs keep the resourceVersion: {text}"
    );
    let mode = s.ok(
        &[
            "get",
            "configmap",
            "settings",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.mode}",
        ],
        None,
    );
    assert_eq!(mode.trim(), "safe", "diff changed nothing");

    // Namespace deletion, held by an object's finalizer.
    s.ok(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: demo\n  \
             finalizers: [example.com/hold]\n",
        ),
    );
    s.ok(&["delete", "namespace", "demo", "--wait=false"], None);
    let phase = s.ok(
        &["get", "namespace", "demo", "-o", "jsonpath={.status.phase}"],
        None,
    );
    assert_eq!(phase.trim(), "Terminating");
    let (ok, text) = s.run(&["create", "configmap", "late", "-n", "demo"], None);
    assert!(
        !ok && text.contains("because it is being terminated"),
        "{text}"
    );
    s.ok(
        &[
            "patch",
            "configmap",
            "held",
            "-n",
            "demo",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
        None,
    );
    let mut gone = false;
    for _ in 0..50 {
        let (exists, _) = s.run(&["get", "namespace", "demo"], None);
        if !exists {
            gone = true;
            break;
        }
        thread::sleep(Duration::from_millis(100));
    }
    assert!(gone, "the namespace is removed once its content is gone");
}

/// Schema enforcement as kubectl users meet it (issue 17): `kubectl create -f` of a custom
/// resource that breaks its CRD's schema prints kube-apiserver's 422 (`The Certificate
/// "web" is invalid: ...`, kubectl's rendering of `details.causes` in `cmd/util/helpers.go`
/// `CheckErr`), and `kubectl create --validate=strict` (server-side field validation, which
/// kubectl enables after finding the `fieldValidation` parameter in `/openapi/v3`) fails
/// naming the unknown field (`handlers/create.go` `transformDecodeError`).
#[test]
fn kubectl_create_reports_schema_errors() {
    require_kubectl();
    let s = start("validation");
    let missing_issuer = CERTIFICATE.replace("    name: ca\n", "    kind: Issuer\n");
    let (ok, text) = s.run(&["create", "-f", "-"], Some(&missing_issuer));
    assert!(!ok, "{text}");
    assert!(
        text.contains("The Certificate \"web\" is invalid: spec.issuerRef.name: Required value"),
        "{text}"
    );
    let unknown = CERTIFICATE.replace(
        "  secretName: web-tls\n",
        "  secretName: web-tls\n  bogus: 1\n",
    );
    let (ok, text) = s.run(&["create", "--validate=strict", "-f", "-"], Some(&unknown));
    assert!(!ok, "{text}");
    assert!(
        text.contains(
            "Certificate in version \"v1\" cannot be handled as a Certificate: strict decoding error: unknown field \"spec.bogus\""
        ),
        "{text}"
    );
    // without --validate=strict kubectl warns (fieldValidation=Warn) and the object is
    // stored without the field
    let text = s.ok(&["create", "--validate=warn", "-f", "-"], Some(&unknown));
    assert!(text.contains("unknown field \"spec.bogus\""), "{text}");
    let spec = s.ok(
        &["get", "certificate", "web", "-o", "jsonpath={.spec}"],
        None,
    );
    assert!(!spec.contains("bogus"), "{spec}");
}

/// What kube-apiserver fills in by itself for Services and Jobs: a cluster IP from the
/// service range and node ports from 30000-32767 (pkg/registry/core/service/storage/
/// alloc.go, KEP-3070's upper band first), released on delete and not consumed by a dry
/// run; a Job's generated selector on its controller uid (pkg/registry/batch/job/
/// strategy.go `generateSelector`).
#[test]
fn kubectl_sees_allocated_cluster_ips_node_ports_and_job_selectors() {
    require_kubectl();
    let s = start("alloc");
    let ip = |name: &str| {
        s.ok(
            &["get", "service", name, "-o", "jsonpath={.spec.clusterIP}"],
            None,
        )
    };
    let dry = s.ok(
        &[
            "create",
            "service",
            "clusterip",
            "web",
            "--tcp=80:8080",
            "--dry-run=server",
            "-o",
            "jsonpath={.spec.clusterIP}",
        ],
        None,
    );
    assert_eq!(dry, "10.96.1.0");
    s.ok(
        &["create", "service", "clusterip", "web", "--tcp=80:8080"],
        None,
    );
    assert_eq!(ip("web"), "10.96.1.0", "a dry run reserves nothing");
    s.ok(
        &["create", "service", "nodeport", "edge", "--tcp=443:8443"],
        None,
    );
    assert_eq!(ip("edge"), "10.96.1.1");
    s.ok(
        &["create", "service", "clusterip", "db", "--clusterip=None"],
        None,
    );
    assert_eq!(ip("db"), "None");
    let table = s.ok(&["get", "services"], None);
    let edge = table
        .lines()
        .find(|l| l.starts_with("edge"))
        .unwrap_or_default();
    assert!(
        edge.contains("NodePort") && edge.contains("10.96.1.1") && edge.contains("443:30086/TCP"),
        "{table}"
    );
    let (ok, text) = s.run(
        &[
            "create",
            "service",
            "clusterip",
            "clash",
            "--clusterip=10.96.1.0",
            "--tcp=80",
        ],
        None,
    );
    assert!(
        !ok && text.contains("provided IP is already allocated"),
        "{text}"
    );
    s.ok(&["delete", "service", "web"], None);
    s.ok(
        &["create", "service", "clusterip", "again", "--tcp=80"],
        None,
    );
    assert_eq!(
        ip("again"),
        "10.96.1.0",
        "a deleted Service's IP is free again"
    );

    s.ok(&["create", "job", "once", "--image=busybox"], None);
    let uid = s.ok(
        &["get", "job", "once", "-o", "jsonpath={.metadata.uid}"],
        None,
    );
    let selector = s.ok(
        &[
            "get",
            "job",
            "once",
            "-o",
            "jsonpath={.spec.selector.matchLabels}",
        ],
        None,
    );
    assert_eq!(
        selector,
        format!("{{\"batch.kubernetes.io/controller-uid\":\"{uid}\"}}")
    );
    let labels = s.ok(
        &[
            "get",
            "job",
            "once",
            "-o",
            "jsonpath={.spec.template.metadata.labels.job-name}",
        ],
        None,
    );
    assert_eq!(labels, "once");
}

/// Polls `check` (every 200 ms, up to 60 s) until it holds.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..300 {
        if check() {
            return;
        }
        thread::sleep(Duration::from_millis(200));
    }
    panic!("timed out waiting for {what}");
}

/// The cluster in a process, as kubectl users drive a Deployment: `rollout status` waits
/// for the real controllers (ReplicaSet, scheduler, kubelets), `history`, `undo`,
/// `restart`, `pause` / `resume`, `scale` and `wait --for=condition` work as against a
/// cluster (kubectl's `pkg/cmd/rollout`, `pkg/polymorphichelpers/rollout_status.go`).
#[test]
fn kubectl_rolls_out_a_deployment_on_the_cluster_in_a_process() {
    require_kubectl();
    let s = start("rollout");
    let status = |s: &Server| {
        let out = s.ok(
            &["rollout", "status", "deployment/web", "--timeout=60s"],
            None,
        );
        assert!(out.contains("successfully rolled out"), "{out}");
    };
    let revision = |s: &Server| {
        s.ok(
            &[
                "get",
                "deployment/web",
                "-o",
                "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}",
            ],
            None,
        )
    };
    let image = |s: &Server| {
        s.ok(
            &[
                "get",
                "deployment/web",
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image}",
            ],
            None,
        )
    };
    s.ok(
        &[
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
            "--replicas=3",
        ],
        None,
    );
    status(&s);
    let pods = s.ok(&["get", "pods", "-l", "app=web", "--no-headers"], None);
    assert_eq!(
        pods.lines()
            .filter(|l| l.contains("1/1") && l.contains("Running"))
            .count(),
        3,
        "{pods}"
    );
    s.ok(
        &[
            "wait",
            "--for=condition=Available",
            "deployment/web",
            "--timeout=60s",
        ],
        None,
    );

    s.ok(
        &["set", "image", "deployment/web", "nginx=nginx:1.28"],
        None,
    );
    status(&s);
    assert_eq!(revision(&s), "2");
    let history = s.ok(&["rollout", "history", "deployment/web"], None);
    let revisions: Vec<&str> = history
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.parse::<u32>().is_ok())
        .collect();
    assert_eq!(revisions, ["1", "2"], "{history}");

    s.ok(&["rollout", "undo", "deployment/web"], None);
    status(&s);
    assert_eq!(image(&s), "nginx:1.27");
    assert_eq!(
        revision(&s),
        "3",
        "the undone-to ReplicaSet becomes the newest revision"
    );

    s.ok(&["rollout", "restart", "deployment/web"], None);
    status(&s);
    assert_eq!(revision(&s), "4");

    s.ok(&["rollout", "pause", "deployment/web"], None);
    s.ok(
        &["set", "image", "deployment/web", "nginx=nginx:1.29"],
        None,
    );
    thread::sleep(Duration::from_secs(1));
    assert_eq!(revision(&s), "4", "a paused deployment does not roll out");
    let progressing = s.ok(
        &[
            "get",
            "deployment/web",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Progressing\")].reason}",
        ],
        None,
    );
    assert_eq!(progressing, "DeploymentPaused");
    s.ok(&["rollout", "resume", "deployment/web"], None);
    status(&s);
    assert_eq!(revision(&s), "5");

    s.ok(&["scale", "deployment/web", "--replicas=5"], None);
    status(&s);
    let ready = s.ok(
        &[
            "get",
            "deployment/web",
            "-o",
            "jsonpath={.status.readyReplicas}",
        ],
        None,
    );
    assert_eq!(ready, "5");

    // `kubectl expose`: the Service's EndpointSlice lists the five ready pods.
    s.ok(&["expose", "deployment/web", "--port=80"], None);
    eventually("five endpoints for the Service", || {
        let addresses = s.ok(
            &[
                "get",
                "endpointslices",
                "-l",
                "kubernetes.io/service-name=web",
                "-o",
                "jsonpath={.items[*].endpoints[*].addresses[0]}",
            ],
            None,
        );
        addresses.split_whitespace().count() == 5
    });
}

/// `kubectl delete --cascade=background|foreground|orphan` on a running Deployment: the
/// garbage collector and the kubelets remove (or keep) the ReplicaSet and its pods as
/// kube-controller-manager's collector does (`pkg/controller/garbagecollector`).
#[test]
fn kubectl_cascade_deletes_reach_running_pods() {
    require_kubectl();
    let s = start("cascade");
    let count = |s: &Server, kind: &str, app: &str| {
        s.ok(
            &["get", kind, "-l", &format!("app={app}"), "-o", "name"],
            None,
        )
        .lines()
        .count()
    };
    for app in ["fg", "bg", "orphan"] {
        s.ok(
            &["create", "deployment", app, "--image=nginx", "--replicas=2"],
            None,
        );
        let out = s.ok(
            &[
                "rollout",
                "status",
                &format!("deployment/{app}"),
                "--timeout=60s",
            ],
            None,
        );
        assert!(out.contains("successfully rolled out"), "{out}");
    }
    s.ok(
        &["delete", "deployment", "fg", "--cascade=foreground"],
        None,
    );
    assert_eq!(
        count(&s, "pods", "fg"),
        0,
        "foreground deletion waits for the pods"
    );
    assert_eq!(count(&s, "replicasets", "fg"), 0);

    s.ok(&["delete", "deployment", "bg"], None);
    eventually("background deletion removes the pods", || {
        count(&s, "pods", "bg") == 0 && count(&s, "replicasets", "bg") == 0
    });

    s.ok(
        &["delete", "deployment", "orphan", "--cascade=orphan"],
        None,
    );
    thread::sleep(Duration::from_secs(1));
    assert_eq!(count(&s, "replicasets", "orphan"), 1);
    assert_eq!(count(&s, "pods", "orphan"), 2);
}

/// `kubectl create job` + `kubectl wait --for=condition=complete`: the Job controller
/// and the kubelets run the pod to completion (`pkg/controller/job`).
#[test]
fn kubectl_waits_for_a_job_to_complete() {
    require_kubectl();
    let s = start("job");
    s.ok(&["create", "job", "once", "--image=busybox"], None);
    s.ok(
        &[
            "wait",
            "--for=condition=complete",
            "job/once",
            "--timeout=60s",
        ],
        None,
    );
    let pods = s.ok(
        &[
            "get",
            "pods",
            "-l",
            "batch.kubernetes.io/job-name=once",
            "--no-headers",
        ],
        None,
    );
    assert!(pods.contains("Completed"), "{pods}");
}

/// Pods annotated `kubegen.io/fault` read in `kubectl get pods` as kubectl shows such
/// pods against a real cluster (`pkg/printers/internalversion/printers.go` `printPod`):
/// a crash loop as `Error`, then `CrashLoopBackOff` with its restarts and the age of the
/// last one; a failing pull as `ErrImagePull`, then `ImagePullBackOff`; a never-ready
/// container as `0/1 Running`; a failed run-to-completion pod as `Error`.
#[test]
fn kubectl_get_pods_shows_scripted_kubelet_faults() {
    require_kubectl();
    let s = start("faults");
    let pods = [
        ("crasher", "crash-loop", "Always"),
        ("puller", "image-pull", "Always"),
        ("unready", "never-ready", "Always"),
        ("failer", "exit-code=3", "Never"),
    ];
    for (name, fault, policy) in pods {
        let manifest = format!(
            "apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations:
    kubegen.io/fault: \"{fault}\"
spec:
  restartPolicy: {policy}
  containers:
  - name: app
    image: busybox
"
        );
        s.ok(&["create", "-f", "-"], Some(&manifest));
    }
    // Every (name, ready, status, restarts) row seen while polling.
    let mut seen: Vec<Vec<String>> = Vec::new();
    let wanted: [(&str, &str, &str); 7] = [
        ("crasher", "0/1", "Error"),
        ("crasher", "0/1", "CrashLoopBackOff"),
        ("puller", "0/1", "ErrImagePull"),
        ("puller", "0/1", "ImagePullBackOff"),
        ("unready", "0/1", "Running"),
        ("failer", "0/1", "Error"),
        ("crasher", "1/1", "Running"),
    ];
    eventually("every faulted state shown", || {
        let out = s.ok(&["get", "pods", "--no-headers"], None);
        for line in out.lines() {
            let cells: Vec<String> = line.split_whitespace().map(String::from).collect();
            if !seen.contains(&cells) {
                seen.push(cells);
            }
        }
        wanted.iter().all(|(name, ready, status)| {
            seen.iter()
                .any(|c| c.len() > 3 && c[0] == *name && c[1] == *ready && c[2] == *status)
        })
    });
    let backing_off = seen
        .iter()
        .find(|c| c[0] == "crasher" && c[2] == "CrashLoopBackOff")
        .unwrap();
    assert_eq!(backing_off[3], "1", "{seen:?}");
    assert!(
        backing_off[4].starts_with('(') && backing_off[5] == "ago)",
        "the age of the last restart: {seen:?}"
    );
    let puller = s.ok(
        &[
            "get",
            "pod",
            "puller",
            "-o",
            "jsonpath={.status.phase} {.status.containerStatuses[0].restartCount}",
        ],
        None,
    );
    assert_eq!(puller, "Pending 0");
}

const DAEMONSET: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: agent:1
";

/// `kubectl rollout status|history|undo daemonset/...`: kubectl's `DaemonSetStatusViewer`
/// reads the status the DaemonSet controller writes, and `rollout history|undo` read and
/// restore the ControllerRevisions it keeps (`pkg/controller/daemon/update.go`).
#[test]
fn kubectl_rolls_out_a_daemonset() {
    require_kubectl();
    let s = start("daemonset");
    let status = |s: &Server| {
        let out = s.ok(
            &["rollout", "status", "daemonset/agent", "--timeout=60s"],
            None,
        );
        assert!(out.contains("successfully rolled out"), "{out}");
    };
    let image = |s: &Server| {
        s.ok(
            &[
                "get",
                "daemonset/agent",
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image}",
            ],
            None,
        )
    };
    let revisions = |s: &Server| -> Vec<String> {
        s.ok(&["rollout", "history", "daemonset/agent"], None)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| w.parse::<u32>().is_ok())
            .map(str::to_string)
            .collect()
    };
    s.ok(&["create", "-f", "-"], Some(DAEMONSET));
    status(&s);
    let pods = s.ok(
        &[
            "get",
            "pods",
            "-l",
            "app=agent",
            "-o",
            "wide",
            "--no-headers",
        ],
        None,
    );
    assert_eq!(
        pods.lines().filter(|l| l.contains("Running")).count(),
        3,
        "{pods}"
    );
    for node in ["node-1", "node-2", "node-3"] {
        assert!(pods.contains(node), "{pods}");
    }
    let ds = s.ok(&["get", "daemonset/agent", "--no-headers"], None);
    assert!(
        ds.split_whitespace()
            .take(6)
            .eq(["agent", "3", "3", "3", "3", "3"]),
        "{ds}"
    );

    s.ok(&["set", "image", "daemonset/agent", "agent=agent:2"], None);
    status(&s);
    assert_eq!(revisions(&s), ["1", "2"]);
    s.ok(&["rollout", "undo", "daemonset/agent"], None);
    status(&s);
    assert_eq!(image(&s), "agent:1");
    assert_eq!(
        revisions(&s),
        ["2", "3"],
        "the undone-to revision becomes the newest"
    );
}

/// `kubectl create cronjob`, then `kubectl create job --from=cronjob/...` (a Job from the
/// CronJob's template, owned by it) and `kubectl wait --for=condition=complete`
/// (`pkg/controller/cronjob`, `pkg/controller/job`).
#[test]
fn kubectl_creates_a_job_from_a_cronjob() {
    require_kubectl();
    let s = start("cronjob");
    s.ok(
        &[
            "create",
            "cronjob",
            "tick",
            "--image=busybox",
            "--schedule=*/10 * * * *",
        ],
        None,
    );
    let listed = s.ok(&["get", "cronjob", "tick", "--no-headers"], None);
    assert!(listed.contains("*/10 * * * *"), "{listed}");
    s.ok(&["create", "job", "manual", "--from=cronjob/tick"], None);
    s.ok(
        &[
            "wait",
            "--for=condition=complete",
            "job/manual",
            "--timeout=60s",
        ],
        None,
    );
    let owner = s.ok(
        &[
            "get",
            "job/manual",
            "-o",
            "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}",
        ],
        None,
    );
    assert_eq!(owner, "CronJob/tick");
}

/// A StatefulSet with a volume claim template, as kubectl users drive one on the cluster in
/// a process: `rollout status` waits for the StatefulSet controller, the scheduler's volume
/// binding and the provisioner of the default StorageClass; `get pvc` shows the claims
/// Bound; `set image` rolls out by ordinal; `rollout history` lists the ControllerRevisions
/// and `rollout undo` goes back to the first template (kubectl's
/// `pkg/polymorphichelpers/rollout_status.go` `StatefulSetStatusViewer`, `history.go`
/// `StatefulSetHistoryViewer`, `rollback.go` `StatefulSetRollbacker`).
#[test]
fn kubectl_rolls_out_a_statefulset_with_volumes() {
    require_kubectl();
    let s = start("statefulset");
    let manifest = r#"
apiVersion: v1
kind: Service
metadata:
  name: nginx
spec:
  clusterIP: None
  selector:
    app: nginx
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: nginx
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
"#;
    s.ok(&["apply", "-f", "-"], Some(manifest));
    let status = |s: &Server| {
        let (done, out) = s.run(
            &["rollout", "status", "statefulset/web", "--timeout=60s"],
            None,
        );
        let state = || {
            s.run(
                &["get", "statefulset,pods,pvc,pv,events", "-o", "wide"],
                None,
            )
            .1
        };
        assert!(done, "{out}\n{}", state());
        assert!(
            out.contains("partitioned roll out complete: 3 new pods have been updated"),
            "{out}"
        );
    };
    let image = |s: &Server, pod: &str| {
        s.ok(
            &[
                "get",
                "pod",
                pod,
                "-o",
                "jsonpath={.spec.containers[0].image}",
            ],
            None,
        )
    };
    let revisions = |s: &Server| {
        let history = s.ok(&["rollout", "history", "statefulset/web"], None);
        history
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| w.parse::<u32>().is_ok())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    status(&s);
    let claims = s.ok(&["get", "pvc", "--no-headers"], None);
    for n in 0..3 {
        let line = claims
            .lines()
            .find(|l| l.starts_with(&format!("www-web-{n} ")))
            .unwrap_or_else(|| panic!("no claim www-web-{n}: {claims}"));
        assert!(
            line.contains("Bound") && line.contains("1Gi") && line.contains("RWO"),
            "{line}"
        );
        assert!(line.contains("standard"), "{line}");
    }
    let volumes = s.ok(&["get", "pv", "--no-headers"], None);
    assert_eq!(
        volumes
            .lines()
            .filter(|l| l.contains("Bound")
                && l.contains("Delete")
                && l.contains("default/www-web-"))
            .count(),
        3,
        "{volumes}"
    );
    let pods = s.ok(&["get", "pods", "-l", "app=nginx", "--no-headers"], None);
    assert_eq!(
        pods.lines()
            .filter(|l| l.contains("1/1") && l.contains("Running"))
            .count(),
        3,
        "{pods}"
    );

    s.ok(
        &["set", "image", "statefulset/web", "nginx=nginx:1.28"],
        None,
    );
    status(&s);
    for n in 0..3 {
        assert_eq!(image(&s, &format!("web-{n}")), "nginx:1.28");
    }
    assert_eq!(revisions(&s), ["1", "2"]);

    s.ok(&["rollout", "undo", "statefulset/web"], None);
    status(&s);
    for n in 0..3 {
        assert_eq!(image(&s, &format!("web-{n}")), "nginx:1.27");
    }
    assert_eq!(
        revisions(&s),
        ["2", "3"],
        "the first template's revision is the newest again"
    );
    let claims = s.ok(&["get", "pvc", "--no-headers"], None);
    assert_eq!(
        claims.lines().count(),
        3,
        "pods come back to their claims: {claims}"
    );
}
