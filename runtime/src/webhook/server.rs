//! [`Server`]: the webhook HTTPS server (controller-runtime's `webhook.Server`): hyper (HTTP/1.1
//! and HTTP/2 by ALPN) on rustls, one route per path, `/healthz`, graceful shutdown.

use std::{
    collections::HashMap,
    convert::Infallible,
    net::SocketAddr,
    panic::AssertUnwindSafe,
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use kube_core::{
    Status,
    conversion::{ConversionResponse, ConversionReview},
};
use prometheus_client::registry::Registry;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use super::{
    certs::{CertDir, CertError, CertResolver, CertificateSource, SelfSigned, SelfSignedConfig},
    conversion::{Conversion, DynConvert, Hub},
    handler::{Admission, panic_message},
    metrics::WebhookMetrics,
    review::{self, ReviewError},
};

/// controller-runtime's default webhook port.
pub const DEFAULT_PORT: u16 = 9443;

/// The largest request body read (kube-apiserver's objects are at most 3 MiB; a review
/// carries two).
const MAX_BODY: usize = 16 << 20;

/// How long a client may take for its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The server could not be built or failed.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The address could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The certificate could not be generated or read.
    #[error("certificate: {0}")]
    Certificate(#[from] CertError),
    /// rustls refused the configuration.
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// Two handlers were registered on one path.
    #[error("a webhook is already registered on {0}")]
    DuplicatePath(String),
    /// A path that does not start with `/`, or that the server keeps for itself.
    #[error("invalid webhook path {0:?}")]
    InvalidPath(String),
}

#[derive(Clone)]
enum Route {
    Admission(Admission),
    Conversion(DynConvert),
}

/// Builds a [`Server`].
#[derive(Debug)]
pub struct ServerBuilder {
    addr: SocketAddr,
    routes: Vec<(String, RouteEntry)>,
    certs: CertificateSource,
    shutdown_timeout: Duration,
}

/// A route as the builder keeps it (with a name for `Debug`).
struct RouteEntry(Route);

impl std::fmt::Debug for RouteEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Route::Admission(admission) => admission.fmt(f),
            Route::Conversion(_) => f.write_str("Conversion"),
        }
    }
}

impl ServerBuilder {
    /// The address to listen on (default `0.0.0.0:9443`; port 0: any free port, see
    /// [`Server::local_addr`]).
    #[must_use]
    pub fn address(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    /// Serves an admission webhook on `path` (see [`validate_path`] and [`mutate_path`]
    /// for controller-runtime's names).
    ///
    /// [`validate_path`]: super::validate_path
    /// [`mutate_path`]: super::mutate_path
    #[must_use]
    pub fn admission(mut self, path: impl Into<String>, admission: Admission) -> Self {
        self.routes
            .push((path.into(), RouteEntry(Route::Admission(admission))));
        self
    }

    /// Serves a conversion webhook on `path` (conventionally [`CONVERT_PATH`]).
    ///
    /// [`CONVERT_PATH`]: super::CONVERT_PATH
    #[must_use]
    pub fn conversion<H: Hub>(
        mut self,
        path: impl Into<String>,
        conversion: Conversion<H>,
    ) -> Self {
        self.routes.push((
            path.into(),
            RouteEntry(Route::Conversion(Arc::new(conversion))),
        ));
        self
    }

    /// Where the certificate comes from (default: self-signed for `localhost`).
    #[must_use]
    pub fn certificates(mut self, source: CertificateSource) -> Self {
        self.certs = source;
        self
    }

    /// A self-signed CA and serving certificate, generated at build and rotated.
    #[must_use]
    pub fn self_signed(self, config: SelfSignedConfig) -> Self {
        self.certificates(CertificateSource::SelfSigned(config))
    }

    /// The certificate in `dir` (cert-manager's `tls.crt`, `tls.key`, `ca.crt`), re-read
    /// when it changes.
    #[must_use]
    pub fn cert_dir(self, dir: impl Into<PathBuf>) -> Self {
        self.certificates(CertificateSource::Directory(CertDir::new(dir)))
    }

    /// How long `run` lets requests in flight finish after its token fired (default 30 s).
    #[must_use]
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Binds the address and loads (or generates) the certificate, so the address and the
    /// CA bundle are known before [`Server::run`].
    pub fn build(self) -> Result<Server, ServerError> {
        let mut routes = HashMap::new();
        for (path, RouteEntry(route)) in self.routes {
            if !path.starts_with('/') || path == "/healthz" {
                return Err(ServerError::InvalidPath(path));
            }
            if routes.insert(path.clone(), route).is_some() {
                return Err(ServerError::DuplicatePath(path));
            }
        }
        let resolver = CertResolver::new();
        let maintenance = match self.certs {
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
        let addr = self.addr;
        let listener = std::net::TcpListener::bind(addr)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|source| ServerError::Bind { addr, source })?;
        Ok(Server {
            listener,
            routes: Arc::new(routes),
            resolver,
            maintenance,
            metrics: WebhookMetrics::new(),
            shutdown_timeout: self.shutdown_timeout,
            started: Arc::new(AtomicBool::new(false)),
        })
    }
}

/// What keeps the certificate fresh while the server runs.
#[derive(Debug)]
enum Maintenance {
    SelfSigned(Box<SelfSigned>),
    Directory(CertDir),
}

/// The webhook server, bound and with its certificate loaded; [`run`](Self::run) serves.
pub struct Server {
    listener: std::net::TcpListener,
    routes: Arc<HashMap<String, Route>>,
    resolver: CertResolver,
    maintenance: Maintenance,
    metrics: WebhookMetrics,
    shutdown_timeout: Duration,
    started: Arc<AtomicBool>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.local_addr())
            .field("paths", &self.paths())
            .field("certificates", &self.maintenance)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A builder: `0.0.0.0:9443`, a self-signed certificate for `localhost`, no routes.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            addr: SocketAddr::from(([0, 0, 0, 0], DEFAULT_PORT)),
            routes: Vec::new(),
            certs: CertificateSource::SelfSigned(SelfSignedConfig::default()),
            shutdown_timeout: Duration::from_secs(30),
        }
    }

    /// The bound address.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// The registered paths, sorted.
    pub fn paths(&self) -> Vec<&str> {
        let mut paths: Vec<&str> = self.routes.keys().map(String::as_str).collect();
        paths.sort_unstable();
        paths
    }

    /// The CA bundle (PEM) that verifies the certificate served now: what goes into a
    /// webhook configuration's `caBundle` (see [`CaInjector`](super::CaInjector)).
    pub fn ca_bundle(&self) -> Vec<u8> {
        self.resolver.ca_bundle()
    }

    /// The certificate resolver (current certificate, CA bundle and its changes).
    pub fn cert_resolver(&self) -> &CertResolver {
        &self.resolver
    }

    /// The server's metrics (registered nowhere until [`register_metrics`](Self::register_metrics)).
    pub fn metrics(&self) -> &WebhookMetrics {
        &self.metrics
    }

    /// True while [`run`](Self::run) accepts connections (controller-runtime's
    /// `StartedChecker`, for a readiness check).
    pub fn started(&self) -> Arc<AtomicBool> {
        self.started.clone()
    }

    /// Registers the `controller_runtime_webhook_*` series in `registry`.
    pub fn register_metrics(&self, registry: &mut Registry) {
        self.metrics.register(registry);
    }

    /// Serves until `stop` fires, keeping the certificate fresh; then stops accepting and
    /// lets requests in flight finish (bounded by the graceful shutdown timeout).
    pub async fn run(self, stop: CancellationToken) -> Result<(), ServerError> {
        let addr = self.local_addr();
        let listener =
            TcpListener::from_std(self.listener).map_err(|source| ServerError::Bind {
                addr: addr.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0))),
                source,
            })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(self.resolver.clone()));
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));

        let tasks = TaskTracker::new();
        let certs_stop = stop.child_token();
        let resolver = self.resolver.clone();
        tasks.spawn(match self.maintenance {
            Maintenance::SelfSigned(certs) => {
                futures::future::Either::Left((*certs).run(resolver, certs_stop))
            }
            Maintenance::Directory(dir) => {
                futures::future::Either::Right(dir.watch(resolver, certs_stop))
            }
        });
        let state = Arc::new(State {
            routes: self.routes,
            metrics: self.metrics,
        });
        tracing::info!(?addr, paths = ?state.routes.keys().collect::<Vec<_>>(), "serving webhooks");
        self.started.store(true, Ordering::Release);
        loop {
            let accepted = tokio::select! {
                biased;
                () = stop.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(?addr, %error, "accepting a webhook connection failed");
                    continue;
                }
            };
            let (acceptor, state, stop) = (acceptor.clone(), state.clone(), stop.clone());
            tasks.spawn(async move {
                let tls =
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => tls,
                        Ok(Err(error)) => {
                            tracing::debug!(%peer, %error, "webhook TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::debug!(%peer, "webhook TLS handshake timed out");
                            return;
                        }
                    };
                let service = service_fn(move |request| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(state.dispatch(request).await) }
                });
                let builder = auto::Builder::new(TokioExecutor::new());
                let connection = builder.serve_connection(TokioIo::new(tls), service);
                tokio::pin!(connection);
                let result = tokio::select! {
                    result = connection.as_mut() => result,
                    () = stop.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        connection.await
                    }
                };
                if let Err(error) = result {
                    tracing::debug!(%peer, %error, "webhook connection ended with an error");
                }
            });
        }
        self.started.store(false, Ordering::Release);
        drop(listener);
        tasks.close();
        if tokio::time::timeout(self.shutdown_timeout, tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!("webhook requests did not finish within the graceful shutdown timeout");
        }
        tracing::info!(?addr, "webhook server stopped");
        Ok(())
    }
}

/// What every connection shares.
struct State {
    routes: Arc<HashMap<String, Route>>,
    metrics: WebhookMetrics,
}

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

const JSON: &str = "application/json";
const PLAIN: &str = "text/plain; charset=utf-8";

impl State {
    async fn dispatch(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        let path = request.uri().path().to_owned();
        if path == "/healthz" {
            return reply(StatusCode::OK, PLAIN, "ok");
        }
        let Some(route) = self.routes.get(&path) else {
            return reply(StatusCode::NOT_FOUND, PLAIN, "404 page not found\n");
        };
        if request.method() != Method::POST {
            return reply(
                StatusCode::METHOD_NOT_ALLOWED,
                PLAIN,
                "only POST is served\n",
            );
        }
        let in_flight = self.metrics.start(&path);
        let content_type = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) => {
                tracing::warn!(webhook = %path, %error, "reading a webhook request failed");
                let response = reply(StatusCode::BAD_REQUEST, PLAIN, error.to_string());
                in_flight.finish(StatusCode::BAD_REQUEST.as_u16());
                return response;
            }
        };
        let response = match route {
            Route::Admission(admission) => admit(admission, &path, &content_type, &body).await,
            Route::Conversion(conversion) => convert(conversion.as_ref(), &path, &body),
        };
        in_flight.finish(response.status().as_u16());
        response
    }
}

fn is_json(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case(JSON))
}

/// Answers an AdmissionReview: always HTTP 200 with a review, as kube-apiserver expects
/// (an error is a review with `allowed: false` and the error's code).
async fn admit(
    admission: &Admission,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> Response<Full<Bytes>> {
    let decoded = if is_json(content_type) {
        review::decode(body)
    } else {
        Err(ReviewError::ContentType(content_type.to_owned()))
    };
    let response = match decoded {
        Ok(decoded) => admission.admit(decoded, path).await,
        Err(error) => {
            tracing::warn!(webhook = %path, %error, "bad admission request");
            review::errored_undecoded(review::uid_of(body), 400, &error.to_string())
        }
    };
    reply(StatusCode::OK, JSON, review::encode(response))
}

/// Answers a ConversionReview; a body that is not one gets a 400 with a failed review, a
/// conversion that panics a failed review.
fn convert(
    conversion: &dyn super::conversion::Convert,
    path: &str,
    body: &[u8],
) -> Response<Full<Bytes>> {
    let failed = |code: u16, message: &str| {
        let status = Status::failure(message, "").with_code(code);
        ConversionResponse::invalid(status).into_review()
    };
    let (status, answer) = match serde_json::from_slice::<ConversionReview>(body) {
        Err(error) => {
            tracing::warn!(webhook = %path, %error, "bad conversion request");
            (
                StatusCode::BAD_REQUEST,
                failed(
                    400,
                    &format!("couldn't decode the ConversionReview: {error}"),
                ),
            )
        }
        Ok(request) => {
            let uid = request
                .request
                .as_ref()
                .map(|r| r.uid.clone())
                .unwrap_or_default();
            match std::panic::catch_unwind(AssertUnwindSafe(|| conversion.review(request))) {
                Ok(answer) => (StatusCode::OK, answer),
                Err(panic) => {
                    let message = panic_message(panic.as_ref());
                    tracing::error!(webhook = %path, %uid, panic = %message, "conversion panicked");
                    let mut answer = failed(500, &format!("panic: {message} [recovered]"));
                    if let Some(response) = &mut answer.response {
                        response.uid = uid;
                    }
                    (StatusCode::OK, answer)
                }
            }
        }
    };
    match serde_json::to_vec(&answer) {
        Ok(bytes) => reply(status, JSON, bytes),
        Err(error) => reply(StatusCode::INTERNAL_SERVER_ERROR, PLAIN, error.to_string()),
    }
}
