//! TLS for the HTTP front: a fresh self-signed CA and a server certificate for
//! `localhost` and the listen address, generated at start. The CA goes into the written
//! kubeconfig as `certificate-authority-data`. With a client CA (`--client-ca-file`) the
//! server asks for a client certificate and verifies one that is presented.

use std::{net::IpAddr, sync::Arc};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Errors creating the certificates or the TLS configuration.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Certificate generation failed.
    #[error("generating certificates: {0}")]
    Cert(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("configuring TLS: {0}")]
    Rustls(#[from] rustls::Error),
}

/// Generated TLS material.
pub struct TlsMaterial {
    /// The CA certificate (PEM) clients must trust.
    pub ca_pem: String,
    /// The acceptor wrapping accepted TCP streams.
    pub acceptor: tokio_rustls::TlsAcceptor,
}

impl std::fmt::Debug for TlsMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsMaterial").finish_non_exhaustive()
    }
}

/// Creates a CA and a server certificate valid for `localhost` and `ip`; the server
/// verifies client certificates with `client_verifier` when given (`--client-ca-file`),
/// and asks for none without one.
pub fn generate(
    ip: IpAddr,
    client_verifier: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
) -> Result<TlsMaterial, TlsError> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kubegen-testserver-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate()?;
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kubegen-testserver");
    params.subject_alt_names.push(SanType::IpAddress(ip));
    if !ip.is_loopback() {
        params
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::from([127, 0, 0, 1])));
    }
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?;
    let builder = match client_verifier {
        Some(verifier) => builder.with_client_cert_verifier(verifier),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(
        vec![CertificateDer::from(cert.der().to_vec())],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    )?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsMaterial {
        ca_pem: ca_cert.pem(),
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
    })
}
