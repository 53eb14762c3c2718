//! [`CertDir`]: certificates read from a directory in cert-manager's secret layout and
//! re-read when the files change (controller-runtime's certwatcher).

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use tokio_util::sync::CancellationToken;

use super::{CertError, resolver::CertResolver};

/// How often [`CertDir::watch`] looks at the files (controller-runtime's certwatcher polls
/// every 10 s as a fallback to file events).
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(10);

/// A directory holding `tls.crt` (chain, leaf first), `tls.key` and optionally `ca.crt` (the
/// bundle to inject): a mounted `kubernetes.io/tls` secret as cert-manager writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertDir {
    /// The directory.
    pub path: PathBuf,
    /// The certificate chain's file name (`tls.crt`).
    pub cert_name: String,
    /// The key's file name (`tls.key`).
    pub key_name: String,
    /// The CA bundle's file name (`ca.crt`); a missing file is an empty bundle.
    pub ca_name: String,
    /// How often to look for changes.
    pub poll_interval: Duration,
}

/// The three files' contents.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Contents {
    cert: Vec<u8>,
    key: Vec<u8>,
    ca: Vec<u8>,
}

fn read(path: &Path) -> Result<Vec<u8>, CertError> {
    std::fs::read(path).map_err(|source| CertError::Read {
        path: path.to_owned(),
        source,
    })
}

impl CertDir {
    /// `path` with cert-manager's file names, polled every [`DEFAULT_POLL_INTERVAL`].
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            cert_name: "tls.crt".into(),
            key_name: "tls.key".into(),
            ca_name: "ca.crt".into(),
            poll_interval: DEFAULT_POLL_INTERVAL,
        }
    }

    /// Sets the poll interval.
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// The files (a few KiB: read directly, also from async code).
    fn contents(&self) -> Result<Contents, CertError> {
        let ca_path = self.path.join(&self.ca_name);
        let ca = match std::fs::read(&ca_path) {
            Ok(ca) => ca,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(CertError::Read {
                    path: ca_path,
                    source,
                });
            }
        };
        Ok(Contents {
            cert: read(&self.path.join(&self.cert_name))?,
            key: read(&self.path.join(&self.key_name))?,
            ca,
        })
    }

    /// Reads the files into `resolver` once.
    pub fn load(&self, resolver: &CertResolver) -> Result<(), CertError> {
        let contents = self.contents()?;
        resolver.set(&contents.cert, &contents.key, &contents.ca)
    }

    /// Re-reads the files every poll interval until `stop` fires; when their contents
    /// changed (a secret mount swaps them all at once; comparing contents, not only
    /// modification times, also catches two writes within one second), the new
    /// certificate is served from the next handshake. A read or parse error (a half-written
    /// pair) is logged and the current certificate kept.
    pub async fn watch(self, resolver: CertResolver, stop: CancellationToken) {
        let mut last = self.contents().ok();
        let mut ticker = tokio::time::interval(self.poll_interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                _ = ticker.tick() => {}
            }
            let contents = match self.contents() {
                Ok(contents) => contents,
                Err(error) => {
                    tracing::warn!(%error, dir = %self.path.display(), "reading the serving certificate failed");
                    continue;
                }
            };
            if last.as_ref() == Some(&contents) {
                continue;
            }
            match resolver.set(&contents.cert, &contents.key, &contents.ca) {
                Ok(()) => {
                    tracing::info!(dir = %self.path.display(), "reloaded the serving certificate");
                    last = Some(contents);
                }
                Err(error) => {
                    tracing::warn!(%error, dir = %self.path.display(), "the changed serving certificate does not load; keeping the current one");
                }
            }
        }
    }
}
