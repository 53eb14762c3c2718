//! Exec credential plugins against the test server over TLS, ported from client-go
//! `plugin/pkg/client/auth/exec/exec_test.go` (`TestRefreshCreds`' certificate and
//! interactive cases, `TestRoundTripper`'s 401 refresh, `TestTLSCredentials`' rotation):
//! a plugin that returns a client certificate authenticates as the certificate's CN
//! (kube-apiserver's x509 authenticator: CN the user, O the groups), an expired credential
//! runs the plugin again and the next connection presents the new certificate, a 401 runs
//! it again too, and `interactiveMode` decides `spec.interactive` or refuses to run.

use std::{
    io::IsTerminal as _,
    path::PathBuf,
    time::{Duration, SystemTime},
};

use base64::Engine as _;
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::params::WatchParams;
use kubegen::{
    apis::authentication::v1::SelfSubjectReview,
    client::{Client, Config, KubeConfigOptions, Kubeconfig, ResourceClient},
};
use kubegen_testserver::{AuthConfig, ClusterConfig, TestServer};

/// A client CA, and client certificates it signs.
struct Ca {
    pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl Ca {
    fn new() -> Self {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "exec plugin test CA");
        let key = KeyPair::generate().expect("key");
        let pem = params.self_signed(&key).expect("CA").pem();
        Self {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A client certificate for `cn` in group `org` and its key (PEM).
    fn client(&self, cn: &str, org: &str) -> (String, String) {
        use rcgen::{CertificateParams, DnType, KeyPair};
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name.push(DnType::CommonName, cn);
        params
            .distinguished_name
            .push(DnType::OrganizationName, org);
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &self.issuer).expect("signed");
        (cert.pem(), key.serialize_pem())
    }
}

/// A TLS test server that authenticates client certificates of `ca`.
async fn server(ca: &Ca, anonymous: bool) -> TestServer {
    TestServer::builder()
        .cluster(ClusterConfig::none())
        .tls(true)
        .auth(
            AuthConfig::default()
                .client_ca(ca.pem.clone())
                .anonymous(anonymous),
        )
        .start()
        .await
        .expect("server")
}

/// A plugin in a temporary directory: a shell script that records each run (a line in
/// `calls`, `KUBERNETES_EXEC_INFO` in `info.json`) and prints `out<N>.json` on its N-th run,
/// or `out.json` when there is no such file.
struct Plugin {
    dir: tempfile::TempDir,
}

impl Plugin {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = format!(
            "#!/bin/sh\nd='{}'\necho run >> \"$d/calls\"\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/info.json\"\nn=$(wc -l < \"$d/calls\" | tr -d ' ')\nif [ -f \"$d/out$n.json\" ]; then cat \"$d/out$n.json\"; else cat \"$d/out.json\"; fi\n",
            dir.path().display()
        );
        std::fs::write(dir.path().join("plugin.sh"), script).expect("script");
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// What the `n`-th run prints (`None`: every run without its own file).
    fn answer(&self, n: Option<usize>, status: serde_json::Value) {
        let name = n.map_or("out.json".to_owned(), |n| format!("out{n}.json"));
        let credential = serde_json::json!({
            "apiVersion": "client.authentication.k8s.io/v1",
            "kind": "ExecCredential",
            "status": status,
        });
        std::fs::write(self.path(&name), credential.to_string()).expect("answer");
    }

    fn calls(&self) -> usize {
        std::fs::read_to_string(self.path("calls"))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    fn info(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.path("info.json")).expect("info");
        serde_json::from_str(&text).expect("KUBERNETES_EXEC_INFO is JSON")
    }

    /// A config for `server` whose user is this plugin (run through `/bin/sh`, so the
    /// script needs no execute bit), from a kubeconfig as kubectl would read it.
    async fn config(&self, server: &TestServer, interactive_mode: &str) -> Config {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let yaml = format!(
            r#"
apiVersion: v1
kind: Config
current-context: c
clusters:
  - name: k
    cluster:
      server: {server}
      certificate-authority-data: {ca}
contexts:
  - name: c
    context: {{cluster: k, user: u}}
users:
  - name: u
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1
        command: /bin/sh
        args: ["{script}"]
        interactiveMode: {interactive_mode}
        provideClusterInfo: true
"#,
            server = server.url(),
            ca = b64(server.ca_pem().expect("TLS")),
            script = self.path("plugin.sh").display(),
        );
        let kubeconfig = Kubeconfig::from_yaml(&yaml).expect("kubeconfig");
        Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .expect("config")
            .with_rate_limit(-1.0, 0)
    }
}

fn certificate_status(cert: &(String, String), expires: Option<SystemTime>) -> serde_json::Value {
    let mut status = serde_json::json!({
        "clientCertificateData": cert.0,
        "clientKeyData": cert.1,
    });
    if let Some(at) = expires {
        let at = k8s_openapi::jiff::Timestamp::try_from(at).expect("timestamp");
        status["expirationTimestamp"] = at.to_string().into();
    }
    status
}

/// Who the server says `client` is (a SelfSubjectReview): user name and groups.
async fn whoami(client: &Client) -> Result<(String, Vec<String>), kubegen::client::Error> {
    let review = ResourceClient::<SelfSubjectReview>::cluster(client.clone())
        .create(&Default::default(), &SelfSubjectReview::default())
        .await?;
    let user = review
        .status
        .and_then(|s| s.user_info)
        .expect("a review answers who");
    Ok((
        user.username.unwrap_or_default(),
        user.groups.unwrap_or_default(),
    ))
}

// exec_test.go TestRefreshCreds ("certificate", v1) and TestTLSCredentials: the plugin's
// certificate is the connection's client certificate; provideClusterInfo's spec.cluster.
#[tokio::test]
async fn a_certificate_from_the_plugin_authenticates_as_its_common_name() {
    let ca = Ca::new();
    let server = server(&ca, false).await;
    let plugin = Plugin::new();
    plugin.answer(None, certificate_status(&ca.client("carol", "devs"), None));
    let client = Client::try_from_config(plugin.config(&server, "Never").await).expect("client");

    let (user, groups) = whoami(&client).await.expect("authenticated");
    assert_eq!(user, "carol");
    assert!(groups.contains(&"devs".to_owned()), "{groups:?}");
    whoami(&client).await.expect("again");
    assert_eq!(plugin.calls(), 1, "a credential without expiry is cached");

    let info = plugin.info();
    assert_eq!(info["kind"], "ExecCredential");
    assert_eq!(info["apiVersion"], "client.authentication.k8s.io/v1");
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(info["spec"]["cluster"]["server"], server.url());
    assert!(
        info["spec"]["cluster"]["certificate-authority-data"].is_string(),
        "{info}"
    );
}

// exec_test.go TestTLSCredentials (rotation on expiry) and connrotation: when the
// credential expires the plugin runs again, the next connection presents the new
// certificate, and connections made with the old one are closed (an open watch ends).
#[tokio::test]
async fn an_expired_certificate_is_replaced_and_old_connections_closed() {
    let ca = Ca::new();
    let server = server(&ca, false).await;
    let plugin = Plugin::new();
    let soon = SystemTime::now() + Duration::from_secs(2);
    plugin.answer(
        Some(1),
        certificate_status(&ca.client("carol", "devs"), Some(soon)),
    );
    plugin.answer(None, certificate_status(&ca.client("dave", "ops"), None));
    let client = Client::try_from_config(plugin.config(&server, "Never").await).expect("client");

    assert_eq!(whoami(&client).await.expect("first").0, "carol");
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let mut watch = configmaps
        .watch(&WatchParams::default().timeout(290), "0")
        .await
        .expect("watch");
    assert_eq!(plugin.calls(), 1);

    tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_millis(2500)).await;
    assert_eq!(
        whoami(&client).await.expect("after expiry").0,
        "dave",
        "the new connection presents the new certificate"
    );
    assert_eq!(plugin.calls(), 2, "the plugin ran again once");

    // the watch's connection held carol's certificate: it is closed
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match watch.next().await {
                None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the old connection's watch ended");
    assert_eq!(whoami(&client).await.expect("still").0, "dave");
    assert_eq!(plugin.calls(), 2);
}

// exec_test.go TestRoundTripper: a 401 runs the plugin again (here the first answer is a
// token the server does not know, the second a certificate), and the request is retried.
#[tokio::test]
async fn a_401_runs_the_plugin_again() {
    let ca = Ca::new();
    let server = server(&ca, false).await;
    let plugin = Plugin::new();
    plugin.answer(Some(1), serde_json::json!({"token": "not-a-known-token"}));
    plugin.answer(None, certificate_status(&ca.client("carol", "devs"), None));
    let client = Client::try_from_config(plugin.config(&server, "Never").await).expect("client");
    assert_eq!(whoami(&client).await.expect("retried").0, "carol");
    assert_eq!(plugin.calls(), 2);
}

// exec_test.go TestRefreshCreds: a status with a certificate but no key (or the other way
// round) is refused, and so is a key that is not the certificate's.
#[tokio::test]
async fn half_a_certificate_is_refused() {
    let ca = Ca::new();
    let server = server(&ca, false).await;
    let plugin = Plugin::new();
    let (cert, key) = ca.client("carol", "devs");
    let (_, other_key) = ca.client("dave", "ops");
    plugin.answer(Some(1), serde_json::json!({"clientCertificateData": cert}));
    plugin.answer(Some(2), serde_json::json!({"clientKeyData": key}));
    plugin.answer(
        None,
        serde_json::json!({"clientCertificateData": cert, "clientKeyData": other_key}),
    );
    let client = Client::try_from_config(plugin.config(&server, "Never").await).expect("client");
    for want in [
        "only certificate or key",
        "only certificate or key",
        "does not match",
    ] {
        let err = whoami(&client).await.expect_err("refused").to_string();
        assert!(err.contains(want), "{err}");
        assert!(!err.contains("PRIVATE KEY"), "no key material in {err}");
    }
}

/// Runs a plugin in `mode` and returns the error, or `spec.interactive` it was told.
async fn run_in_mode(mode: &str) -> (Result<bool, String>, usize) {
    let ca = Ca::new();
    let server = server(&ca, false).await;
    let plugin = Plugin::new();
    plugin.answer(None, certificate_status(&ca.client("carol", "devs"), None));
    let client = Client::try_from_config(plugin.config(&server, mode).await).expect("client");
    let outcome = match whoami(&client).await {
        Ok(_) => Ok(plugin.info()["spec"]["interactive"]
            .as_bool()
            .expect("spec.interactive")),
        Err(e) => Err(e.to_string()),
    };
    (outcome, plugin.calls())
}

// exec_test.go TestRefreshCreds' interactive cases (`interactiveMode` Never, IfAvailable,
// Always, with standard input a terminal or not): what the plugin is told, or client-go's
// error before the plugin runs.
#[tokio::test]
async fn interactive_mode_decides_spec_interactive() {
    let terminal = std::io::stdin().is_terminal();
    assert_eq!(run_in_mode("Never").await, (Ok(false), 1));
    assert_eq!(run_in_mode("IfAvailable").await, (Ok(terminal), 1));
    if terminal {
        // a terminal: the plugin would wait on it; the unit tests cover this case
        return;
    }
    let (outcome, calls) = run_in_mode("Always").await;
    let err = outcome.expect_err("Always without a terminal");
    assert!(
        err.contains(
            "exec plugin cannot support interactive mode: standard input is not a terminal"
        ),
        "{err}"
    );
    assert_eq!(calls, 0, "the plugin does not run");
}
