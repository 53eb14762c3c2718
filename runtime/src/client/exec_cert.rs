//! [`ExecClientCert`]: the TLS client certificate an exec credential plugin returned
//! (`ExecCredential.status.clientCertificateData` / `clientKeyData`), shared between the
//! [`Authenticator`](super::Authenticator) that runs the plugin and the
//! [`HttpTransport`](super::HttpTransport) that presents the certificate in its handshakes.
//!
//! client-go's exec authenticator hands its certificate to the TLS stack through
//! `tls.Config.GetClientCertificate` and, when the plugin returns a different certificate,
//! closes every connection its dialer made (`connrotation`), so the next request
//! handshakes with the new one. Here the slot is a rustls [`ResolvesClientCert`]; each
//! replacement bumps a generation (the transport then starts a new connection pool) and
//! cancels the previous generation's token, which closes the connections still open with
//! the old certificate (a watch among them ends and is restarted by its reflector).

use std::{fmt, sync::Arc};

use parking_lot::RwLock;
use rustls::{
    SignatureScheme,
    client::ResolvesClientCert,
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    sign::CertifiedKey,
};
use tokio_util::sync::CancellationToken;

/// Why a plugin's certificate cannot be used (never includes the key material).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecCertError {
    /// `clientCertificateData` holds no PEM certificate.
    #[error("clientCertificateData is not a PEM certificate")]
    Certificate,
    /// `clientKeyData` holds no PEM private key the TLS stack supports.
    #[error("clientKeyData is not a supported PEM private key")]
    Key,
    /// The key is not the certificate's.
    #[error("clientKeyData does not match clientCertificateData")]
    Mismatch,
}

/// The exec plugin's current client certificate, shared by one client's authenticator
/// and transport; cheap to clone (clones share the slot).
#[derive(Clone)]
pub struct ExecClientCert {
    inner: Arc<RwLock<Slot>>,
    provider: Arc<CryptoProvider>,
}

struct Slot {
    key: Option<Arc<CertifiedKey>>,
    /// Bumped whenever the certificate changes.
    generation: u64,
    /// Cancelled when the certificate changes: connections made before then close.
    connections: CancellationToken,
}

impl fmt::Debug for ExecClientCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slot = self.inner.read();
        f.debug_struct("ExecClientCert")
            .field("present", &slot.key.is_some())
            .field("generation", &slot.generation)
            .finish()
    }
}

impl Default for ExecClientCert {
    fn default() -> Self {
        Self::new()
    }
}

impl ExecClientCert {
    /// An empty slot: no certificate until a plugin returns one.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(RwLock::new(Slot {
                key: None,
                generation: 0,
                connections: CancellationToken::new(),
            })),
            provider: Arc::new(rustls::crypto::ring::default_provider()),
        }
    }

    /// Installs the certificate chain and key a plugin returned (PEM). Returns whether it
    /// differs from the current one; when it does, the generation moves on and the
    /// connections made with the old certificate are closed.
    pub fn set(&self, cert_pem: &[u8], key_pem: &[u8]) -> Result<bool, ExecCertError> {
        let chain = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| ExecCertError::Certificate)?;
        if chain.is_empty() {
            return Err(ExecCertError::Certificate);
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|_| ExecCertError::Key)?;
        let signing = self
            .provider
            .key_provider
            .load_private_key(key)
            .map_err(|_| ExecCertError::Key)?;
        let certified = CertifiedKey::new(chain, signing);
        match certified.keys_match() {
            Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
            Err(_) => return Err(ExecCertError::Mismatch),
        }
        let mut slot = self.inner.write();
        if slot.key.as_ref().is_some_and(|k| k.cert == certified.cert) {
            return Ok(false);
        }
        let rotated = slot.key.is_some();
        slot.key = Some(Arc::new(certified));
        slot.generation += 1;
        if rotated {
            tracing::debug!(
                generation = slot.generation,
                "exec plugin returned a new client certificate: closing connections"
            );
            slot.connections.cancel();
            slot.connections = CancellationToken::new();
        }
        Ok(true)
    }

    /// Whether a certificate has been installed.
    pub fn is_set(&self) -> bool {
        self.inner.read().key.is_some()
    }

    /// How many times the certificate has changed.
    pub fn generation(&self) -> u64 {
        self.inner.read().generation
    }

    /// Cancelled when the current certificate is replaced: a connection made now holds it
    /// and closes then.
    pub(crate) fn connections(&self) -> CancellationToken {
        self.inner.read().connections.clone()
    }
}

impl ResolvesClientCert for ExecClientCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        let key = self.inner.read().key.clone()?;
        // rustls sends no certificate when the key cannot sign with a scheme the server
        // accepts; say why, since the server will then see an anonymous client
        if key.key.choose_scheme(sigschemes).is_none() {
            tracing::warn!("exec plugin's client key cannot sign with a scheme the server offers");
            return None;
        }
        Some(key)
    }

    fn has_certs(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(cn: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        let cert = params.self_signed(&key).expect("cert");
        (cert.pem(), key.serialize_pem())
    }

    #[test]
    fn a_new_certificate_moves_the_generation_and_closes_old_connections() {
        let slot = ExecClientCert::new();
        assert!(!slot.is_set());
        let (cert, key) = pair("carol");
        let first = slot.connections();
        assert_eq!(slot.set(cert.as_bytes(), key.as_bytes()), Ok(true));
        assert_eq!(slot.generation(), 1);
        assert!(!first.is_cancelled(), "the first certificate replaces none");
        assert_eq!(slot.set(cert.as_bytes(), key.as_bytes()), Ok(false));
        assert_eq!(
            slot.generation(),
            1,
            "the same certificate again changes nothing"
        );
        let held = slot.connections();
        let (cert2, key2) = pair("dave");
        assert_eq!(slot.set(cert2.as_bytes(), key2.as_bytes()), Ok(true));
        assert_eq!(slot.generation(), 2);
        assert!(held.is_cancelled());
        assert!(!slot.connections().is_cancelled());
    }

    #[test]
    fn bad_material_is_refused_without_echoing_it() {
        let slot = ExecClientCert::new();
        let (cert, key) = pair("carol");
        let (_, other_key) = pair("dave");
        assert_eq!(
            slot.set(b"not pem", key.as_bytes()),
            Err(ExecCertError::Certificate)
        );
        assert_eq!(slot.set(cert.as_bytes(), b"nope"), Err(ExecCertError::Key));
        assert_eq!(
            slot.set(cert.as_bytes(), other_key.as_bytes()),
            Err(ExecCertError::Mismatch)
        );
        assert!(!slot.is_set());
    }
}
