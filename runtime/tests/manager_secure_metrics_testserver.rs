//! The manager's secure metrics against the test server with RBAC on: `/metrics` over
//! real TLS (the scraper trusts the manager's self-signed CA), authenticated by
//! TokenReview and authorized by SubjectAccessReview as controller-runtime's
//! `pkg/metrics/filters/filters.go` (`WithAuthenticationAndAuthorization`) does; ported
//! from the cases of `pkg/metrics/server/server_test.go` and `filters_test.go`: no token
//! 401, a token without `get` on `/metrics` 403, a bound one 200.

use std::sync::Arc;

use kubegen::manager::{Manager, ManagerError, SecureServing};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// kubebuilder's `config/rbac/metrics_auth_role.yaml`: what the manager needs to review
/// its scrapers.
const METRICS_AUTH_ROLE: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: metrics-auth-role
rules:
- apiGroups: [authentication.k8s.io]
  resources: [tokenreviews]
  verbs: [create]
- apiGroups: [authorization.k8s.io]
  resources: [subjectaccessreviews]
  verbs: [create]
"#;

/// kubebuilder's `config/rbac/metrics_reader_role.yaml`: what a scraper needs.
const METRICS_READER_ROLE: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: metrics-reader
rules:
- nonResourceURLs: [/metrics]
  verbs: [get]
"#;

/// An HTTPS GET of `path` on `addr` trusting only `ca_pem`, with an optional bearer token.
async fn https_get(
    addr: std::net::SocketAddr,
    ca_pem: &[u8],
    path: &str,
    token: Option<&str>,
) -> (u16, String) {
    let mut roots = rustls::RootCertStore::empty();
    for der in kubegen::client::pem_certs(ca_pem).expect("the CA bundle parses") {
        roots
            .add(CertificateDer::from(der))
            .expect("a usable CA certificate");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let name = ServerName::try_from("localhost").expect("a server name");
    let mut tls = connector
        .connect(name, tcp)
        .await
        .expect("the handshake verifies the manager's certificate");
    let authorization = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n{authorization}Connection: close\r\n\r\n"
    );
    tls.write_all(request.as_bytes()).await.expect("send");
    let mut response = Vec::new();
    // A server closing without close_notify is an error rustls reports at the end.
    let _ = tls.read_to_end(&mut response).await;
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("status line");
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secure_metrics_need_a_token_and_the_metrics_reader_role() {
    let server = kubegen_testserver::TestServer::builder()
        .cluster(kubegen_testserver::ClusterConfig::none())
        .rbac()
        .start()
        .await
        .expect("test server");
    // The manager runs as its ServiceAccount with kubebuilder's metrics-auth-role only.
    let client = server
        .client_with_role("default", "controller-manager", METRICS_AUTH_ROLE)
        .await
        .expect("manager client");
    // A scraper bound to metrics-reader, and one bound to nothing.
    server
        .client_with_role("default", "prometheus", METRICS_READER_ROLE)
        .await
        .expect("scraper binding");
    let reader = server
        .service_account_token("default", "prometheus", &[])
        .await
        .expect("reader token");
    let stranger = server
        .service_account_token("default", "stranger", &[])
        .await
        .expect("stranger token");

    let manager = Manager::builder(client)
        .probe_address(([127, 0, 0, 1], 0).into())
        .metrics_address(([127, 0, 0, 1], 0).into())
        .metrics_secure(SecureServing::default())
        .build()
        .expect("manager");
    let addr = manager.metrics_addr().expect("metrics address");
    let ca = manager.metrics_ca_bundle().expect("a CA bundle");
    let stop = CancellationToken::new();
    let run = tokio::spawn(manager.run(stop.clone()));

    let (status, body) = https_get(addr, &ca, "/metrics", None).await;
    assert_eq!(status, 401, "no token: {body}");
    let (status, body) = https_get(addr, &ca, "/metrics", Some("not-a-token")).await;
    assert_eq!(status, 401, "a token the API server refuses: {body}");
    let (status, body) = https_get(addr, &ca, "/metrics", Some(&stranger)).await;
    assert_eq!(status, 403, "no metrics-reader: {body}");
    assert!(
        body.contains("Authorization denied for user system:serviceaccount:default:stranger"),
        "{body}"
    );
    let (status, body) = https_get(addr, &ca, "/metrics", Some(&reader)).await;
    assert_eq!(status, 200, "metrics-reader: {body}");
    // The filter's own reviews went through the manager's client, and were counted.
    let host = server.addr().to_string();
    for series in [
        format!(r#"rest_client_requests_total{{code="201",method="POST",host="{host}"}}"#),
        format!(r#"rest_client_request_duration_seconds_count{{verb="POST",host="{host}"}}"#),
    ] {
        assert!(body.contains(&series), "missing {series}:\n{body}");
    }
    // The cached decision answers again without a review; the stranger stays denied.
    assert_eq!(https_get(addr, &ca, "/metrics", Some(&reader)).await.0, 200);
    assert_eq!(
        https_get(addr, &ca, "/metrics", Some(&stranger)).await.0,
        403
    );
    stop.cancel();
    run.await.expect("joined").expect("clean shutdown");
}

/// Without the filter the endpoint is TLS only; on the probes' address it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filter_can_be_turned_off_and_the_probe_address_is_refused() {
    let server = kubegen_testserver::TestServer::builder()
        .cluster(kubegen_testserver::ClusterConfig::none())
        .start()
        .await
        .expect("test server");
    let client = server.client().expect("client");
    let manager = Manager::builder(client.clone())
        .metrics_address(([127, 0, 0, 1], 0).into())
        .metrics_secure(SecureServing::default().with_authentication_and_authorization(false))
        .build()
        .expect("manager");
    let addr = manager.metrics_addr().expect("metrics address");
    let ca = manager.metrics_ca_bundle().expect("a CA bundle");
    let stop = CancellationToken::new();
    let run = tokio::spawn(manager.run(stop.clone()));
    let (status, body) = https_get(addr, &ca, "/metrics", None).await;
    assert_eq!(status, 200, "{body}");
    stop.cancel();
    run.await.expect("joined").expect("clean shutdown");

    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let shared = probe.local_addr().expect("address");
    drop(probe);
    let refused = Manager::builder(client)
        .probe_address(shared)
        .metrics_address(shared)
        .metrics_secure(SecureServing::default())
        .build();
    assert!(
        matches!(refused, Err(ManagerError::SecureMetricsOnProbeAddress(a)) if a == shared),
        "{refused:?}"
    );
}
