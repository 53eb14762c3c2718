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

/// A response body: a stream of byte chunks, so watches can be decoded as they arrive.
pub struct Body {
    inner: BoxStream<'static, Result<Bytes, TransportError>>,
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
        }
    }

    /// Reads the whole body into memory. A body of one chunk is returned as it is; the
    /// chunks of a longer one (a chunked list response) are kept until the end and copied
    /// once into a buffer of the exact size, rather than into a buffer grown as they come.
    pub async fn collect(mut self) -> Result<Bytes, TransportError> {
        let mut chunks: Vec<Bytes> = Vec::new();
        let mut len = 0;
        while let Some(chunk) = self.inner.next().await {
            let chunk = chunk?;
            if !chunk.is_empty() {
                len += chunk.len();
                chunks.push(chunk);
            }
        }
        if chunks.len() <= 1 {
            return Ok(chunks.pop().unwrap_or_default());
        }
        let mut whole = Vec::with_capacity(len);
        for chunk in &chunks {
            whole.extend_from_slice(chunk);
        }
        Ok(Bytes::from(whole))
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
/// Implemented by [`HttpTransport`](super::HttpTransport) (a real API server) and by the test server's
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
    async fn collect_returns_a_lone_chunk_without_copying_it() {
        let chunk = Bytes::from(vec![7u8; 64]);
        let chunks = vec![Ok(Bytes::new()), Ok(chunk.clone()), Ok(Bytes::new())];
        let body = Body::from_stream(futures::stream::iter(chunks));
        let collected = body.collect().await.unwrap();
        assert_eq!(
            collected.as_ptr(),
            chunk.as_ptr(),
            "the same buffer, not a copy"
        );
    }

    #[tokio::test]
    async fn collect_joins_many_chunks_into_one_buffer_of_the_exact_size() {
        let chunks: Vec<_> = (0..100u8).map(|i| Ok(Bytes::from(vec![i; 10]))).collect();
        let body = Body::from_stream(futures::stream::iter(chunks));
        let collected = body.collect().await.unwrap();
        assert_eq!(collected.len(), 1000);
        assert!((0..100u8).all(|i| collected[usize::from(i) * 10..][..10] == [i; 10]));
    }

    #[tokio::test]
    async fn empty_body_collects_to_nothing() {
        assert!(Body::empty().collect().await.unwrap().is_empty());
    }
}
