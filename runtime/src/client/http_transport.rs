//! The production [`Transport`]: hyper's pooled client over rustls (ring provider), with
//! gzip, HTTP/2, an HTTP proxy and the timeouts of the [`Config`].
//!
//! Requests arrive with a path-only URI (as kube-core builds them) and are resolved against
//! the configured cluster URL. TLS is a rustls `ClientConfig` built here, so CA bundles,
//! client certificates, `insecure-skip-tls-verify` and `tls-server-name` behave as in kubectl.
//! ALPN offers `h2` and `http/1.1`: a server that speaks HTTP/2 gets one multiplexed
//! connection, any other gets a pool of HTTP/1.1 connections. Redirects are not followed.
//!
//! With an exec plugin that returns client certificates ([`ExecClientCert`]) the handshake
//! presents the plugin's current certificate; when the plugin returns a new one the
//! transport starts a new connection pool and closes the connections of the old one, as
//! client-go's exec authenticator does with its connection-tracking dialer.

use std::{
    fmt,
    future::Future as _,
    io,
    io::Write as _,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
    time::Duration,
};

use base64::Engine as _;
use bytes::Bytes;
use futures::Stream;
use http::{
    HeaderMap, HeaderValue, Uri,
    header::{
        ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, PROXY_AUTHORIZATION, RANGE, USER_AGENT,
    },
    uri::Scheme,
};
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper_rustls::{
    DefaultServerNameResolver, FixedServerNameResolver, HttpsConnector, MaybeHttpsStream,
    ResolveServerName,
};
use hyper_util::{
    client::legacy::{
        Client,
        connect::{Connected, Connection, HttpConnector, proxy::Tunnel},
    },
    rt::{TokioExecutor, TokioIo, TokioTimer},
};
use rustls::{
    ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime, pem::PemObject},
};
use secrecy::ExposeSecret as _;
use tokio::{
    net::TcpStream,
    time::{Instant, Sleep},
};
use tokio_util::sync::WaitForCancellationFutureOwned;
use tower_service::Service;

use super::{
    config::{Config, ConfigError, TlsConfig},
    exec_cert::ExecClientCert,
    transport::{Body, BoxFuture, Transport, TransportError},
};

/// How long an idle pooled connection is kept (90 s, as in Go's `http.DefaultTransport`).
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// TCP keepalive on every connection, so a dead peer under a quiet watch is noticed (probes
/// after 15 s idle, every 15 s, 3 unanswered ones close the connection; reqwest's defaults).
const TCP_KEEPALIVE: Duration = Duration::from_secs(15);
const TCP_KEEPALIVE_RETRIES: u32 = 3;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Sends requests to a real API server with hyper (HTTP/1.1 and HTTP/2) over rustls.
///
/// Built from a [`Config`]: the cluster URL (with any path prefix) that path-only requests
/// are resolved against, its TLS settings ([`rustls_config`]), an `http://` proxy
/// (`proxy-url`; HTTPS targets are reached through a `CONNECT` tunnel), the connect and read
/// timeouts, the `User-Agent` and gzip. A [`RequestTimeout`] extension on a request bounds
/// the whole exchange, response head and body. Connections are pooled and shared by clones.
#[derive(Clone)]
pub struct HttpTransport {
    pool: Arc<Pool>,
    settings: Arc<Settings>,
}

type HyperClient = Client<Connector, Full<Bytes>>;

/// The connection pool, renewed when an exec plugin's client certificate changes.
struct Pool {
    connector: Connector,
    exec_cert: Option<ExecClientCert>,
    /// The pool and the certificate generation it was made for.
    current: parking_lot::Mutex<(u64, HyperClient)>,
}

impl Pool {
    fn new(connector: Connector, exec_cert: Option<ExecClientCert>) -> Self {
        let generation = exec_cert.as_ref().map_or(0, ExecClientCert::generation);
        let client = Self::client(connector.clone());
        Self {
            connector,
            exec_cert,
            current: parking_lot::Mutex::new((generation, client)),
        }
    }

    fn client(connector: Connector) -> HyperClient {
        Client::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(connector)
    }

    /// The client for the next request: a fresh pool when the exec certificate changed
    /// since the current one was made (no pooled connection holds the old certificate).
    fn get(&self) -> HyperClient {
        let mut current = self.current.lock();
        if let Some(cert) = &self.exec_cert {
            let generation = cert.generation();
            if generation != current.0 {
                tracing::debug!(generation, "new client certificate: new connection pool");
                *current = (generation, Self::client(self.connector.clone()));
            }
        }
        current.1.clone()
    }
}

/// What every request needs besides the connection pool.
struct Settings {
    base: Uri,
    user_agent: HeaderValue,
    gzip: bool,
    connect_timeout: Option<Duration>,
    read_timeout: Option<Duration>,
    proxy: Option<Proxy>,
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.settings;
        f.debug_struct("HttpTransport")
            .field("base", &without_userinfo(&s.base))
            .field("proxy", &s.proxy.as_ref().map(|p| p.uri.to_string()))
            .field("gzip", &s.gzip)
            .field("connect_timeout", &s.connect_timeout)
            .field("read_timeout", &s.read_timeout)
            .finish_non_exhaustive()
    }
}

impl HttpTransport {
    /// A transport for `config`'s server, TLS, proxy and timeouts.
    ///
    /// Fails on unusable TLS material, an invalid `User-Agent`, or a proxy that is not
    /// `http://` (SOCKS and HTTPS proxies are not supported).
    pub fn new(config: &Config) -> Result<Self, ConfigError> {
        Self::build(config, None)
    }

    /// A transport for `config` whose TLS handshakes present the client certificate an exec
    /// credential plugin last put in `exec_cert` (see [`ExecClientCert`]; give the same slot
    /// to the [`Authenticator`](super::Authenticator), as
    /// [`Client::builder_from_config`](super::Client::builder_from_config) does). A client
    /// certificate configured in `config.tls` takes precedence over the plugin's.
    pub fn with_exec_client_cert(
        config: &Config,
        exec_cert: ExecClientCert,
    ) -> Result<Self, ConfigError> {
        Self::build(config, Some(exec_cert))
    }

    fn build(config: &Config, exec_cert: Option<ExecClientCert>) -> Result<Self, ConfigError> {
        let user_agent = HeaderValue::from_str(&config.user_agent)
            .map_err(|_| ConfigError::Http("invalid user agent".into()))?;
        let proxy = config.proxy_url.as_ref().map(Proxy::parse).transpose()?;

        let mut http = HttpConnector::new();
        // the TLS layer above sees https:// URIs through this connector
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_keepalive(Some(TCP_KEEPALIVE));
        http.set_keepalive_interval(Some(TCP_KEEPALIVE));
        http.set_keepalive_retries(Some(TCP_KEEPALIVE_RETRIES));
        http.set_connect_timeout(config.connect_timeout);
        let route = Route {
            tunnel: proxy.as_ref().map(|p| {
                let tunnel = Tunnel::new(p.uri.clone(), http.clone());
                match &p.authorization {
                    Some(auth) => tunnel.with_auth(auth.clone()),
                    None => tunnel,
                }
            }),
            proxy: proxy.as_ref().map(|p| p.uri.clone()),
            http,
            exec_cert: exec_cert.clone(),
        };
        // kubectl sends `tls-server-name` as SNI too, not only for verification
        let server_name: Arc<dyn ResolveServerName + Send + Sync> = match &config.tls.server_name {
            Some(name) => Arc::new(FixedServerNameResolver::new(
                ServerName::try_from(name.clone())
                    .map_err(|e| ConfigError::Tls(format!("tls-server-name: {e}")))?,
            )),
            None => Arc::new(DefaultServerNameResolver::default()),
        };
        // `new`, not the builder: the builder insists on setting ALPN itself, and
        // `rustls_config` already offers h2 and http/1.1
        let tls = rustls_config_with(&config.tls, exec_cert.as_ref())?;
        let https = HttpsConnector::new(route, tls, false, server_name);
        let connector = Connector {
            https,
            timeout: config.connect_timeout,
        };
        Ok(Self {
            pool: Arc::new(Pool::new(connector, exec_cert)),
            settings: Arc::new(Settings {
                base: config.cluster_url.clone(),
                user_agent,
                gzip: !config.disable_compression,
                connect_timeout: config.connect_timeout,
                read_timeout: config.read_timeout,
                proxy,
            }),
        })
    }
}

impl Transport for HttpTransport {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let client = self.pool.get();
        let settings = self.settings.clone();
        Box::pin(async move {
            let started = Instant::now();
            let (parts, body) = request.into_parts();
            let uri = resolve(&settings.base, &parts.uri)?;
            let total = parts
                .extensions
                .get::<RequestTimeout>()
                .map(|t| Deadline::new(started, t.0, Elapsed::Request));
            let mut headers = parts.headers;
            settings.default_headers(&uri, &mut headers);
            let mut req = http::Request::new(Full::new(Bytes::from(body)));
            *req.method_mut() = parts.method;
            *req.uri_mut() = uri;
            *req.headers_mut() = headers;

            // the response head must arrive within the read timeout and the request's deadline
            let read = settings
                .read_timeout
                .map(|t| Deadline::new(started, t, Elapsed::Read));
            let head = match Deadline::earliest(total, read) {
                Some(d) => tokio::time::timeout_at(d.at, client.request(req))
                    .await
                    .map_err(|_| d.error())?,
                None => client.request(req).await,
            };
            let (mut parts, incoming) = head.map_err(client_error)?.into_parts();

            let gzip = settings.gzip && is_gzip(&parts.headers);
            if gzip {
                parts.headers.remove(CONTENT_ENCODING);
                parts.headers.remove(CONTENT_LENGTH);
            }
            let body = ResponseBody {
                incoming,
                total: total.map(|d| (Box::pin(tokio::time::sleep_until(d.at)), d)),
                read: settings
                    .read_timeout
                    .map(|t| (Box::pin(tokio::time::sleep(t)), t)),
                gunzip: gzip.then(Gunzip::new),
                done: false,
            };
            Ok(http::Response::from_parts(parts, Body::from_stream(body)))
        })
    }
}

impl Settings {
    /// The headers the transport adds: `User-Agent` and `Accept-Encoding` unless the request
    /// has its own, and the proxy's credentials on a plain-HTTP request sent through it.
    fn default_headers(&self, uri: &Uri, headers: &mut HeaderMap) {
        if !headers.contains_key(USER_AGENT) {
            headers.insert(USER_AGENT, self.user_agent.clone());
        }
        // a range of the encoded body would not decode, so ranges stay unencoded (as in Go)
        if self.gzip && !headers.contains_key(ACCEPT_ENCODING) && !headers.contains_key(RANGE) {
            headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        }
        if uri.scheme() == Some(&Scheme::HTTP)
            && let Some(auth) = self.proxy.as_ref().and_then(|p| p.authorization.as_ref())
            && !headers.contains_key(PROXY_AUTHORIZATION)
        {
            headers.insert(PROXY_AUTHORIZATION, auth.clone());
        }
    }
}

/// `uri` as the absolute URI to send: a path-only one is appended to `base` (which keeps
/// its own path prefix, e.g. `https://host/prefix`), an absolute one is used as it is.
fn resolve(base: &Uri, uri: &Uri) -> Result<Uri, TransportError> {
    let full: Uri = if uri.scheme().is_some() {
        uri.clone()
    } else {
        let base = base.to_string();
        let base = base.trim_end_matches('/');
        let pq = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        format!("{base}{pq}")
            .parse()
            .map_err(|e| TransportError::Other(format!("bad url: {e}")))?
    };
    match full.scheme_str() {
        Some("http" | "https") if full.host().is_some_and(|h| !h.is_empty()) => Ok(full),
        Some("http" | "https") => Err(TransportError::Other(format!(
            "bad url: no host in {}",
            without_userinfo(&full)
        ))),
        _ => Err(TransportError::Other(format!(
            "bad url: {} is not http or https",
            without_userinfo(&full)
        ))),
    }
}

/// `u` without credentials, for messages and Debug output.
fn without_userinfo(u: &Uri) -> String {
    match (u.scheme_str(), u.authority()) {
        (Some(scheme), Some(a)) if a.as_str().contains('@') => {
            let host = a.as_str().rsplit('@').next().unwrap_or_default();
            let pq = u.path_and_query().map(|p| p.as_str()).unwrap_or("");
            format!("{scheme}://<redacted>@{host}{pq}")
        }
        _ => u.to_string(),
    }
}

fn is_gzip(headers: &HeaderMap) -> bool {
    headers.get(CONTENT_ENCODING).is_some_and(|v| {
        v.to_str()
            .is_ok_and(|v| v.trim().eq_ignore_ascii_case("gzip"))
    })
}

/// A per-request timeout, set as an `http::Request` extension by the client for
/// non-streaming calls: the response head and the whole body must arrive within it.
#[derive(Clone, Copy, Debug)]
pub struct RequestTimeout(pub std::time::Duration);

/// Which timeout ran out.
#[derive(Clone, Copy, Debug)]
enum Elapsed {
    /// The request's [`RequestTimeout`].
    Request,
    /// `Config::read_timeout`: nothing was read for that long.
    Read,
}

#[derive(Clone, Copy, Debug)]
struct Deadline {
    at: Instant,
    after: Duration,
    kind: Elapsed,
}

impl Deadline {
    fn new(start: Instant, after: Duration, kind: Elapsed) -> Self {
        Self {
            at: start + after,
            after,
            kind,
        }
    }

    fn earliest(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.at < a.at { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    fn error(&self) -> TransportError {
        self.kind.error(self.after)
    }
}

impl Elapsed {
    fn error(self, after: Duration) -> TransportError {
        TransportError::Timeout(match self {
            Elapsed::Request => format!("request timed out after {after:?}"),
            Elapsed::Read => format!("nothing read from the server for {after:?} (read timeout)"),
        })
    }
}

/// A response body as a stream of chunks: each read within the read timeout, the whole
/// within the request's deadline, gzip decoded as the chunks arrive.
struct ResponseBody {
    incoming: Incoming,
    total: Option<(Pin<Box<Sleep>>, Deadline)>,
    /// Reset whenever a frame arrives.
    read: Option<(Pin<Box<Sleep>>, Duration)>,
    gunzip: Option<Gunzip>,
    done: bool,
}

impl Stream for ResponseBody {
    type Item = Result<Bytes, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if let Some((sleep, deadline)) = &mut this.total
                && sleep.as_mut().poll(cx).is_ready()
            {
                this.done = true;
                return Poll::Ready(Some(Err(deadline.error())));
            }
            if let Some((sleep, after)) = &mut this.read
                && sleep.as_mut().poll(cx).is_ready()
            {
                this.done = true;
                return Poll::Ready(Some(Err(Elapsed::Read.error(*after))));
            }
            let frame = match ready!(Pin::new(&mut this.incoming).poll_frame(cx)) {
                Some(Ok(frame)) => frame,
                Some(Err(e)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(TransportError::Body(describe(&e)))));
                }
                None => {
                    this.done = true;
                    let rest = match this.gunzip.take().map(Gunzip::finish) {
                        None => return Poll::Ready(None),
                        Some(rest) => rest,
                    };
                    return Poll::Ready(match rest {
                        Ok(rest) if rest.is_empty() => None,
                        Ok(rest) => Some(Ok(rest)),
                        Err(e) => Some(Err(gzip_error(&e))),
                    });
                }
            };
            if let Some((sleep, after)) = &mut this.read {
                sleep.as_mut().reset(Instant::now() + *after);
            }
            // trailers carry no data
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let Some(gunzip) = &mut this.gunzip else {
                if data.is_empty() {
                    continue;
                }
                return Poll::Ready(Some(Ok(data)));
            };
            match gunzip.decode(&data) {
                // a gzip header, or too little input for a whole deflate block
                Ok(out) if out.is_empty() => continue,
                Ok(out) => return Poll::Ready(Some(Ok(out))),
                Err(e) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(gzip_error(&e))));
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done || (self.gunzip.is_none() && self.incoming.is_end_stream()) {
            (0, Some(0))
        } else {
            (0, None)
        }
    }
}

fn gzip_error(e: &io::Error) -> TransportError {
    TransportError::Body(format!("decoding the gzip response: {e}"))
}

/// An incremental gzip decoder: compressed chunks in, the bytes they decode to out, nothing
/// buffered beyond what the decoder needs. Concatenated gzip members decode one after the
/// other (as Go's `gzip.Reader` does); a stream cut short is an error at its end.
struct Gunzip {
    decoder: flate2::write::MultiGzDecoder<Vec<u8>>,
    seen_input: bool,
}

impl Gunzip {
    fn new() -> Self {
        Self {
            decoder: flate2::write::MultiGzDecoder::new(Vec::new()),
            seen_input: false,
        }
    }

    /// The bytes `chunk` completes; often empty for the first chunk (the gzip header).
    fn decode(&mut self, chunk: &[u8]) -> io::Result<Bytes> {
        if chunk.is_empty() {
            return Ok(Bytes::new());
        }
        self.seen_input = true;
        self.decoder.write_all(chunk)?;
        self.decoder.flush()?;
        Ok(Bytes::from(std::mem::take(self.decoder.get_mut())))
    }

    /// The last bytes, once the compressed stream has ended; an error if it was incomplete.
    /// An empty body (a `HEAD` answer, a 204 marked gzip) decodes to nothing.
    fn finish(mut self) -> io::Result<Bytes> {
        if !self.seen_input {
            return Ok(Bytes::new());
        }
        self.decoder.try_finish()?;
        Ok(Bytes::from(std::mem::take(self.decoder.get_mut())))
    }
}

/// `e` with its sources: "client error (Connect): tcp connect error: Connection refused".
fn describe(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(source) = cur {
        let message = source.to_string();
        // some errors repeat their source in their own message
        if !out.ends_with(&message) {
            out.push_str(": ");
            out.push_str(&message);
        }
        cur = source.source();
    }
    out
}

/// A failed exchange: no connection (refused, DNS, TLS handshake, proxy, connect timeout)
/// is [`TransportError::Connect`]; a connection lost before the response head is
/// [`TransportError::Other`].
fn client_error(e: hyper_util::client::legacy::Error) -> TransportError {
    if e.is_connect() {
        TransportError::Connect(describe(&e))
    } else {
        TransportError::Other(describe(&e))
    }
}

/// The connect timeout ran out (DNS, TCP, proxy tunnel and TLS handshake together).
#[derive(Debug, thiserror::Error)]
#[error("connecting timed out after {0:?}")]
struct ConnectTimedOut(Duration);

/// `proxy-url`: an `http://` proxy and the credentials of its URL (a sensitive header
/// value: its Debug output is `Sensitive`).
#[derive(Clone, Debug)]
struct Proxy {
    /// `http://host:port`, without credentials.
    uri: Uri,
    /// `Proxy-Authorization: Basic ...` from the URL's `user:password@`.
    authorization: Option<HeaderValue>,
}

impl Proxy {
    fn parse(url: &Uri) -> Result<Self, ConfigError> {
        match url.scheme_str() {
            // kubectl reads a proxy URL without a scheme as http://
            Some("http") | None => {}
            Some(other) => {
                return Err(ConfigError::Url(format!(
                    "proxy-url: {other}:// proxies are not supported, only http://"
                )));
            }
        }
        let authority = url
            .authority()
            .filter(|a| !a.host().is_empty())
            .ok_or_else(|| ConfigError::Url("proxy-url: no host".into()))?;
        let port = authority.port_u16().unwrap_or(80);
        let uri = format!("http://{}:{port}", authority.host())
            .parse()
            .map_err(|_| ConfigError::Url("proxy-url: invalid host".into()))?;
        let authorization = match authority.as_str().rsplit_once('@') {
            None => None,
            Some((userinfo, _)) => {
                let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                let credentials =
                    format!("{}:{}", percent_decode(user)?, percent_decode(password)?);
                let token = base64::engine::general_purpose::STANDARD.encode(credentials);
                let mut value = HeaderValue::from_str(&format!("Basic {token}"))
                    .map_err(|_| ConfigError::Url("proxy-url: invalid credentials".into()))?;
                value.set_sensitive(true);
                Some(value)
            }
        };
        Ok(Self { uri, authorization })
    }
}

/// `%XX` escapes of a URL's user or password (never quoted in errors).
fn percent_decode(s: &str) -> Result<String, ConfigError> {
    let invalid = || ConfigError::Url("proxy-url: invalid escape in the credentials".into());
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [
                bytes.next().ok_or_else(invalid)?,
                bytes.next().ok_or_else(invalid)?,
            ];
            let hex = std::str::from_utf8(&hex).map_err(|_| invalid())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| invalid())?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).map_err(|_| invalid())
}

/// The TCP connection for a destination: direct, to the proxy (plain-HTTP destinations,
/// sent in absolute form), or tunnelled through the proxy with `CONNECT` (HTTPS ones; TLS
/// then runs end to end inside the tunnel).
#[derive(Clone)]
struct Route {
    http: HttpConnector,
    proxy: Option<Uri>,
    tunnel: Option<Tunnel<HttpConnector>>,
    /// The exec plugin's certificate slot: a connection closes when its certificate is
    /// replaced.
    exec_cert: Option<ExecClientCert>,
}

impl Service<Uri> for Route {
    type Response = RouteStream;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<RouteStream, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        ready!(self.http.poll_ready(cx))?;
        if let Some(tunnel) = &mut self.tunnel {
            ready!(tunnel.poll_ready(cx))?;
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let https = dst.scheme() == Some(&Scheme::HTTPS);
        // taken before the handshake: a certificate replaced meanwhile closes it too
        let retired = self
            .exec_cert
            .as_ref()
            .filter(|_| https)
            .map(|c| Box::pin(c.connections().cancelled_owned()));
        type Connecting = BoxFuture<'static, Result<TokioIo<TcpStream>, BoxError>>;
        let (connecting, proxied): (Connecting, bool) = match (&mut self.tunnel, &self.proxy) {
            (Some(tunnel), _) if https => {
                let f = tunnel.call(dst);
                (Box::pin(async move { Ok(f.await?) }), false)
            }
            (_, Some(proxy)) => {
                let f = self.http.call(proxy.clone());
                (Box::pin(async move { Ok(f.await?) }), true)
            }
            _ => {
                let f = self.http.call(dst);
                (Box::pin(async move { Ok(f.await?) }), false)
            }
        };
        Box::pin(async move {
            let io = connecting.await?;
            Ok(RouteStream {
                io,
                proxied,
                retired,
            })
        })
    }
}

/// A TCP connection that knows whether requests on it go to a proxy (then hyper writes
/// them in absolute form, `GET http://host/path`), and that fails once the exec client
/// certificate it was made with is replaced (client-go's `connrotation` closing it).
struct RouteStream {
    io: TokioIo<TcpStream>,
    proxied: bool,
    retired: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
}

impl fmt::Debug for RouteStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouteStream")
            .field("io", &self.io)
            .field("proxied", &self.proxied)
            .finish_non_exhaustive()
    }
}

impl RouteStream {
    /// An error once the connection's client certificate has been replaced; also
    /// registers the task to be woken then, so an idle connection closes at once.
    fn check_retired(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let Some(retired) = &mut self.retired else {
            return Ok(());
        };
        if retired.as_mut().poll(cx).is_pending() {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "the exec plugin's client certificate was replaced",
        ))
    }
}

impl Connection for RouteStream {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.proxied)
    }
}

impl hyper::rt::Read for RouteStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        self.check_retired(cx)?;
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for RouteStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.check_retired(cx)?;
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}

/// The client's connector: the route, then TLS for `https://`, all within the connect
/// timeout.
#[derive(Clone)]
struct Connector {
    https: HttpsConnector<Route>,
    timeout: Option<Duration>,
}

impl Service<Uri> for Connector {
    type Response = MaybeHttpsStream<RouteStream>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.https.poll_ready(cx)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let connecting = self.https.call(dst);
        let timeout = self.timeout;
        Box::pin(async move {
            match timeout {
                Some(t) => tokio::time::timeout(t, connecting)
                    .await
                    .map_err(|_| Box::new(ConnectTimedOut(t)))?,
                None => connecting.await,
            }
        })
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The rustls client configuration for `tls`.
pub fn rustls_config(tls: &TlsConfig) -> Result<ClientConfig, ConfigError> {
    rustls_config_with(tls, None)
}

/// [`rustls_config`], presenting `exec_cert`'s certificate when `tls` configures none.
fn rustls_config_with(
    tls: &TlsConfig,
    exec_cert: Option<&ExecClientCert>,
) -> Result<ClientConfig, ConfigError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::Tls(e.to_string()))?;

    let mut roots = RootCertStore::empty();
    match &tls.root_certs {
        Some(certs) => {
            for der in certs {
                roots
                    .add(CertificateDer::from(der.clone()))
                    .map_err(|e| ConfigError::Tls(format!("invalid CA certificate: {e}")))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let verifier: Arc<dyn ServerCertVerifier> = if tls.insecure_skip_tls_verify {
        Arc::new(NoVerify(provider.clone()))
    } else {
        let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .map_err(|e| ConfigError::Tls(e.to_string()))?;
        match &tls.server_name {
            Some(name) => Arc::new(FixedName {
                inner,
                name: ServerName::try_from(name.clone())
                    .map_err(|e| ConfigError::Tls(format!("tls-server-name: {e}")))?,
            }),
            None => inner,
        }
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);

    let mut cfg = match (&tls.client_cert_pem, &tls.client_key_pem) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| ConfigError::Tls("invalid client certificate PEM".into()))?;
            let key = PrivateKeyDer::from_pem_slice(key.expose_secret().as_bytes())
                .map_err(|_| ConfigError::Tls("invalid client key PEM".into()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|_| ConfigError::Tls("client certificate and key do not match".into()))?
        }
        (None, None) => match exec_cert {
            Some(slot) => {
                let mut cfg = builder.with_client_cert_resolver(Arc::new(slot.clone()));
                // a resumed session keeps the identity of the handshake it resumes, so a
                // new connection would still be the old certificate's (Go's client, which
                // client-go leaves without a session cache, never resumes either)
                cfg.resumption = rustls::client::Resumption::disabled();
                cfg
            }
            None => builder.with_no_client_auth(),
        },
        _ => {
            return Err(ConfigError::Tls(
                "client certificate and key must be given together".into(),
            ));
        }
    };
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(cfg)
}

/// Verifies the chain normally but checks it against a configured name (`tls-server-name`).
#[derive(Debug)]
struct FixedName {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    name: ServerName<'static>,
}

impl ServerCertVerifier for FixedName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, &self.name, ocsp, now)
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// `insecure-skip-tls-verify`: any certificate is accepted, signatures are still checked.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn gunzip_in_pieces(compressed: &[u8], piece: usize) -> io::Result<Vec<u8>> {
        let mut g = Gunzip::new();
        let mut out = Vec::new();
        for p in compressed.chunks(piece) {
            out.extend_from_slice(&g.decode(p)?);
        }
        out.extend_from_slice(&g.finish()?);
        Ok(out)
    }

    #[test]
    fn gunzip_decodes_input_fed_a_byte_at_a_time_or_whole() {
        let data: Vec<u8> = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let compressed = gzip(&data);
        for piece in [1, 7, 512, compressed.len()] {
            assert_eq!(
                gunzip_in_pieces(&compressed, piece).unwrap(),
                data,
                "{piece}"
            );
        }
    }

    #[test]
    fn gunzip_yields_output_before_the_stream_ends() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(b"first line\n").unwrap();
        enc.flush().unwrap();
        let first = std::mem::take(enc.get_mut());
        let mut g = Gunzip::new();
        assert_eq!(&g.decode(&first).unwrap()[..], b"first line\n");
        enc.write_all(b"second\n").unwrap();
        let rest = enc.finish().unwrap();
        assert_eq!(&g.decode(&rest).unwrap()[..], b"second\n");
        assert!(g.finish().unwrap().is_empty());
    }

    #[test]
    fn gunzip_decodes_concatenated_members() {
        let mut both = gzip(b"one ");
        both.extend_from_slice(&gzip(b"two"));
        for piece in [1, 5, both.len()] {
            assert_eq!(gunzip_in_pieces(&both, piece).unwrap(), b"one two");
        }
    }

    #[test]
    fn gunzip_rejects_a_truncated_or_corrupt_stream() {
        let compressed = gzip(&[b'a'; 1000]);
        for cut in [3, 10, compressed.len() - 4, compressed.len() - 1] {
            assert!(gunzip_in_pieces(&compressed[..cut], 2).is_err(), "{cut}");
        }
        let mut corrupt = compressed.clone();
        let n = corrupt.len();
        corrupt[n - 8] ^= 0xff; // the CRC
        assert!(gunzip_in_pieces(&corrupt, 64).is_err());
        assert!(gunzip_in_pieces(b"plain text, not gzip", 4).is_err());
    }

    #[test]
    fn gunzip_of_nothing_is_nothing() {
        assert!(Gunzip::new().finish().unwrap().is_empty());
    }

    #[test]
    fn resolve_appends_paths_to_the_base_and_keeps_absolute_uris() {
        let cases = [
            (
                "https://h:6443",
                "/api/v1/pods?limit=5",
                "https://h:6443/api/v1/pods?limit=5",
            ),
            ("https://h:6443/", "/api", "https://h:6443/api"),
            ("https://h/prefix", "/api?x=1", "https://h/prefix/api?x=1"),
            ("https://h/prefix/", "/api", "https://h/prefix/api"),
            ("https://h", "http://other:80/x", "http://other:80/x"),
        ];
        for (base, uri, want) in cases {
            let got = resolve(&base.parse().unwrap(), &uri.parse().unwrap()).unwrap();
            assert_eq!(got.to_string(), want, "{base} + {uri}");
        }
        let err = resolve(&"ftp://h".parse().unwrap(), &"/x".parse().unwrap()).unwrap_err();
        assert!(matches!(err, TransportError::Other(_)), "{err}");
    }

    #[test]
    fn proxy_urls_give_a_plain_uri_and_basic_credentials() {
        let p = Proxy::parse(&"http://proxy.example".parse().unwrap()).unwrap();
        assert_eq!(p.uri, "http://proxy.example:80");
        assert!(p.authorization.is_none());

        let p = Proxy::parse(&"http://a%3Ab:c%2Fd@[::1]:3128".parse().unwrap()).unwrap();
        assert_eq!(p.uri, "http://[::1]:3128");
        let auth = p.authorization.unwrap();
        assert!(auth.is_sensitive());
        let token = base64::engine::general_purpose::STANDARD.encode("a:b:c/d");
        assert_eq!(auth, format!("Basic {token}").as_str());

        for bad in ["http://u:%zz@p:1", "http://u:%4@p:1"] {
            let err = Proxy::parse(&bad.parse().unwrap()).unwrap_err();
            assert!(!err.to_string().contains("%z"), "never quoted: {err}");
        }
    }

    #[test]
    fn debug_output_has_no_credentials() {
        let config = Config::new("https://user:pw@10.0.0.1:6443".parse().unwrap())
            .with_proxy("http://me:hunter2@proxy:3128".parse().unwrap());
        let t = HttpTransport::new(&config).unwrap();
        let shown = format!("{t:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains(":pw@"),
            "{shown}"
        );
        assert!(shown.contains("proxy:3128"), "{shown}");
    }
}
