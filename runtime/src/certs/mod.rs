//! Serving certificates for kubegen's HTTPS servers — the webhook server
//! (`webhook::Server`, feature `webhook`) and the manager's
//! secure `/metrics` (feature `secure-metrics`): where they come from and how a server
//! presents the current one. Compiled with either feature.
//!
//! * `resolver.rs`: [`CertResolver`], the rustls `ResolvesServerCert` whose certificate
//!   and CA bundle swap atomically, so rotation needs no restart.
//! * `self_signed.rs`: [`SelfSignedConfig`] and [`SelfSigned`]: a CA and a serving
//!   certificate generated with rcgen at start, each re-issued at two thirds of its lifetime.
//! * `dir.rs`: [`CertDir`]: `tls.crt`, `tls.key` and `ca.crt` read from a directory (a
//!   mounted cert-manager secret), re-read when they change (controller-runtime's
//!   certwatcher).

mod dir;
mod resolver;
mod self_signed;

use std::path::PathBuf;

pub use dir::{CertDir, DEFAULT_POLL_INTERVAL};
pub use resolver::CertResolver;
pub use self_signed::{SelfSigned, SelfSignedConfig};

/// A certificate could not be made, read or used.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// rcgen could not generate a key or certificate.
    #[error("generating a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// PEM that holds no certificate or key, or one that does not parse.
    #[error("parsing {what}: {message}")]
    Pem {
        /// What was parsed (`certificate chain`, `private key`).
        what: &'static str,
        /// Why.
        message: String,
    },
    /// rustls refused the key.
    #[error("the private key is not usable: {0}")]
    Key(#[source] rustls::Error),
}

/// Where a server (the webhook server, the manager's secure metrics) gets its certificate.
#[derive(Debug, Clone)]
pub enum CertificateSource {
    /// Generated at start and rotated before expiry.
    SelfSigned(SelfSignedConfig),
    /// Read from a directory in cert-manager's secret layout and re-read on change.
    Directory(CertDir),
}
