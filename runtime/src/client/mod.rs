//! The REST client (client-go's `rest`, typed and dynamic clients, `discovery`, `util/retry`).
//!
//! The wire is abstracted by [`Transport`]: an `http::Request<Vec<u8>>` goes in, an
//! `http::Response<Body>` with a streaming body comes out. [`HttpTransport`] (hyper over
//! rustls) talks to a real API server; the test server's in-process transport stands in for
//! fake clientsets. [`Client`] adds credentials, throttling and retries on top of any transport;
//! [`ResourceClient`] and [`DynamicClient`] build requests with kube-core's `Request` and
//! decode answers into kube-core's `ObjectList`, `WatchEvent` and `Status`.

mod auth;
mod cbor;
mod cbor_compat;
#[allow(clippy::module_inception)]
mod client;
mod config;
mod content;
mod decode;
mod discovery;
mod dynamic;
mod error;
mod exec_cert;
mod extension;
mod http_transport;
pub mod kubeconfig;
mod read;
mod resource;
mod retry;
pub(crate) mod strip;
mod throttle;
mod transport;
pub(crate) mod verbs;

pub use auth::{AuthError, Authenticator, Credentials, EXEC_API_VERSION, ExecCluster, ExecPlugin};
pub use cbor::{CBOR_MEDIA_TYPE, CBOR_SEQ_MEDIA_TYPE, CborError, CborSeqDecoder};
pub use client::{Client, ClientBuilder, DEFAULT_RETRY_AFTER, MAX_RETRY_AFTER};
pub use config::{
    Config, ConfigError, DEFAULT_MAX_RETRIES, SERVICE_ACCOUNT_DIR, TlsConfig, pem_certs,
};
pub use content::ContentType;
pub use decode::{LineDecoder, decode_lines};
pub use discovery::Discovery;
pub use dynamic::DynamicClient;
pub use error::{Error, reason};
pub use exec_cert::{ExecCertError, ExecClientCert};
pub use http_transport::{HttpTransport, RequestTimeout, rustls_config};
/// kube-core's request parameters and list / watch types, as the client's methods take them.
pub use kube_core::{ObjectList, WatchEvent, params};
/// The kubeconfig and the choice of context, for building a [`Config`] from a kubeconfig
/// ([`Config::from_custom_kubeconfig`]).
pub use kubeconfig::{KubeConfigOptions, Kubeconfig, KubeconfigError};
pub use read::ReadClient;
pub use resource::{ResourceClient, WatchStream};
pub use retry::{Backoff, DEFAULT_BACKOFF, DEFAULT_RETRY, on_error, retry_on_conflict};
pub use strip::{LAST_APPLIED_ANNOTATION, Strip};
pub use throttle::{DEFAULT_BURST, DEFAULT_QPS, TokenBucket};
pub use transport::{Body, BoxFuture, Transport, TransportError};
pub use verbs::{DEFAULT_PAGE_SIZE, DeleteResponse, LIST_ALL_RESTARTS};
