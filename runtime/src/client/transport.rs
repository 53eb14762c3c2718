//! The seam between the client and the wire.

use std::{fmt, future::Future, pin::Pin};

use bytes::Bytes;
use futures::{Stream, StreamExt, stream::BoxStream};

/// A boxed, sendable future, as returned by [`Transport::send`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An error below the HTTP layer: the connection failed, timed out or broke mid-body.
///
/// API errors (a response with a `Status` body) are not transport errors; they arrive as
/// ordinary responses with a non-2xx status code.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The server could not be reached (refused, DNS, TLS handshake).
    #[error("connect: {0}")]
    Connect(String),
    /// The request or response timed out.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The response body broke off or could not be read.
    #[error("body: {0}")]
    Body(String),
    /// Anything else the transport reports.
    #[error("{0}")]
    Other(String),
}

/// The most [`Body::collect`] reserves up front from a size hint.
const MAX_RESERVE: usize = 256 << 20;

/// A response body: a stream of byte chunks, so watches can be decoded as they arrive.
pub struct Body {
    inner: BoxStream<'static, Result<Bytes, TransportError>>,
    /// The expected length (`Content-Length`), so [`Body::collect`] allocates once.
    size_hint: Option<usize>,
}

impl Body {
    /// A body that is already complete.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        let chunks = if bytes.is_empty() {
            Vec::new()
        } else {
            vec![Ok(bytes)]
        };
        Self {
            inner: futures::stream::iter(chunks).boxed(),
            size_hint: None,
        }
    }

    /// An empty body.
    pub fn empty() -> Self {
        Self::from_bytes(Bytes::new())
    }

    /// A body produced chunk by chunk.
    pub fn from_stream(
        stream: impl Stream<Item = Result<Bytes, TransportError>> + Send + 'static,
    ) -> Self {
        Self {
            inner: stream.boxed(),
            size_hint: None,
        }
    }

    /// Declares the body's expected length (e.g. from `Content-Length`): collecting a
    /// body of many chunks then allocates its buffer once instead of growing it.
    #[must_use]
    pub fn with_size_hint(mut self, len: Option<usize>) -> Self {
        self.size_hint = len;
        self
    }

    /// Reads the whole body into memory.
    pub async fn collect(mut self) -> Result<Bytes, TransportError> {
        let mut first: Option<Bytes> = None;
        let mut rest: Vec<u8> = Vec::new();
        while let Some(chunk) = self.inner.next().await {
            let chunk = chunk?;
            match &first {
                None if rest.is_empty() => first = Some(chunk),
                _ => {
                    if let Some(f) = first.take() {
                        // Cap the hint: a lying Content-Length must not reserve gigabytes.
                        let hint = self.size_hint.unwrap_or(0).min(MAX_RESERVE);
                        rest.reserve(hint.max(f.len() + chunk.len()));
                        rest.extend_from_slice(&f);
                    }
                    rest.extend_from_slice(&chunk);
                }
            }
        }
        Ok(match first {
            Some(f) => f,
            None => Bytes::from(rest),
        })
    }

    /// The body as a stream of chunks.
    pub fn into_stream(self) -> BoxStream<'static, Result<Bytes, TransportError>> {
        self.inner
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Body { .. }")
    }
}

impl Stream for Body {
    type Item = Result<Bytes, TransportError>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

/// Sends one HTTP request and returns the response with a streaming body.
///
/// Implemented by the reqwest transport (a real API server) and by the test server's
/// in-process front (fake clientsets). Implementations must not retry, throttle or
/// authenticate: the `Client` above does that, the same way for every transport.
///
/// Requests from the `Client` carry the path-and-query URI kube-core builds (for example
/// `/api/v1/namespaces/default/pods?limit=5`), an `Accept` header, and `Authorization` when
/// credentials are configured; a transport for a real server resolves the path against its
/// base URL (an absolute URI is used as is).
pub trait Transport: Send + Sync + 'static {
    /// Sends `request`; a non-2xx status is a successful send.
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn collect_joins_chunks_in_order() {
        let chunks = vec![Ok(Bytes::from_static(b"ab")), Ok(Bytes::from_static(b"c"))];
        let body = Body::from_stream(futures::stream::iter(chunks));
        assert_eq!(body.collect().await.unwrap(), Bytes::from_static(b"abc"));
    }

    #[tokio::test]
    async fn collect_reports_a_broken_body() {
        let chunks = vec![
            Ok(Bytes::from_static(b"ab")),
            Err(TransportError::Body("reset".into())),
        ];
        let body = Body::from_stream(futures::stream::iter(chunks));
        assert!(matches!(body.collect().await, Err(TransportError::Body(_))));
    }

    #[tokio::test]
    async fn empty_body_collects_to_nothing() {
        assert!(Body::empty().collect().await.unwrap().is_empty());
    }
}
