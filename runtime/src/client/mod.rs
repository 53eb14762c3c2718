//! The REST client (client-go's `rest` and typed clients).
//!
//! The wire is abstracted by [`Transport`]: an `http::Request<Vec<u8>>` goes in, an
//! `http::Response<Body>` with a streaming body comes out. The reqwest transport talks to a
//! real API server; the test server's in-process transport stands in for fake clientsets.
//!
//! Still to come (issue 4): `Config`, `Client`, `ResourceClient<K>`, `DynamicClient`, the
//! typed API `Error` and `retry_on_conflict`.

mod transport;

pub use transport::{Body, BoxFuture, Transport, TransportError};
