//! REST client metrics (client-go `tools/metrics`, registered by component-base as the
//! `rest_client_*` series).

use std::time::Duration;

/// What the client records per request (client-go's `RequestLatency`, `RequestResult`,
/// `RateLimiterLatency` and `RequestRetry` hooks in one trait). `verb` is the HTTP method,
/// `host` the server's authority (empty for an in-process transport).
pub trait RestClientMetrics: Send + Sync {
    /// `rest_client_requests_total{code, method, host}` and
    /// `rest_client_request_duration_seconds{verb, host}`: one answered request (each
    /// attempt of a retried one), `code` its HTTP status.
    fn request(&self, verb: &str, host: &str, code: u16, latency: Duration);
    /// `rest_client_rate_limiter_duration_seconds{verb, host}`: the wait for the
    /// client-side rate limiter.
    fn rate_limiter_wait(&self, verb: &str, host: &str, wait: Duration);
    /// `rest_client_request_retries_total{code, verb, host}`: a request retried after
    /// `code`.
    fn retry(&self, verb: &str, host: &str, code: u16);
}
