//! [`Client`]: a [`Transport`] plus what every request needs on its way out — credentials,
//! client-side throttling, default headers — and bounded retries when the server answers
//! 429 or 503.

use std::{fmt, sync::Arc, time::Duration};

use tokio::time::Instant;

use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use serde::de::DeserializeOwned;

use super::{
    auth::{Authenticator, Credentials},
    cbor,
    config::{Config, ConfigError, DEFAULT_MAX_RETRIES},
    content::{CBOR_ACCEPT, ContentState, ContentType},
    decode::{decode_cbor_events, decode_events, decode_lines},
    error::Error,
    exec_cert::ExecClientCert,
    http_transport::{HttpTransport, RequestTimeout},
    strip::Strip,
    throttle::TokenBucket,
    transport::{Body, Transport, TransportError},
};
use crate::metrics::RestClientMetrics;
use bytes::Bytes;
use futures::stream::BoxStream;
use kube_core::WatchEvent;

/// The longest wait a `Retry-After` header may impose.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The wait when a 429/503 carries no `Retry-After` (client-go's default of one second).
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// A Kubernetes API client; cheap to clone, shared by every typed and dynamic client.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    /// Where `rest_client_*` metrics go; per handle, so [`Client::with_metrics`] can give a
    /// client's clone a provider while both share the transport, credentials and throttle.
    metrics: Option<Arc<dyn RestClientMetrics>>,
}

struct Inner {
    transport: Arc<dyn Transport>,
    auth: Authenticator,
    throttle: Option<TokenBucket>,
    default_namespace: String,
    max_retries: u32,
    request_timeout: Option<Duration>,
    headers: HeaderMap,
    /// The server's authority, the `host` label of path-only requests' metrics.
    host: String,
    /// JSON or CBOR, and whether a 415 turned CBOR off.
    content: ContentState,
}

/// How a response body is encoded, from its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    Json,
    Cbor,
}

impl Wire {
    fn of(resp: &http::Response<Body>) -> Self {
        if cbor::is_cbor_content_type(resp.headers()) {
            Wire::Cbor
        } else {
            Wire::Json
        }
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("auth", &self.inner.auth)
            .field("throttle", &self.inner.throttle)
            .field("default_namespace", &self.inner.default_namespace)
            .field("max_retries", &self.inner.max_retries)
            .field("metrics", &self.metrics.is_some())
            .finish_non_exhaustive()
    }
}

/// Builds a [`Client`] around any [`Transport`].
pub struct ClientBuilder {
    transport: Arc<dyn Transport>,
    credentials: Credentials,
    qps: f32,
    burst: u32,
    default_namespace: String,
    max_retries: u32,
    request_timeout: Option<Duration>,
    headers: HeaderMap,
    metrics: Option<Arc<dyn RestClientMetrics>>,
    host: String,
    exec_cert: Option<ExecClientCert>,
    content_type: ContentType,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("credentials", &self.credentials)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("default_namespace", &self.default_namespace)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// Sets the credentials.
    pub fn credentials(mut self, c: Credentials) -> Self {
        self.credentials = c;
        self
    }

    /// Sets client-side throttling; `qps <= 0` turns it off (the default for a bare transport).
    pub fn rate_limit(mut self, qps: f32, burst: u32) -> Self {
        self.qps = qps;
        self.burst = burst;
        self
    }

    /// Sets the default namespace.
    pub fn default_namespace(mut self, ns: impl Into<String>) -> Self {
        self.default_namespace = ns.into();
        self
    }

    /// Sets how many times a 429/503 is retried.
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// Sets the timeout for non-streaming requests.
    pub fn request_timeout(mut self, t: Option<Duration>) -> Self {
        self.request_timeout = t;
        self
    }

    /// Adds a header sent with every request.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Records client-go's `rest_client_*` metrics for every request through `metrics`
    /// (for example a [`PrometheusMetrics`](crate::metrics::PrometheusMetrics)).
    pub fn metrics(mut self, metrics: Arc<dyn RestClientMetrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The `host` label of the metrics of path-only requests (set from the cluster URL by
    /// [`Client::builder_from_config`]; empty for an in-process transport).
    pub fn metrics_host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// Where an exec plugin's client certificates go: the slot the transport presents in
    /// its TLS handshakes ([`HttpTransport::with_exec_client_cert`]).
    /// [`Client::builder_from_config`] sets it up for exec credentials.
    pub fn exec_client_cert(mut self, slot: ExecClientCert) -> Self {
        self.exec_cert = Some(slot);
        self
    }

    /// Sets the encoding of request and response bodies (JSON unless
    /// [`ContentType::Cbor`]; see [`Config::content_type`]).
    pub fn content_type(mut self, content_type: ContentType) -> Self {
        self.content_type = content_type;
        self
    }

    /// The client.
    pub fn build(self) -> Client {
        let auth = Authenticator::new(self.credentials);
        let auth = match self.exec_cert {
            Some(slot) => auth.with_exec_client_cert(slot),
            None => auth,
        };
        Client {
            inner: Arc::new(Inner {
                transport: self.transport,
                auth,
                throttle: TokenBucket::new(self.qps, self.burst),
                default_namespace: self.default_namespace,
                max_retries: self.max_retries,
                request_timeout: self.request_timeout,
                headers: self.headers,
                host: self.host,
                content: ContentState::new(self.content_type),
            }),
            metrics: self.metrics,
        }
    }
}

impl Client {
    /// A client over `transport` with no credentials and no throttling (what a fake
    /// clientset over the test server's in-process transport wants).
    pub fn new(transport: impl Transport) -> Self {
        Self::builder(transport).build()
    }

    /// A builder over `transport`.
    pub fn builder(transport: impl Transport) -> ClientBuilder {
        Self::builder_arc(Arc::new(transport))
    }

    /// A builder over a shared transport.
    pub fn builder_arc(transport: Arc<dyn Transport>) -> ClientBuilder {
        ClientBuilder {
            transport,
            credentials: Credentials::None,
            qps: -1.0,
            burst: 0,
            default_namespace: "default".into(),
            max_retries: DEFAULT_MAX_RETRIES,
            request_timeout: None,
            headers: HeaderMap::new(),
            metrics: None,
            host: String::new(),
            exec_cert: None,
            content_type: ContentType::Json,
        }
    }

    /// A client for a real API server: an [`HttpTransport`] with `config`'s TLS, proxy and
    /// timeouts, its credentials, throttling and impersonation.
    pub fn try_from_config(config: Config) -> Result<Self, ConfigError> {
        Ok(Self::builder_from_config(config)?.build())
    }

    /// The builder [`Client::try_from_config`] uses, to add what a `Config` does not carry
    /// (metrics, more headers) before building.
    /// With exec credentials, the transport and the authenticator share an
    /// [`ExecClientCert`], so a certificate the plugin returns is the TLS client
    /// certificate of the next connection.
    pub fn builder_from_config(config: Config) -> Result<ClientBuilder, ConfigError> {
        let (transport, exec_cert) = match &config.credentials {
            Credentials::Exec(_) => {
                let slot = ExecClientCert::new();
                (
                    HttpTransport::with_exec_client_cert(&config, slot.clone())?,
                    Some(slot),
                )
            }
            _ => (HttpTransport::new(&config)?, None),
        };
        let mut b = Self::builder(transport)
            .credentials(config.credentials)
            .rate_limit(config.qps, config.burst)
            .default_namespace(config.default_namespace)
            .max_retries(config.max_retries)
            .request_timeout(config.request_timeout)
            .content_type(config.content_type)
            .metrics_host(
                config
                    .cluster_url
                    .authority()
                    .map(|a| a.as_str().to_owned())
                    .unwrap_or_default(),
            );
        if let Some(user) = &config.impersonate_user {
            let v = HeaderValue::from_str(user)
                .map_err(|_| ConfigError::Http("invalid impersonate user".into()))?;
            b = b.header(HeaderName::from_static("impersonate-user"), v);
        }
        for g in &config.impersonate_groups {
            let v = HeaderValue::from_str(g)
                .map_err(|_| ConfigError::Http("invalid impersonate group".into()))?;
            b = b.header(HeaderName::from_static("impersonate-group"), v);
        }
        for (k, v) in config.headers {
            b = b.header(k, v);
        }
        if let Some(slot) = exec_cert {
            b = b.exec_client_cert(slot);
        }
        Ok(b)
    }

    /// `Config::infer()` and a client for it.
    pub async fn try_default() -> Result<Self, ConfigError> {
        Self::try_from_config(Config::infer().await?)
    }

    /// This client recording client-go's `rest_client_*` metrics through `metrics` (in
    /// place of any provider it had): a handle sharing this one's transport, credentials,
    /// throttle and settings. The [`Manager`](crate::manager::Manager) gives its client
    /// one this way, so the requests of its controllers, informers and leader election are
    /// counted on its `/metrics`.
    #[must_use]
    pub fn with_metrics(&self, metrics: Arc<dyn RestClientMetrics>) -> Self {
        Self {
            inner: self.inner.clone(),
            metrics: Some(metrics),
        }
    }

    /// Whether this client records `rest_client_*` metrics (built with
    /// [`ClientBuilder::metrics`] or [`Client::with_metrics`]).
    pub fn has_metrics(&self) -> bool {
        self.metrics.is_some()
    }

    /// The encoding this client uses now: its configured [`ContentType`], or JSON once a
    /// server refused a CBOR body with 415.
    pub fn content_type(&self) -> ContentType {
        self.inner.content.current()
    }

    /// The namespace `ResourceClient::default_namespaced` uses.
    pub fn default_namespace(&self) -> &str {
        &self.inner.default_namespace
    }

    /// Sends `request` (a path-only or absolute URI) with credentials and throttling, retrying
    /// 429 (any method: the server did not process it) and 503 (idempotent methods only) up to
    /// `max_retries` times, waiting as `Retry-After` says; a 401 refreshes token-file and exec
    /// credentials once. Any response, success or not, is returned as is.
    pub async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, Error> {
        let (parts, body) = request.into_parts();
        let timeout = parts.extensions.get::<RequestTimeout>().copied();
        let mut retries = 0u32;
        let mut reauthenticated = false;
        let metrics = self.metrics.as_deref();
        let verb = parts.method.as_str();
        let host = parts
            .uri
            .authority()
            .map_or(self.inner.host.as_str(), |a| a.as_str());
        loop {
            if let Some(t) = &self.inner.throttle {
                let waited = Instant::now();
                t.acquire().await;
                if let Some(m) = metrics {
                    m.rate_limiter_wait(verb, host, waited.elapsed());
                }
            }
            let mut req = http::Request::new(body.clone());
            *req.method_mut() = parts.method.clone();
            *req.uri_mut() = parts.uri.clone();
            *req.version_mut() = parts.version;
            *req.headers_mut() = parts.headers.clone();
            if let Some(t) = timeout {
                req.extensions_mut().insert(t);
            }
            for (k, v) in &self.inner.headers {
                req.headers_mut().append(k, v.clone());
            }
            if !req.headers().contains_key(header::ACCEPT) {
                req.headers_mut()
                    .insert(header::ACCEPT, HeaderValue::from_static("application/json"));
            }
            if let Some(h) = self.inner.auth.header().await? {
                req.headers_mut().insert(header::AUTHORIZATION, h);
            }
            let sent = Instant::now();
            let resp = self.inner.transport.send(req).await?;
            let status = resp.status();
            if let Some(m) = metrics {
                m.request(verb, host, status.as_u16(), sent.elapsed());
            }
            tracing::debug!(method = %parts.method, path = %parts.uri.path(), %status, "api request");

            if status == StatusCode::UNAUTHORIZED
                && !reauthenticated
                && self.inner.auth.invalidate().await
            {
                reauthenticated = true;
                tracing::debug!("401: refreshing credentials and retrying once");
                continue;
            }
            let retriable = status == StatusCode::TOO_MANY_REQUESTS
                || (status == StatusCode::SERVICE_UNAVAILABLE && is_idempotent(&parts.method));
            if retriable && retries < self.inner.max_retries {
                retries += 1;
                if let Some(m) = metrics {
                    m.retry(verb, host, status.as_u16());
                }
                let wait = retry_after(resp.headers()).unwrap_or(DEFAULT_RETRY_AFTER);
                tracing::debug!(%status, ?wait, retries, "retrying after server push-back");
                drop(resp);
                tokio::time::sleep(wait).await;
                continue;
            }
            return Ok(resp);
        }
    }

    /// Sends `request` and returns the raw body of a 2xx answer, or the API error.
    pub async fn request_bytes(
        &self,
        mut request: http::Request<Vec<u8>>,
    ) -> Result<bytes::Bytes, Error> {
        if let Some(t) = self.inner.request_timeout {
            request.extensions_mut().insert(RequestTimeout(t));
        }
        let resp = self.send(request).await?;
        let status = resp.status();
        let body = resp.into_body().collect().await?;
        if !status.is_success() {
            return Err(Error::from_response(status, &body));
        }
        Ok(body)
    }

    /// Sends `request` and decodes a 2xx answer as `T`: JSON, or, when the client uses CBOR
    /// ([`Config::content_type`]), CBOR or JSON as the response's `Content-Type` says.
    pub async fn request<T: DeserializeOwned>(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<T, Error> {
        let (body, wire) = self.request_body(request).await?;
        match wire {
            Wire::Json => serde_json::from_slice(&body).map_err(Error::Decode),
            Wire::Cbor => cbor::from_slice(&body).map_err(Error::DecodeCbor),
        }
    }

    /// Sends `request` in the client's encoding and returns the body of a 2xx answer with
    /// its encoding.
    pub(crate) async fn request_body(
        &self,
        mut request: http::Request<Vec<u8>>,
    ) -> Result<(Bytes, Wire), Error> {
        if let Some(t) = self.inner.request_timeout {
            request.extensions_mut().insert(RequestTimeout(t));
        }
        let resp = self.send_negotiated(request).await?;
        let status = resp.status();
        let wire = Wire::of(&resp);
        let body = resp.into_body().collect().await?;
        if !status.is_success() {
            return Err(Error::from_response(status, &body));
        }
        Ok((body, wire))
    }

    /// [`Client::send`] in the client's encoding. With CBOR in use: the CBOR Accept (unless
    /// the request names a form other than plain JSON), and a JSON body (`application/json` or a JSON
    /// `application/apply-patch+yaml`) re-encoded as `application/cbor` /
    /// `application/apply-patch+cbor`. A 415 to such a body turns CBOR off for good and
    /// sends the request again as it was (client-go's `UnsupportedMediaType` fallback).
    async fn send_negotiated(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, Error> {
        if self.inner.content.current() != ContentType::Cbor {
            return self.send(request).await;
        }
        let mut cbor_request = http::Request::new(Vec::new());
        *cbor_request.method_mut() = request.method().clone();
        *cbor_request.uri_mut() = request.uri().clone();
        *cbor_request.headers_mut() = request.headers().clone();
        if let Some(t) = request.extensions().get::<RequestTimeout>() {
            cbor_request.extensions_mut().insert(*t);
        }
        let headers = cbor_request.headers_mut();
        // kube-core names plain JSON on some requests (patches); a form of its own (the
        // metadata-only `as=PartialObjectMetadata`) is left as asked.
        let plain = headers
            .get(header::ACCEPT)
            .is_none_or(|a| a.as_bytes() == b"application/json");
        if plain {
            headers.insert(header::ACCEPT, CBOR_ACCEPT);
        }
        // A body that is not JSON (a YAML apply patch sent as is) goes as it is.
        let cbor_type = cbor_body_type(headers.get(header::CONTENT_TYPE));
        let value = cbor_type
            .filter(|_| !request.body().is_empty())
            .and_then(|_| serde_json::from_slice::<serde_json::Value>(request.body()).ok());
        let (Some(cbor_type), Some(value)) = (cbor_type, value) else {
            *cbor_request.body_mut() = request.body().clone();
            return self.send(cbor_request).await;
        };
        *cbor_request.body_mut() = cbor::to_vec(&value).map_err(Error::EncodeCbor)?;
        headers_set_content_type(cbor_request.headers_mut(), cbor_type);
        let resp = self.send(cbor_request).await?;
        if resp.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
            return Ok(resp);
        }
        if self.inner.content.unsupported_media_type() {
            tracing::info!(
                "the server refused a CBOR body (415 UnsupportedMediaType); using JSON from now on"
            );
        }
        drop(resp);
        self.send(request).await
    }

    /// Sends `request` and decodes the 2xx body line by line as it streams in (watches).
    pub async fn request_stream<T: DeserializeOwned + Send + 'static>(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<BoxStream<'static, Result<T, Error>>, Error> {
        let resp = self.send(request).await?;
        Ok(decode_lines(Self::stream_body(resp).await?))
    }

    /// Sends a watch `request` in the client's encoding and decodes its events as they
    /// stream in (JSON lines or a CBOR sequence, as the `Content-Type` says), leaving
    /// `strip`'s parts out of every object.
    pub(crate) async fn request_events<T: DeserializeOwned + Send + 'static>(
        &self,
        request: http::Request<Vec<u8>>,
        strip: Strip,
    ) -> Result<BoxStream<'static, Result<WatchEvent<T>, Error>>, Error> {
        let resp = self.send_negotiated(request).await?;
        let wire = Wire::of(&resp);
        let body = Self::stream_body(resp).await?;
        Ok(match wire {
            Wire::Json => decode_events(body, strip),
            Wire::Cbor => decode_cbor_events(body, strip),
        })
    }

    /// The body of a 2xx answer as the chunks arrive, or the API error.
    async fn stream_body(
        resp: http::Response<Body>,
    ) -> Result<BoxStream<'static, Result<Bytes, TransportError>>, Error> {
        let status = resp.status();
        if !status.is_success() {
            let body = resp.into_body().collect().await?;
            return Err(Error::from_response(status, &body));
        }
        Ok(resp.into_body().into_stream())
    }
}

/// The CBOR content type for a request body of `content_type`, if it has one: JSON objects
/// become `application/cbor`, JSON apply patches `application/apply-patch+cbor`; JSON,
/// merge and strategic merge patches have no CBOR form.
fn cbor_body_type(content_type: Option<&HeaderValue>) -> Option<&'static str> {
    let ct = content_type?.to_str().ok()?;
    match ct.split(';').next().unwrap_or_default().trim() {
        "application/json" => Some(cbor::CBOR_MEDIA_TYPE),
        "application/apply-patch+yaml" => Some("application/apply-patch+cbor"),
        _ => None,
    }
}

fn headers_set_content_type(headers: &mut HeaderMap, content_type: &'static str) {
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
}

impl TryFrom<Config> for Client {
    type Error = ConfigError;
    fn try_from(c: Config) -> Result<Self, ConfigError> {
        Self::try_from_config(c)
    }
}

fn is_idempotent(m: &Method) -> bool {
    matches!(
        *m,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::PUT | Method::DELETE
    )
}

/// `Retry-After` in seconds (the form the API server uses), capped at [`MAX_RETRY_AFTER`].
fn retry_after(h: &HeaderMap) -> Option<Duration> {
    let secs: u64 = h
        .get(header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(secs).min(MAX_RETRY_AFTER))
}
