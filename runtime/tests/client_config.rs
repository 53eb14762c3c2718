//! Configuration end to end: kubeconfig contexts and merging (parsed by kube-client), token
//! files that rotate, exec credential plugins, TLS with a generated CA and client certificate,
//! proxies, in-cluster settings, and no secret ever showing in Debug output or logs.
#![allow(clippy::unwrap_used)] // test helpers may unwrap, like the tests

mod client_support;

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use base64::Engine as _;
use client_support::*;
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen::client::{
    Client, Config, ConfigError, Credentials, KubeConfigOptions, ResourceClient, TlsConfig,
};
use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/client")
        .join(name)
}

fn ctx(name: &str) -> KubeConfigOptions {
    KubeConfigOptions {
        context: Some(name.into()),
        ..Default::default()
    }
}

fn cm_json() -> serde_json::Value {
    json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}})
}

fn b64(data: impl AsRef<[u8]>) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[tokio::test]
async fn kubeconfig_current_context_is_the_default() {
    let c = Config::from_kubeconfig_files(&[fixture("kubeconfig-a.yaml")], &Default::default())
        .await
        .unwrap();
    assert_eq!(c.cluster_url.to_string(), "https://dev.example.test:6443/");
    assert_eq!(c.default_namespace, "team-a");
    assert!(c.tls.insecure_skip_tls_verify);
    assert!(matches!(c.credentials, Credentials::Bearer(_)));
    assert!(
        c.qps <= 0.0,
        "no client-side limit by default (API Priority and Fairness; controller-runtime #3119)"
    );
}

#[tokio::test]
async fn kubeconfig_context_can_be_chosen() {
    let c = Config::from_kubeconfig_files(&[fixture("kubeconfig-a.yaml")], &ctx("prod"))
        .await
        .unwrap();
    assert_eq!(c.cluster_url.host(), Some("prod.example.test"));
    assert_eq!(c.default_namespace, "default");
    assert_eq!(
        c.tls.server_name.as_deref(),
        Some("kubernetes.prod.internal")
    );
    assert_eq!(
        c.proxy_url.as_ref().map(|u| u.host()),
        Some(Some("proxy.example.test"))
    );
    match &c.credentials {
        Credentials::Basic { username, .. } => assert_eq!(username, "admin"),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn kubeconfig_files_merge_with_the_first_file_winning() {
    let files = [fixture("kubeconfig-a.yaml"), fixture("kubeconfig-b.yaml")];
    let c = Config::from_kubeconfig_files(&files, &Default::default())
        .await
        .unwrap();
    assert_eq!(
        c.cluster_url.host(),
        Some("dev.example.test"),
        "first current-context wins"
    );
    let Credentials::Bearer(token) = &c.credentials else {
        panic!("unexpected {:?}", c.credentials)
    };
    use secrecy::ExposeSecret as _;
    assert_eq!(
        token.expose_secret(),
        "dev-secret-token-AAAA",
        "first dev-user wins"
    );

    let c = Config::from_kubeconfig_files(&files, &ctx("staging"))
        .await
        .unwrap();
    assert_eq!(c.cluster_url.host(), Some("staging.example.test"));
    assert_eq!(c.default_namespace, "stage");
    assert!(
        matches!(&c.credentials, Credentials::TokenFile(p) if p == Path::new("/var/run/secrets/staging/token")),
        "{:?}",
        c.credentials
    );
}

#[tokio::test]
async fn unknown_context_is_a_config_error() {
    let err = Config::from_kubeconfig_files(&[fixture("kubeconfig-a.yaml")], &ctx("nope"))
        .await
        .unwrap_err();
    assert!(matches!(err, ConfigError::Kubeconfig(_)), "{err}");
}

#[tokio::test]
async fn incluster_settings_come_from_the_service_account_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, _) = ca();
    std::fs::write(dir.path().join("token"), "sa-token\n").unwrap();
    std::fs::write(dir.path().join("ca.crt"), ca.pem()).unwrap();
    std::fs::write(dir.path().join("namespace"), "kube-system").unwrap();
    let c = Config::incluster_from(dir.path(), "10.0.0.1", "443").unwrap();
    assert_eq!(c.cluster_url.to_string(), "https://10.0.0.1:443/");
    assert_eq!(c.default_namespace, "kube-system");
    assert_eq!(c.tls.root_certs.as_ref().unwrap().len(), 1);
    assert!(matches!(&c.credentials, Credentials::TokenFile(p) if p.ends_with("token")));
    let v6 = Config::incluster_from(dir.path(), "fd00::1", "443").unwrap();
    assert_eq!(v6.cluster_url.host(), Some("[fd00::1]"));
}

fn set_mtime(path: &Path, t: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[tokio::test]
async fn token_file_is_reread_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "token-one\n").unwrap();
    let t0 = SystemTime::now() - Duration::from_secs(3600);
    set_mtime(&token, t0);
    let replies: Vec<_> = (0..3).map(|_| Reply::json(200, cm_json())).collect();
    let fx = Fixture::start(Script::new(replies)).await;
    let client = Client::try_from_config(
        Config::new(fx.url()).with_credentials(Credentials::TokenFile(token.clone())),
    )
    .unwrap();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    cms.get("c").await.unwrap();
    cms.get("c").await.unwrap();
    std::fs::write(&token, "token-two-rotated\n").unwrap();
    set_mtime(&token, t0 + Duration::from_secs(60));
    cms.get("c").await.unwrap();
    let auth: Vec<_> = fx
        .script
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap())
        .collect();
    assert_eq!(
        auth,
        [
            "Bearer token-one",
            "Bearer token-one",
            "Bearer token-two-rotated"
        ]
    );
}

#[tokio::test]
async fn a_401_rereads_the_token_file_and_retries_once() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "old-tok").unwrap();
    let t0 = SystemTime::now() - Duration::from_secs(3600);
    set_mtime(&token, t0);
    let fx = Fixture::start(Script::new(vec![
        Reply::json(200, cm_json()),
        Reply::status(401, "Unauthorized"),
        Reply::json(200, cm_json()),
    ]))
    .await;
    let client = Client::try_from_config(
        Config::new(fx.url()).with_credentials(Credentials::TokenFile(token.clone())),
    )
    .unwrap();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    cms.get("c").await.unwrap();
    // rotated in place with the same size and timestamp: only the 401 reveals it
    std::fs::write(&token, "new-tok").unwrap();
    set_mtime(&token, t0);
    cms.get("c").await.unwrap();
    let auth: Vec<_> = fx
        .script
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap())
        .collect();
    assert_eq!(auth, ["Bearer old-tok", "Bearer old-tok", "Bearer new-tok"]);
}

fn exec_kubeconfig(dir: &Path, server: &str, expiry: &str, fail: bool) -> PathBuf {
    let script = fixture("exec-plugin.sh");
    let count = dir.join("count");
    let yaml = format!(
        r#"apiVersion: v1
kind: Config
current-context: c
clusters:
  - name: k
    cluster:
      server: {server}
contexts:
  - name: c
    context: {{cluster: k, user: u}}
users:
  - name: u
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1beta1
        command: sh
        args: ["{script}"]
        provideClusterInfo: true
        interactiveMode: Never
        env:
          - {{name: COUNT_FILE, value: "{count}"}}
          - {{name: EXPIRY, value: "{expiry}"}}
          - {{name: FAIL, value: "{fail}"}}
"#,
        script = script.display(),
        count = count.display(),
        fail = if fail { "1" } else { "0" },
    );
    let path = dir.join("kubeconfig");
    std::fs::write(&path, yaml).unwrap();
    path
}

fn runs(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("count"))
        .map(|s| s.trim().parse().unwrap())
        .unwrap_or(0)
}

#[tokio::test]
async fn exec_plugin_token_is_cached_until_expiry_and_refreshed_on_401() {
    let dir = tempfile::tempdir().unwrap();
    let fx = Fixture::start(Script::new(vec![
        Reply::json(200, cm_json()),
        Reply::json(200, cm_json()),
        Reply::status(401, "Unauthorized"),
        Reply::json(200, cm_json()),
    ]))
    .await;
    let kc = exec_kubeconfig(
        dir.path(),
        &fx.url().to_string(),
        "2099-01-01T00:00:00Z",
        false,
    );
    let config = Config::from_kubeconfig_files(&[kc], &Default::default())
        .await
        .unwrap();
    assert!(matches!(config.credentials, Credentials::Exec(_)));
    let client = Client::try_from_config(config).unwrap();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    cms.get("c").await.unwrap();
    cms.get("c").await.unwrap();
    assert_eq!(runs(dir.path()), 1, "cached until expirationTimestamp");
    cms.get("c").await.unwrap();
    assert_eq!(runs(dir.path()), 2, "a 401 runs the plugin again");
    let auth: Vec<_> = fx
        .script
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap())
        .collect();
    assert_eq!(
        auth,
        [
            "Bearer exec-token-1",
            "Bearer exec-token-1",
            "Bearer exec-token-1",
            "Bearer exec-token-2"
        ]
    );
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("count.info")).unwrap())
            .unwrap();
    assert_eq!(info["kind"], "ExecCredential");
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(
        info["spec"]["cluster"]["server"].as_str().unwrap(),
        fx.url().to_string()
    );
}

#[tokio::test]
async fn expired_exec_credentials_are_fetched_again() {
    let dir = tempfile::tempdir().unwrap();
    let fx = Fixture::start(Script::new(vec![
        Reply::json(200, cm_json()),
        Reply::json(200, cm_json()),
    ]))
    .await;
    let kc = exec_kubeconfig(
        dir.path(),
        &fx.url().to_string(),
        "2001-01-01T00:00:00Z",
        false,
    );
    let client = Client::try_from_config(
        Config::from_kubeconfig_files(&[kc], &Default::default())
            .await
            .unwrap(),
    )
    .unwrap();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    cms.get("c").await.unwrap();
    cms.get("c").await.unwrap();
    assert_eq!(runs(dir.path()), 2);
}

#[tokio::test]
async fn failing_exec_plugin_is_an_auth_error_without_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let fx = Fixture::start(Script::new(vec![])).await;
    let kc = exec_kubeconfig(
        dir.path(),
        &fx.url().to_string(),
        "2099-01-01T00:00:00Z",
        true,
    );
    let client = Client::try_from_config(
        Config::from_kubeconfig_files(&[kc], &Default::default())
            .await
            .unwrap(),
    )
    .unwrap();
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    let err = cms.get("c").await.unwrap_err();
    assert!(matches!(err, kubegen::client::Error::Auth(_)), "{err}");
    assert!(!format!("{err} {err:?}").contains("must-not-leak"));
    assert!(fx.script.requests().is_empty());
}

#[tokio::test]
async fn requests_go_through_the_configured_proxy() {
    let fx = Fixture::start(Script::new(vec![Reply::json(200, cm_json())])).await;
    let config = Config::new("http://kube.example.invalid:6443".parse().unwrap())
        .with_proxy(fx.url())
        .with_user_agent("my-controller/1.2");
    let cms: ResourceClient<ConfigMap> =
        ResourceClient::default_namespaced(Client::try_from_config(config).unwrap());
    cms.get("c").await.unwrap();
    let r = &fx.script.requests()[0];
    assert_eq!(
        r.uri,
        "http://kube.example.invalid:6443/api/v1/namespaces/default/configmaps/c"
    );
    assert_eq!(r.header("user-agent").as_deref(), Some("my-controller/1.2"));
}

#[tokio::test]
async fn default_user_agent_names_kubegen() {
    let fx = Fixture::start(Script::new(vec![Reply::json(200, cm_json())])).await;
    let cms: ResourceClient<ConfigMap> =
        ResourceClient::default_namespaced(Client::try_from_config(Config::new(fx.url())).unwrap());
    cms.get("c").await.unwrap();
    assert!(
        fx.script.requests()[0]
            .header("user-agent")
            .unwrap()
            .starts_with("kubegen/")
    );
}

// ---------- TLS ----------

fn ca() -> (rcgen::CertifiedIssuer<'static, rcgen::KeyPair>, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kubegen test CA");
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    let key = rcgen::KeyPair::generate().unwrap();
    let key_pem = key.serialize_pem();
    (
        rcgen::CertifiedIssuer::self_signed(params, key).unwrap(),
        key_pem,
    )
}

struct Leaf {
    cert_pem: String,
    key_pem: String,
    cert_der: Vec<u8>,
    key_der: Vec<u8>,
}

fn leaf(
    ca: &rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
    names: &[&str],
    client: bool,
) -> Leaf {
    let mut params =
        rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
    params.distinguished_name.push(
        rcgen::DnType::CommonName,
        names.first().copied().unwrap_or("client"),
    );
    params.extended_key_usages = vec![if client {
        rcgen::ExtendedKeyUsagePurpose::ClientAuth
    } else {
        rcgen::ExtendedKeyUsagePurpose::ServerAuth
    }];
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, ca).unwrap();
    Leaf {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        cert_der: cert.der().to_vec(),
        key_der: key.serialize_der(),
    }
}

/// An HTTPS fixture that demands a client certificate signed by `ca`.
async fn tls_fixture(
    ca: &rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
    server: &Leaf,
    script: Arc<Script>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(ca.der().to_vec())).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![CertificateDer::from(server.cert_der.clone())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server.key_der.clone())),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let handshakes = Arc::new(Mutex::new(Vec::new()));
    let seen = handshakes.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let app = router(script.clone());
            let seen = seen.clone();
            tokio::spawn(async move {
                match acceptor.accept(tcp).await {
                    Ok(tls) => {
                        seen.lock().unwrap().push("ok".to_string());
                        let svc = hyper_util::service::TowerToHyperService::new(app);
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                            .await;
                    }
                    Err(e) => seen.lock().unwrap().push(format!("handshake failed: {e}")),
                }
            });
        }
    });
    (format!("https://127.0.0.1:{port}"), handshakes)
}

fn tls_kubeconfig(dir: &Path, server: &str, cluster_extra: &str, user: &str) -> PathBuf {
    let yaml = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n  - name: k\n    cluster:\n      server: {server}\n{cluster_extra}contexts:\n  - name: c\n    context: {{cluster: k, user: u}}\nusers:\n  - name: u\n    user:\n{user}"
    );
    let p = dir.join("kubeconfig");
    std::fs::write(&p, yaml).unwrap();
    p
}

async fn get_via(kubeconfig: PathBuf) -> Result<ConfigMap, kubegen::client::Error> {
    let config = Config::from_kubeconfig_files(&[kubeconfig], &Default::default())
        .await
        .unwrap();
    let client = Client::try_from_config(config).unwrap();
    ResourceClient::<ConfigMap>::default_namespaced(client)
        .get("c")
        .await
}

#[tokio::test]
async fn tls_with_ca_and_client_certificate_from_kubeconfig_data() {
    let (ca, _) = ca();
    let server = leaf(&ca, &["127.0.0.1", "localhost"], false);
    let client_cert = leaf(&ca, &["system:admin"], true);
    let script = Script::new(vec![Reply::json(200, cm_json())]);
    let (url, handshakes) = tls_fixture(&ca, &server, script.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = tls_kubeconfig(
        dir.path(),
        &url,
        &format!("      certificate-authority-data: {}\n", b64(ca.pem())),
        &format!(
            "      client-certificate-data: {}\n      client-key-data: {}\n",
            b64(&client_cert.cert_pem),
            b64(&client_cert.key_pem)
        ),
    );
    let cm = get_via(kc).await.unwrap();
    assert_eq!(cm.metadata.name.as_deref(), Some("c"));
    assert_eq!(handshakes.lock().unwrap().as_slice(), ["ok"]);
    assert_eq!(script.requests().len(), 1);
}

#[tokio::test]
async fn tls_client_certificate_from_files() {
    let (ca, _) = ca();
    let server = leaf(&ca, &["127.0.0.1"], false);
    let client_cert = leaf(&ca, &["system:admin"], true);
    let script = Script::new(vec![Reply::json(200, cm_json())]);
    let (url, _) = tls_fixture(&ca, &server, script).await;
    let dir = tempfile::tempdir().unwrap();
    let (ca_f, crt_f, key_f) = (
        dir.path().join("ca.crt"),
        dir.path().join("client.crt"),
        dir.path().join("client.key"),
    );
    std::fs::write(&ca_f, ca.pem()).unwrap();
    std::fs::write(&crt_f, &client_cert.cert_pem).unwrap();
    std::fs::write(&key_f, &client_cert.key_pem).unwrap();
    let kc = tls_kubeconfig(
        dir.path(),
        &url,
        &format!("      certificate-authority: {}\n", ca_f.display()),
        &format!(
            "      client-certificate: {}\n      client-key: {}\n",
            crt_f.display(),
            key_f.display()
        ),
    );
    get_via(kc).await.unwrap();
}

#[tokio::test]
async fn tls_without_a_client_certificate_is_refused() {
    let (ca, _) = ca();
    let server = leaf(&ca, &["127.0.0.1"], false);
    let script = Script::new(vec![Reply::json(200, cm_json())]);
    let (url, _) = tls_fixture(&ca, &server, script.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = tls_kubeconfig(
        dir.path(),
        &url,
        &format!("      certificate-authority-data: {}\n", b64(ca.pem())),
        "      token: abc\n",
    );
    let err = get_via(kc).await.unwrap_err();
    assert!(matches!(err, kubegen::client::Error::Transport(_)), "{err}");
    assert!(script.requests().is_empty());
}

#[tokio::test]
async fn tls_with_an_untrusted_server_is_refused_unless_verification_is_skipped() {
    let (ca, _) = ca();
    let (other_ca, _) = ca_pair();
    let server = leaf(&ca, &["127.0.0.1"], false);
    let client_cert = leaf(&ca, &["system:admin"], true);
    let script = Script::new(vec![Reply::json(200, cm_json())]);
    let (url, _) = tls_fixture(&ca, &server, script.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let user = format!(
        "      client-certificate-data: {}\n      client-key-data: {}\n",
        b64(&client_cert.cert_pem),
        b64(&client_cert.key_pem)
    );
    let kc = tls_kubeconfig(
        dir.path(),
        &url,
        &format!(
            "      certificate-authority-data: {}\n",
            b64(other_ca.pem())
        ),
        &user,
    );
    let err = get_via(kc).await.unwrap_err();
    assert!(matches!(err, kubegen::client::Error::Transport(_)), "{err}");

    let kc = tls_kubeconfig(
        dir.path(),
        &url,
        "      insecure-skip-tls-verify: true\n",
        &user,
    );
    get_via(kc).await.unwrap();
    assert_eq!(script.requests().len(), 1);
}

fn ca_pair() -> (rcgen::CertifiedIssuer<'static, rcgen::KeyPair>, String) {
    ca()
}

#[tokio::test]
async fn tls_server_name_overrides_the_host_for_verification() {
    let (ca, _) = ca();
    let server = leaf(&ca, &["kubernetes.internal"], false);
    let client_cert = leaf(&ca, &["system:admin"], true);
    let script = Script::new(vec![Reply::json(200, cm_json())]);
    let (url, _) = tls_fixture(&ca, &server, script.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let user = format!(
        "      client-certificate-data: {}\n      client-key-data: {}\n",
        b64(&client_cert.cert_pem),
        b64(&client_cert.key_pem)
    );
    let ca_line = format!("      certificate-authority-data: {}\n", b64(ca.pem()));
    let err = get_via(tls_kubeconfig(dir.path(), &url, &ca_line, &user))
        .await
        .unwrap_err();
    assert!(
        matches!(err, kubegen::client::Error::Transport(_)),
        "the cert does not name 127.0.0.1: {err}"
    );
    let with_name = format!("{ca_line}      tls-server-name: kubernetes.internal\n");
    get_via(tls_kubeconfig(dir.path(), &url, &with_name, &user))
        .await
        .unwrap();
}

#[test]
fn mismatched_client_certificate_and_key_is_a_config_error() {
    let (ca, _) = ca();
    let a = leaf(&ca, &["a"], true);
    let b = leaf(&ca, &["b"], true);
    let tls = TlsConfig {
        client_cert_pem: Some(a.cert_pem.into_bytes()),
        client_key_pem: Some(b.key_pem.clone().into()),
        ..Default::default()
    };
    let err = kubegen::client::rustls_config(&tls).unwrap_err();
    assert!(matches!(err, ConfigError::Tls(_)));
    assert!(!format!("{err:?}").contains(&b.key_pem[30..60]));
}

// ---------- secrets never shown ----------

#[derive(Clone, Default)]
struct LogBuf(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_secret_appears_in_debug_output_or_logs() {
    let logs = LogBuf::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let secrets = [
        "dev-secret-token-AAAA",
        "prod-secret-password-BBBB",
        "exec-token-1",
        "exec-token-2",
        "must-not-leak",
        "PRIVATE KEY",
        "env-secret-DDDD",
        "file-token-EEEE",
        "proxy-pass-FFFF",
    ];
    let mut shown: Vec<String> = Vec::new();

    // kubeconfig with a token and one with a password
    for c in ["dev", "prod"] {
        let config = Config::from_kubeconfig_files(&[fixture("kubeconfig-a.yaml")], &ctx(c))
            .await
            .unwrap();
        shown.push(format!("{config:?}"));
        shown.push(format!("{:?}", config.credentials));
        let client = Client::try_from_config(config).unwrap();
        shown.push(format!("{client:?}"));
    }
    // TLS material
    let (ca, _) = ca();
    let leaf = leaf(&ca, &["x"], true);
    let tls = TlsConfig {
        root_certs: Some(vec![ca.der().to_vec()]),
        client_cert_pem: Some(leaf.cert_pem.clone().into_bytes()),
        client_key_pem: Some(leaf.key_pem.clone().into()),
        insecure_skip_tls_verify: false,
        server_name: None,
    };
    shown.push(format!("{tls:?}"));
    let proxied = Config::new("https://x".parse().unwrap()).with_proxy(
        "http://user:proxy-pass-FFFF@proxy.test:3128"
            .parse()
            .unwrap(),
    );
    let proxied_debug = format!("{proxied:?}");
    assert!(proxied_debug.contains("proxy.test:3128"), "{proxied_debug}");
    shown.push(proxied_debug);
    shown.push(format!(
        "{:?}",
        Config::new("https://x".parse().unwrap()).with_tls(tls)
    ));
    // exec plugin with a secret in its environment, run through a 401 refresh
    let dir = tempfile::tempdir().unwrap();
    let fx = Fixture::start(Script::new(vec![
        Reply::status(401, "Unauthorized"),
        Reply::json(200, cm_json()),
        Reply::status(403, "Forbidden"),
    ]))
    .await;
    let kc = exec_kubeconfig(
        dir.path(),
        &fx.url().to_string(),
        "2099-01-01T00:00:00Z",
        false,
    );
    let yaml = std::fs::read_to_string(&kc).unwrap().replace(
        "        env:\n",
        "        env:\n          - {name: API_KEY, value: env-secret-DDDD}\n",
    );
    std::fs::write(&kc, yaml).unwrap();
    let config = Config::from_kubeconfig_files(std::slice::from_ref(&kc), &Default::default())
        .await
        .unwrap();
    shown.push(format!("{config:?}"));
    let client = Client::try_from_config(config).unwrap();
    shown.push(format!("{client:?}"));
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(client);
    shown.push(format!("{cms:?}"));
    cms.get("c").await.unwrap();
    let err = cms.get("c").await.unwrap_err();
    shown.push(format!("{err:?} {err}"));
    // a failing exec plugin
    let bad_dir = tempfile::tempdir().unwrap();
    let bad = exec_kubeconfig(
        bad_dir.path(),
        &fx.url().to_string(),
        "2099-01-01T00:00:00Z",
        true,
    );
    let cms: ResourceClient<ConfigMap> = ResourceClient::default_namespaced(
        Client::try_from_config(
            Config::from_kubeconfig_files(&[bad], &Default::default())
                .await
                .unwrap(),
        )
        .unwrap(),
    );
    let err = cms.get("c").await.unwrap_err();
    shown.push(format!("{err:?} {err}"));
    // a token file
    let tf = dir.path().join("tok");
    std::fs::write(&tf, "file-token-EEEE").unwrap();
    shown.push(format!("{:?}", Credentials::TokenFile(tf)));
    // a kubeconfig that does not parse, with a token in it
    let broken = dir.path().join("broken");
    std::fs::write(
        &broken,
        "users:\n  - name: u\n    user: {token: dev-secret-token-AAAA\n",
    )
    .unwrap();
    if let Err(e) = Config::from_kubeconfig_files(&[broken], &Default::default()).await {
        shown.push(format!("{e:?} {e}"));
    }

    shown.push(String::from_utf8(logs.0.lock().unwrap().clone()).unwrap());
    assert!(
        shown.last().unwrap().contains("exec credential plugin"),
        "logs were captured"
    );
    for s in &shown {
        for secret in secrets {
            assert!(!s.contains(secret), "{secret} leaked in: {s}");
        }
    }
}

// ---------- Config::infer, in a child process (the environment cannot be changed in-process) ----------

fn run_child(test: &str, mode: &str, envs: &[(&str, std::ffi::OsString)]) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture"])
        .env("KUBEGEN_INFER_CHILD", mode)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran the test: {stdout}"
    );
}

#[tokio::test]
async fn infer_merges_the_kubeconfig_list_from_the_environment() {
    match std::env::var("KUBEGEN_INFER_CHILD").as_deref() {
        Ok("merge") => {
            let c = Config::infer().await.unwrap();
            assert_eq!(c.cluster_url.host(), Some("dev.example.test"));
            assert_eq!(c.default_namespace, "team-a");
            let s = Config::from_kubeconfig(&ctx("staging")).await.unwrap();
            assert_eq!(
                s.default_namespace, "stage",
                "second file's context is merged in"
            );
        }
        Ok("none") => {
            let err = Config::infer().await.unwrap_err();
            assert!(matches!(err, ConfigError::Infer { .. }), "{err}");
        }
        _ => {
            let list =
                std::env::join_paths([fixture("kubeconfig-a.yaml"), fixture("kubeconfig-b.yaml")])
                    .unwrap();
            run_child(
                "infer_merges_the_kubeconfig_list_from_the_environment",
                "merge",
                &[("KUBECONFIG", list)],
            );
            let home = tempfile::tempdir().unwrap();
            run_child(
                "infer_merges_the_kubeconfig_list_from_the_environment",
                "none",
                &[
                    ("KUBECONFIG", home.path().join("missing").into_os_string()),
                    ("HOME", home.path().as_os_str().to_owned()),
                ],
            );
        }
    }
}
