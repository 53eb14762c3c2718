//! The manager's HTTP endpoints: `/healthz` (and `/livez`), `/readyz`, `/metrics`, served by
//! hyper on the addresses the manager was given (one server per address; the probes and
//! the metrics may share one). With the `secure-metrics` feature a server can speak TLS and
//! put every request through the [`MetricsAuth`](super::MetricsAuth) filter first.

use std::{convert::Infallible, net::SocketAddr, sync::Arc};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use prometheus_client::registry::Registry;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::checks::Checks;

/// What one address serves.
#[derive(Clone)]
pub(crate) struct Endpoints {
    pub(crate) healthz: Option<Checks>,
    pub(crate) readyz: Option<Checks>,
    pub(crate) metrics: Option<Arc<Mutex<Registry>>>,
    /// Every request is authenticated and authorized first.
    #[cfg(feature = "secure-metrics")]
    pub(crate) auth: Option<Arc<super::MetricsAuth>>,
}

/// How a server's connections are made.
#[derive(Clone)]
pub(crate) enum Transport {
    /// Plain HTTP/1.1.
    Plain,
    /// TLS, then HTTP/1.1.
    #[cfg(feature = "secure-metrics")]
    Tls(tokio_rustls::TlsAcceptor),
}

/// How long a client may take for its TLS handshake.
#[cfg(feature = "secure-metrics")]
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

fn text(status: StatusCode, body: impl Into<Bytes>, content_type: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

const PLAIN: &str = "text/plain; charset=utf-8";
/// prometheus-client's text format (OpenMetrics).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

fn handle(request: &Request<Incoming>, endpoints: &Endpoints) -> Response<Full<Bytes>> {
    match (request.uri().path(), endpoints) {
        (
            "/healthz" | "/livez",
            Endpoints {
                healthz: Some(checks),
                ..
            },
        ) => {
            let (ok, report) = checks.run("healthz");
            let status = if ok {
                StatusCode::OK
            } else {
                StatusCode::INTERNAL_SERVER_ERROR
            };
            text(status, report, PLAIN)
        }
        (
            "/readyz",
            Endpoints {
                readyz: Some(checks),
                ..
            },
        ) => {
            let (ok, report) = checks.run("readyz");
            let status = if ok {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            text(status, report, PLAIN)
        }
        (
            "/metrics",
            Endpoints {
                metrics: Some(registry),
                ..
            },
        ) => {
            let mut body = String::new();
            match prometheus_client::encoding::text::encode(&mut body, &registry.lock()) {
                Ok(()) => text(StatusCode::OK, body, OPENMETRICS),
                Err(error) => text(StatusCode::INTERNAL_SERVER_ERROR, error.to_string(), PLAIN),
            }
        }
        _ => text(StatusCode::NOT_FOUND, "404 page not found\n", PLAIN),
    }
}

/// Answers `request`: through the filter first when the server has one.
async fn respond(request: Request<Incoming>, endpoints: &Endpoints) -> Response<Full<Bytes>> {
    #[cfg(feature = "secure-metrics")]
    if let Some(auth) = &endpoints.auth {
        use super::metrics_filter::Verdict;
        let verdict = auth
            .check(request.method(), request.uri().path(), request.headers())
            .await;
        match verdict {
            Ok(Verdict::Allowed) => {}
            Ok(Verdict::Unauthenticated) => {
                return text(StatusCode::UNAUTHORIZED, "Unauthorized\n", PLAIN);
            }
            Ok(Verdict::Denied { message }) => {
                return text(StatusCode::FORBIDDEN, format!("{message}\n"), PLAIN);
            }
            Err(error) => {
                tracing::error!(%error, "authenticating or authorizing a metrics request failed");
                return text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Authentication or authorization failed\n",
                    PLAIN,
                );
            }
        }
    }
    handle(&request, endpoints)
}

/// Serves HTTP/1.1 on one connection until it ends or `stop` fires.
async fn serve_connection<I>(io: I, endpoints: Endpoints, stop: CancellationToken)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let endpoints = Arc::new(endpoints);
    let service = service_fn(move |request| {
        let endpoints = endpoints.clone();
        async move { Ok::<_, Infallible>(respond(request, &endpoints).await) }
    });
    let connection = http1::Builder::new().serve_connection(TokioIo::new(io), service);
    tokio::select! {
        biased;
        () = stop.cancelled() => {}
        result = connection => {
            if let Err(error) = result {
                tracing::debug!(%error, "probe connection ended with an error");
            }
        }
    }
}

/// Serves `endpoints` on `listener` until `stop` fires.
pub(crate) async fn serve(
    listener: TcpListener,
    endpoints: Endpoints,
    transport: Transport,
    stop: CancellationToken,
) {
    let addr: Option<SocketAddr> = listener.local_addr().ok();
    loop {
        let accepted = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(error) => {
                tracing::warn!(?addr, %error, "accepting a probe connection failed");
                continue;
            }
        };
        let endpoints = endpoints.clone();
        let stop = stop.clone();
        match &transport {
            Transport::Plain => {
                tokio::spawn(serve_connection(stream, endpoints, stop));
            }
            #[cfg(feature = "secure-metrics")]
            Transport::Tls(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => serve_connection(tls, endpoints, stop).await,
                        Ok(Err(error)) => {
                            tracing::debug!(%error, "metrics TLS handshake failed");
                        }
                        Err(_) => tracing::debug!("metrics TLS handshake timed out"),
                    }
                });
            }
        }
    }
}
