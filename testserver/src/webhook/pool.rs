//! Connections kept open to webhooks between calls, as kube-apiserver keeps them: its
//! `webhook.ClientManager` caches one rest client per `clientConfig`, and that client's
//! transport keeps idle keep-alive connections (at most
//! `k8s.io/apimachinery/pkg/util/net.DefaultMaxIdleConnsPerHost`, 25, per host). A call
//! takes an idle connection to the same address verified against the same bundle, or
//! dials one; the TLS configuration (the parsed `caBundle`) is built once per bundle.

use std::{collections::HashMap, sync::Arc};

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use parking_lot::Mutex;
use rustls::pki_types::{CertificateDer, pem::PemObject};

/// Idle connections kept per [`Key`] (Go's `MaxIdleConnsPerHost` as client-go sets it).
const MAX_IDLE_PER_KEY: usize = 25;

/// A sender on one open HTTP/1.1 connection.
pub(crate) type Sender = SendRequest<Full<Bytes>>;

/// What a connection may be reused for: the same address, server name and bundle.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    /// `host:port` dialled.
    pub(crate) target: String,
    /// The name the certificate is verified for.
    pub(crate) server_name: String,
    /// The PEM bundle it must chain to (empty: the system roots).
    pub(crate) ca_bundle: Vec<u8>,
}

#[derive(Default)]
struct Entry {
    tls: Option<Arc<rustls::ClientConfig>>,
    idle: Vec<Sender>,
}

/// The kept connections and TLS configurations, by [`Key`].
#[derive(Default)]
pub(crate) struct Pool(Mutex<HashMap<Key, Entry>>);

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let map = self.0.lock();
        f.debug_struct("Pool")
            .field("keys", &map.len())
            .field("idle", &map.values().map(|e| e.idle.len()).sum::<usize>())
            .finish()
    }
}

impl Pool {
    /// An idle open connection for `key`, if one is kept.
    pub(crate) fn take(&self, key: &Key) -> Option<Sender> {
        let mut map = self.0.lock();
        let entry = map.get_mut(key)?;
        while let Some(sender) = entry.idle.pop() {
            if !sender.is_closed() {
                return Some(sender);
            }
        }
        None
    }

    /// Keeps `sender` for the next call to `key` (dropped, closing its connection, when
    /// the connection is closed or enough are kept).
    pub(crate) fn put(&self, key: &Key, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut map = self.0.lock();
        let entry = map.entry(key.clone()).or_default();
        if entry.idle.len() < MAX_IDLE_PER_KEY {
            entry.idle.push(sender);
        }
    }

    /// The TLS configuration verifying against `key`'s bundle (the system roots when it
    /// is empty), built on first use.
    pub(crate) fn tls(&self, key: &Key) -> Result<Arc<rustls::ClientConfig>, String> {
        if let Some(tls) = self.0.lock().get(key).and_then(|e| e.tls.clone()) {
            return Ok(tls);
        }
        let tls = Arc::new(tls_config(&key.ca_bundle)?);
        self.0.lock().entry(key.clone()).or_default().tls = Some(tls.clone());
        Ok(tls)
    }
}

fn tls_config(ca_bundle: &[u8]) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    if ca_bundle.is_empty() {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    } else {
        for cert in CertificateDer::pem_slice_iter(ca_bundle) {
            let cert = cert.map_err(|err| format!("invalid caBundle: {err}"))?;
            roots
                .add(cert)
                .map_err(|err| format!("invalid caBundle: {err}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| err.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tls)
}
