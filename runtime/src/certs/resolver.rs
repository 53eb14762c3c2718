//! [`CertResolver`]: the certificate the server presents, swapped atomically.

use std::sync::Arc;

use parking_lot::RwLock;
use rustls::{
    crypto::ring::sign::any_supported_type,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};
use tokio::sync::watch;

use super::CertError;

/// The serving certificate and the CA bundle that verifies it, each replaced as a whole:
/// a TLS handshake sees the old or the new certificate, never a mix. Cheap to clone.
#[derive(Clone)]
pub struct CertResolver {
    current: Arc<RwLock<Option<Arc<CertifiedKey>>>>,
    ca_bundle: Arc<watch::Sender<Vec<u8>>>,
}

impl std::fmt::Debug for CertResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertResolver")
            .field("loaded", &self.current.read().is_some())
            .finish_non_exhaustive()
    }
}

impl Default for CertResolver {
    fn default() -> Self {
        Self::new()
    }
}

impl CertResolver {
    /// A resolver with nothing loaded yet (handshakes fail until [`set`](Self::set)).
    pub fn new() -> Self {
        Self {
            current: Arc::new(RwLock::new(None)),
            ca_bundle: Arc::new(watch::Sender::new(Vec::new())),
        }
    }

    /// Presents `chain_pem` (leaf first) with `key_pem` from now on; `ca_bundle_pem` is the
    /// bundle that verifies it (empty if unknown). On an error the current certificate
    /// stays.
    pub fn set(
        &self,
        chain_pem: &[u8],
        key_pem: &[u8],
        ca_bundle_pem: &[u8],
    ) -> Result<(), CertError> {
        let certified = certified_key(chain_pem, key_pem)?;
        *self.current.write() = Some(Arc::new(certified));
        self.ca_bundle.send_if_modified(|bundle| {
            let changed = bundle.as_slice() != ca_bundle_pem;
            if changed {
                *bundle = ca_bundle_pem.to_vec();
            }
            changed
        });
        Ok(())
    }

    /// The leaf certificate presented now (DER).
    pub fn certificate(&self) -> Option<CertificateDer<'static>> {
        self.current
            .read()
            .as_ref()
            .and_then(|c| c.cert.first().cloned())
    }

    /// The CA bundle (PEM) that verifies the certificate presented now.
    pub fn ca_bundle(&self) -> Vec<u8> {
        self.ca_bundle.borrow().clone()
    }

    /// The CA bundle, notified each time it changes (for the webhook `CaInjector::run`).
    pub fn subscribe_ca_bundle(&self) -> watch::Receiver<Vec<u8>> {
        self.ca_bundle.subscribe()
    }
}

impl ResolvesServerCert for CertResolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.read().clone()
    }
}

/// Parses a PEM chain and key into what rustls serves.
pub(crate) fn certified_key(chain_pem: &[u8], key_pem: &[u8]) -> Result<CertifiedKey, CertError> {
    let chain = CertificateDer::pem_slice_iter(chain_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CertError::Pem {
            what: "certificate chain",
            message: e.to_string(),
        })?;
    if chain.is_empty() {
        return Err(CertError::Pem {
            what: "certificate chain",
            message: "no certificate found".into(),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| CertError::Pem {
        what: "private key",
        message: e.to_string(),
    })?;
    let signing_key = any_supported_type(&key).map_err(CertError::Key)?;
    let certified = CertifiedKey::new(chain, signing_key);
    // A key from one rotation and a certificate from another (files caught mid-write) are
    // refused, so the current pair keeps serving.
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {
            Ok(certified)
        }
        Err(error) => Err(CertError::Key(error)),
    }
}
