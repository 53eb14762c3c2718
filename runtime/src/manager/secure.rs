//! [`SecureServing`]: the manager's `/metrics` over HTTPS, behind the
//! [`MetricsAuth`](super::MetricsAuth) filter (controller-runtime's
//! `metricsserver.Options{SecureServing: true, FilterProvider:
//! filters.WithAuthenticationAndAuthorization}`, which kubebuilder's scaffold turns on,
//! serving on `:8443`). Its certificate is self-signed (generated at start and rotated) or
//! read from a directory (cert-manager's `tls.crt` / `tls.key`, re-read on change), as the
//! webhook server's is.

use std::{net::SocketAddr, path::PathBuf, sync::Arc};

use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::certs::{
    CertDir, CertError, CertResolver, CertificateSource, SelfSigned, SelfSignedConfig,
};

/// kubebuilder's secure metrics port (`--metrics-bind-address=:8443`).
pub const DEFAULT_SECURE_METRICS_PORT: u16 = 8443;

/// The default secure metrics address, `0.0.0.0:8443`.
pub fn default_secure_metrics_address() -> SocketAddr {
    SocketAddr::from(([0, 0, 0, 0], DEFAULT_SECURE_METRICS_PORT))
}

/// How the manager serves `/metrics` securely (see
/// [`ManagerBuilder::metrics_secure`](super::ManagerBuilder::metrics_secure)).
///
/// ```
/// use kubegen::manager::SecureServing;
///
/// // kubebuilder's default: a self-signed certificate, TokenReview + SubjectAccessReview.
/// let default = SecureServing::default();
/// assert!(default.authentication_and_authorization);
/// // cert-manager's certificate, mounted at /tmp/k8s-metrics-server/metrics-certs.
/// let mounted = SecureServing::cert_dir("/tmp/k8s-metrics-server/metrics-certs");
/// # let _ = (default, mounted);
/// ```
#[derive(Debug, Clone)]
pub struct SecureServing {
    /// Where the serving certificate comes from (default: self-signed for `localhost`,
    /// `127.0.0.1` and `::1`; add the metrics Service's names with
    /// [`SelfSignedConfig::for_service`] when scrapers verify it).
    pub certificates: CertificateSource,
    /// Authenticate every request by TokenReview and authorize it by SubjectAccessReview
    /// (default on): 401 without an accepted bearer token, 403 without `get` on the path.
    /// Off, anyone reaching the port reads the metrics (TLS only).
    pub authentication_and_authorization: bool,
}

impl Default for SecureServing {
    /// A self-signed certificate, the filter on.
    fn default() -> Self {
        Self {
            certificates: CertificateSource::SelfSigned(SelfSignedConfig::default()),
            authentication_and_authorization: true,
        }
    }
}

impl SecureServing {
    /// A certificate generated with `config`, the filter on.
    pub fn self_signed(config: SelfSignedConfig) -> Self {
        Self {
            certificates: CertificateSource::SelfSigned(config),
            ..Self::default()
        }
    }

    /// The certificate of `dir` (`tls.crt`, `tls.key`, optional `ca.crt`; controller-runtime's
    /// `CertDir` with its default names), re-read when it changes, the filter on.
    pub fn cert_dir(dir: impl Into<PathBuf>) -> Self {
        Self {
            certificates: CertificateSource::Directory(CertDir::new(dir)),
            ..Self::default()
        }
    }

    /// Turns the authentication and authorization filter on or off.
    #[must_use]
    pub fn with_authentication_and_authorization(mut self, on: bool) -> Self {
        self.authentication_and_authorization = on;
        self
    }
}

/// What keeps the certificate fresh while the server runs.
#[derive(Debug)]
enum Maintenance {
    SelfSigned(Box<SelfSigned>),
    Directory(CertDir),
}

/// The loaded certificate of a secure metrics server and what keeps it fresh.
#[derive(Debug)]
pub(crate) struct SecureCerts {
    resolver: CertResolver,
    maintenance: Maintenance,
}

impl SecureCerts {
    /// Generates or loads the certificate (at build time, so the CA bundle is known before
    /// the manager runs).
    pub(crate) fn load(source: CertificateSource) -> Result<Self, CertError> {
        let resolver = CertResolver::new();
        let maintenance = match source {
            CertificateSource::SelfSigned(config) => {
                let mut certs = SelfSigned::new(config)?;
                certs.issue(&resolver)?;
                Maintenance::SelfSigned(Box::new(certs))
            }
            CertificateSource::Directory(dir) => {
                dir.load(&resolver)?;
                Maintenance::Directory(dir)
            }
        };
        Ok(Self {
            resolver,
            maintenance,
        })
    }

    /// The CA bundle (PEM) that verifies the certificate served now.
    pub(crate) fn ca_bundle(&self) -> Vec<u8> {
        self.resolver.ca_bundle()
    }

    /// The TLS acceptor presenting the current certificate (HTTP/1.1 by ALPN), and starts
    /// keeping the certificate fresh until `stop`.
    pub(crate) fn start(self, stop: CancellationToken) -> Result<TlsAcceptor, rustls::Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(self.resolver.clone()));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let resolver = self.resolver;
        match self.maintenance {
            Maintenance::SelfSigned(certs) => {
                tokio::spawn((*certs).run(resolver, stop));
            }
            Maintenance::Directory(dir) => {
                tokio::spawn(dir.watch(resolver, stop));
            }
        }
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}
