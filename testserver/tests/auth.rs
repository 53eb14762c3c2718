//! Authentication and impersonation driven by the installed kubectl against the
//! `kubegen-testserver` binary: `--token-auth-file` users, wrong tokens, anonymous
//! requests on and off, ServiceAccount tokens (`kubectl create token`), client
//! certificates (`--client-ca-file`) and impersonation (`kubectl --as`).
//!
//! Every server serves TLS: kubectl sends no credentials to an `http://` server
//! (clientcmd reads a user's auth info only for a TLS transport).
//!
//! kubectl is part of the test environment: every test fails, never skips, without
//! `/usr/bin/kubectl`.

#![allow(clippy::unwrap_used)]

use std::{
    io::{BufRead, BufReader, Read, Write},
    path::PathBuf,
    process::{Child, Command, Stdio},
};

use serde_json::Value;

const KUBECTL: &str = "/usr/bin/kubectl";

/// The token file of these tests (kube-apiserver's `--token-auth-file` format).
const TOKENS: &str = "alicetoken,alice,uid-alice,\"devs,ops\"\n\nbobtoken,bob,uid-bob\n";

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

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kubegen-auth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts the binary with `args` (and a token file), writing its kubeconfig into `dir`.
fn start_in(dir: PathBuf, args: &[&str]) -> Server {
    std::fs::write(dir.join("tokens.csv"), TOKENS).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .args([
            "--addr",
            "127.0.0.1:0",
            "--no-controllers",
            "--kubeconfig-out",
        ])
        .arg(dir.join("kubeconfig"))
        .arg("--token-auth-file")
        .arg(dir.join("tokens.csv"))
        .arg("--tls")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_string();
    assert!(
        url.starts_with("https://127.0.0.1:"),
        "printed URL: {url:?}"
    );
    Server { child, url, dir }
}

fn start(name: &str, args: &[&str]) -> Server {
    start_in(scratch(name), args)
}

impl Server {
    /// Runs kubectl with the server's kubeconfig (the admin's token) and `args`; returns
    /// (success, stdout, stderr).
    fn run_with(&self, kubeconfig: &str, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(KUBECTL)
            .arg("--kubeconfig")
            .arg(self.dir.join(kubeconfig))
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn run(&self, args: &[&str]) -> (bool, String, String) {
        self.run_with("kubeconfig", args)
    }

    fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args);
        assert!(ok, "kubectl {args:?} failed: {out}{err}");
        out
    }

    /// `kubectl auth whoami -o json` (with `args` before it): the SelfSubjectReview's
    /// `status.userInfo`.
    fn whoami_with(&self, kubeconfig: &str, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["auth", "whoami", "-o", "json"]);
        let (ok, out, err) = self.run_with(kubeconfig, &all);
        assert!(ok, "kubectl {all:?} failed: {out}{err}");
        let review: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(review["kind"], "SelfSubjectReview", "{out}");
        review["status"]["userInfo"].clone()
    }

    fn whoami(&self, args: &[&str]) -> Value {
        self.whoami_with("kubeconfig", args)
    }

    /// A kubeconfig next to the server's, with the same cluster and `user` as the user.
    fn kubeconfig_as(&self, name: &str, user: &str) -> String {
        let base = std::fs::read_to_string(self.dir.join("kubeconfig")).unwrap();
        let ca = base
            .lines()
            .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
            .map(|d| format!("    certificate-authority-data: {d}\n"))
            .unwrap_or_default();
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n{ca}users:\n- name: u\n  user:\n{user}contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: default\ncurrent-context: c\n",
            self.url
        );
        std::fs::write(self.dir.join(name), text).unwrap();
        name.to_string()
    }

    /// A raw HTTP/1.1 GET of `path` with `headers` over TLS: (status code, body).
    fn raw_get(&self, path: &str, headers: &[&str]) -> (u16, String) {
        use base64::Engine as _;
        use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
        let base = std::fs::read_to_string(self.dir.join("kubeconfig")).unwrap();
        let ca = base
            .lines()
            .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
            .unwrap();
        let ca = base64::engine::general_purpose::STANDARD
            .decode(ca)
            .unwrap();
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&ca) {
            roots.add(cert.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let addr = self.url.trim_start_matches("https://");
        let name = ServerName::try_from("localhost").unwrap();
        let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
        let tcp = std::net::TcpStream::connect(addr).unwrap();
        let mut stream = rustls::StreamOwned::new(conn, tcp);
        let mut request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
        for h in headers {
            request.push_str(h);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = Vec::new();
        // The server may close without a TLS close_notify: keep what was read.
        let _ = stream.read_to_end(&mut response);
        let response = String::from_utf8_lossy(&response).into_owned();
        let code = response
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (code, body)
    }
}

fn groups(user: &Value) -> Vec<String> {
    user["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap().to_string())
        .collect()
}

// kube-apiserver: staging/src/k8s.io/apiserver/plugin/pkg/authenticator/token/tokenfile/tokenfile.go,
// pkg/registry/authentication/selfsubjectreview/rest.go.
#[test]
fn token_file_users_are_who_whoami_says() {
    let server = start("token-file", &[]);
    let alice = server.kubeconfig_as("alice", "    token: alicetoken\n");
    let me = server.whoami_with(&alice, &[]);
    assert_eq!(me["username"], "alice");
    assert_eq!(me["uid"], "uid-alice");
    assert_eq!(groups(&me), ["devs", "ops", "system:authenticated"]);
    let bob = server.whoami(&["--token", "bobtoken"]);
    assert_eq!(bob["username"], "bob");
    assert_eq!(groups(&bob), ["system:authenticated"]);
    // The table kubectl prints.
    let (ok, table, err) = server.run_with(&alice, &["auth", "whoami"]);
    assert!(ok, "{err}");
    assert!(
        table.contains("Username") && table.contains("alice"),
        "{table}"
    );
    assert!(table.contains("[devs ops system:authenticated]"), "{table}");
    // The admin of the written kubeconfig.
    let admin = server.whoami(&[]);
    assert_eq!(admin["username"], "admin");
    assert_eq!(groups(&admin), ["system:masters", "system:authenticated"]);
}

// kube-apiserver: staging/src/k8s.io/apiserver/pkg/endpoints/filters/authentication.go
// (401 Unauthorized) and pkg/kubeapiserver/authenticator/config.go (a bad token is never
// anonymous).
#[test]
fn a_wrong_token_is_unauthorized() {
    let server = start("wrong-token", &[]);
    let (ok, _, err) = server.run(&["--token", "wrong", "auth", "whoami"]);
    assert!(!ok);
    assert!(
        err.contains("error: You must be logged in to the server (Unauthorized)"),
        "{err}"
    );
    // Discovery's decoder does not read the Status: client-go's generic 401 message, as
    // kubectl prints it against kube-apiserver.
    let (ok, _, err) = server.run(&["--token", "wrong", "get", "namespaces"]);
    assert!(!ok);
    assert!(
        err.contains(
            "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
        ),
        "{err}"
    );
    let (code, body) = server.raw_get("/api/v1/namespaces", &["Authorization: Bearer wrong"]);
    assert_eq!(code, 401, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["status"], "Failure");
    assert_eq!(status["reason"], "Unauthorized");
    assert_eq!(status["message"], "Unauthorized");
    assert_eq!(status["code"], 401);
}

// kube-apiserver: staging/src/k8s.io/apiserver/pkg/authentication/request/anonymous/anonymous.go
// (`--anonymous-auth`).
#[test]
fn anonymous_requests_on_and_off() {
    // kubectl prompts for a user name when a user has no credentials; a basic-auth user
    // is none to kube-apiserver (no basic authenticator), so its requests are anonymous.
    let basic = "    username: nobody\n    password: secret\n";
    let server = start("anonymous-on", &[]);
    let nobody = server.kubeconfig_as("nobody", basic);
    let me = server.whoami_with(&nobody, &[]);
    assert_eq!(me["username"], "system:anonymous");
    assert_eq!(groups(&me), ["system:unauthenticated"]);
    drop(server);

    let server = start("anonymous-off", &["--anonymous-auth=false"]);
    let nobody = server.kubeconfig_as("nobody", basic);
    let (ok, _, err) = server.run_with(&nobody, &["get", "namespaces"]);
    assert!(!ok);
    assert!(
        err.contains("error: You must be logged in to the server"),
        "{err}"
    );
    let (ok, _, err) = server.run_with(&nobody, &["auth", "whoami"]);
    assert!(!ok);
    assert!(err.contains("(Unauthorized)"), "{err}");
    let (code, _) = server.raw_get("/api/v1/namespaces", &[]);
    assert_eq!(code, 401);
    // The admin's token and the token file still work.
    assert!(
        server
            .ok(&["get", "namespaces", "-o", "name"])
            .contains("namespace/default")
    );
    assert_eq!(server.whoami(&["--token", "bobtoken"])["username"], "bob");
}

// kube-apiserver: pkg/registry/core/serviceaccount/storage/token.go (TokenRequest),
// pkg/serviceaccount/jwt.go and pkg/serviceaccount/claims.go (the authenticator).
#[test]
fn kubectl_create_token_and_its_token() {
    let server = start("create-token", &[]);
    server.ok(&["create", "serviceaccount", "builder"]);
    let token = server
        .ok(&["create", "token", "builder"])
        .trim()
        .to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let me = server.whoami(&["--token", &token]);
    assert_eq!(me["username"], "system:serviceaccount:default:builder");
    assert_eq!(
        groups(&me),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]
    );
    let uid = server.ok(&["get", "sa", "builder", "-o", "jsonpath={.metadata.uid}"]);
    assert_eq!(me["uid"], uid.as_str());
    let credential = me["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap();
    assert!(credential.starts_with("JTI="), "{me}");

    // Too short a lifetime, and a ServiceAccount that does not exist.
    let (ok, _, err) = server.run(&["create", "token", "builder", "--duration", "5m"]);
    assert!(!ok);
    assert!(
        err.contains("may not specify a duration less than 10 minutes"),
        "{err}"
    );
    let (ok, _, err) = server.run(&["create", "token", "nobody"]);
    assert!(!ok);
    assert!(
        err.contains("serviceaccounts \"nobody\" not found"),
        "{err}"
    );

    // A token for another audience is not for the API.
    let vault = server
        .ok(&["create", "token", "builder", "--audience", "vault"])
        .trim()
        .to_string();
    let (ok, _, err) = server.run(&["--token", &vault, "get", "pods"]);
    assert!(!ok);
    assert!(err.contains("(Unauthorized)"), "{err}");

    // A token signed by another server's key (same issuer, same names) is refused.
    let other = start("create-token-other", &[]);
    other.ok(&["create", "serviceaccount", "builder"]);
    let foreign = other.ok(&["create", "token", "builder"]).trim().to_string();
    let (ok, _, err) = server.run(&["--token", &foreign, "get", "pods"]);
    assert!(!ok);
    assert!(err.contains("(Unauthorized)"), "{err}");

    // A token bound to a Pod carries it and dies with it.
    server.ok(&[
        "run",
        "worker",
        "--image=nginx",
        "--overrides={\"spec\":{\"serviceAccountName\":\"builder\"}}",
    ]);
    let bound = server
        .ok(&[
            "create",
            "token",
            "builder",
            "--bound-object-kind",
            "Pod",
            "--bound-object-name",
            "worker",
        ])
        .trim()
        .to_string();
    let me = server.whoami(&["--token", &bound]);
    assert_eq!(
        me["extra"]["authentication.kubernetes.io/pod-name"][0],
        "worker"
    );
    server.ok(&["delete", "pod", "worker", "--wait=false"]);
    let (ok, _, err) = server.run(&["--token", &bound, "get", "pods"]);
    assert!(!ok);
    assert!(err.contains("You must be logged in"), "{err}");

    // Deleting the ServiceAccount invalidates its tokens; a new one of the same name
    // (another uid) does not bring them back.
    server.ok(&["delete", "serviceaccount", "builder"]);
    let (ok, _, err) = server.run(&["--token", &token, "get", "pods"]);
    assert!(!ok);
    assert!(err.contains("(Unauthorized)"), "{err}");
    server.ok(&["create", "serviceaccount", "builder"]);
    let (ok, _, _) = server.run(&["--token", &token, "get", "pods"]);
    assert!(!ok);
}

/// A CA and a client certificate for `cn` in organization `org`, signed by it (PEM).
fn client_certificate(cn: &str, org: &str) -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "test client CA");
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    params
        .distinguished_name
        .push(DnType::OrganizationName, org);
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

// kube-apiserver: staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go
// (`CommonNameUserConversion`) and pkg/kubeapiserver/authenticator/config.go (x509 first).
#[test]
fn a_client_certificate_is_its_common_name_and_organizations() {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let dir = scratch("client-cert");
    let (ca, cert, key) = client_certificate("carol", "devs");
    std::fs::write(dir.join("client-ca.pem"), &ca).unwrap();
    let ca_file = dir.join("client-ca.pem").display().to_string();
    let server = start_in(dir, &["--client-ca-file", &ca_file]);
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let carol = server.kubeconfig_as(
        "carol",
        &format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(&cert),
            b64(&key)
        ),
    );
    let me = server.whoami_with(&carol, &[]);
    assert_eq!(me["username"], "carol");
    assert_eq!(groups(&me), ["devs", "system:authenticated"]);
    let credential = me["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap();
    assert!(credential.starts_with("X509SHA256="), "{me}");
    // Without a certificate the client is let through, and is who its token says.
    assert_eq!(server.whoami(&[])["username"], "admin");
    // A certificate of another CA does not get through the handshake.
    let (_, stranger, stranger_key) = client_certificate("mallory", "devs");
    let mallory = server.kubeconfig_as(
        "mallory",
        &format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(&stranger),
            b64(&stranger_key)
        ),
    );
    let (ok, _, _) = server.run_with(&mallory, &["auth", "whoami"]);
    assert!(!ok);
}

// kube-apiserver: staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go.
#[test]
fn impersonation_as_the_admin_and_refused_under_rbac() {
    let server = start("impersonate", &[]);
    let me = server.whoami(&["--as", "bob", "--as-group", "devs"]);
    assert_eq!(me["username"], "bob");
    assert_eq!(groups(&me), ["devs", "system:authenticated"]);
    let sa = server.whoami(&["--as", "system:serviceaccount:ci:builder"]);
    assert_eq!(sa["username"], "system:serviceaccount:ci:builder");
    assert_eq!(
        groups(&sa),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:ci",
            "system:authenticated"
        ]
    );
    let uid = server.whoami(&["--as", "bob", "--as-uid", "1234"]);
    assert_eq!(uid["uid"], "1234");
    // AlwaysAllow lets any user impersonate.
    let by_bob = server.whoami(&["--token", "bobtoken", "--as", "alice"]);
    assert_eq!(by_bob["username"], "alice");
    drop(server);

    // Under RBAC a user without an `impersonate` grant is refused (no binding gives one).
    let server = start("impersonate-rbac", &["--authorization-mode", "RBAC"]);
    let (ok, _, err) = server.run(&[
        "--token",
        "bobtoken",
        "--as",
        "alice",
        "get",
        "--raw",
        "/api/v1/namespaces",
    ]);
    assert!(!ok);
    assert!(err.contains("Error from server (Forbidden): "), "{err}");
    assert!(
        err.contains(
            "users \"alice\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
        ),
        "{err}"
    );
    // The admin (system:masters) still may, even into system:masters.
    let alice = server.whoami(&["--as", "alice", "--as-group", "system:masters"]);
    assert_eq!(alice["username"], "alice");
    assert_eq!(groups(&alice), ["system:masters", "system:authenticated"]);
}

// kube-apiserver: cmd/kube-apiserver/app/options/validation.go (flags refused at start).
#[test]
fn bad_flags_stop_the_binary() {
    let dir = scratch("bad-flags");
    std::fs::write(dir.join("bad.csv"), "t1,u1,uid1\nt2,u2\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .arg("--token-auth-file")
        .arg(dir.join("bad.csv"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.csv:2: must have at least 3 columns"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .args(["--authorization-mode", "Node,RBAC"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"Node\" is not supported"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Who the server says `client` is (a SelfSubjectReview).
async fn whoami_of(client: kubegen::client::Client) -> (String, Vec<String>) {
    use kubegen::apis::authentication::v1::SelfSubjectReview;
    let reviews = kubegen::client::ResourceClient::<SelfSubjectReview>::cluster(client);
    let review = reviews
        .create(&Default::default(), &SelfSubjectReview::default())
        .await
        .unwrap();
    let user = review.status.unwrap().user_info.unwrap();
    (user.username.unwrap(), user.groups.unwrap_or_default())
}

// kube-apiserver: pkg/registry/core/serviceaccount/storage/token.go and
// pkg/serviceaccount/claims.go (the library's ServiceAccount clients).
#[tokio::test]
async fn client_for_service_account_creates_it_and_authenticates_as_it() {
    use kubegen_testserver::{ClusterConfig, TestServer};
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let client = server
        .client_for_service_account("default", "robot")
        .await
        .unwrap();
    let (name, groups) = whoami_of(client).await;
    assert_eq!(name, "system:serviceaccount:default:robot");
    assert_eq!(
        groups,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]
    );
    // The ServiceAccount exists now; a second client reuses it.
    let (name, _) = whoami_of(
        server
            .client_for_service_account("default", "robot")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(name, "system:serviceaccount:default:robot");
    assert!(
        server
            .service_account_token("default", "robot", &["vault"])
            .await
            .unwrap()
            .contains('.')
    );
    let (name, groups) = whoami_of(server.client_as("dave", &["qa"]).unwrap()).await;
    assert_eq!(
        (name.as_str(), groups),
        (
            "dave",
            vec!["qa".to_string(), "system:authenticated".to_string()]
        )
    );
    assert_eq!(
        server.authorization_mode(),
        kubegen_testserver::AuthorizationMode::AlwaysAllow
    );
}

// kube-apiserver: staging/src/k8s.io/apiserver/pkg/server/options/authentication.go
// (a client CA is served over TLS only) and tokenfile.go (a malformed file fails start).
#[tokio::test]
async fn the_builder_checks_its_auth_settings() {
    use kubegen_testserver::{AuthConfig, AuthnError, ClusterConfig, ServerError, TestServer};
    let (ca, _, _) = client_certificate("carol", "devs");
    let without_tls = TestServer::builder()
        .cluster(ClusterConfig::none())
        .auth(AuthConfig::default().client_ca(ca.clone()))
        .start()
        .await;
    assert!(matches!(without_tls, Err(ServerError::ClientCaWithoutTls)));
    let with_tls = TestServer::builder()
        .cluster(ClusterConfig::none())
        .tls(true)
        .auth(AuthConfig::default().client_ca(ca))
        .start()
        .await
        .unwrap();
    assert!(with_tls.url().starts_with("https://"));
    let bad = TestServer::builder()
        .cluster(ClusterConfig::none())
        .tls(true)
        .auth(AuthConfig::default().client_ca("not a certificate"))
        .start()
        .await;
    assert!(matches!(
        bad,
        Err(ServerError::Authn(AuthnError::ClientCa { .. }))
    ));
    let err = AuthConfig::default()
        .tokens_from_csv("inline.csv", "a,b,c\nd,e\n")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "inline.csv:2: must have at least 3 columns (token, user name, user uid), found 2"
    );
    let auth = AuthConfig::default()
        .tokens_from_csv("inline.csv", "t,erin,u1,\"a,b\"\n")
        .unwrap();
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .auth(auth)
        .start()
        .await
        .unwrap();
    let config = server
        .config()
        .unwrap()
        .with_credentials(kubegen::client::Credentials::Bearer("t".to_string().into()));
    let client = kubegen::client::Client::try_from_config(config).unwrap();
    let (name, groups) = whoami_of(client).await;
    assert_eq!((name.as_str(), groups.len()), ("erin", 3));
}
