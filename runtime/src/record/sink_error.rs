//! [`SinkError`]: why a sink could not store an event, which decides whether a broadcaster
//! retries the write.

use crate::client::Error as ClientError;

/// A boxed error from a sink.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a sink could not store an event; decides whether the broadcaster retries.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The event to patch does not exist (any more): the broadcaster creates it instead.
    #[error("event not found")]
    NotFound,
    /// An event of that name already exists: not retried.
    #[error("event already exists")]
    AlreadyExists,
    /// The server rejected the event (invalid, forbidden, namespace terminating ...): not
    /// retried, the same request would be rejected again.
    #[error("event rejected: {0}")]
    Rejected(#[source] BoxError),
    /// The server could not be reached or was temporarily unable to answer: retried.
    #[error("event sink unavailable: {0}")]
    Unavailable(#[source] BoxError),
}

impl SinkError {
    /// Whether writing the event again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, SinkError::Unavailable(_))
    }
}

impl From<ClientError> for SinkError {
    /// API answers are final except 429 and 5xx; transport, decode and credential failures
    /// are transient; a request that cannot be built or encoded is final.
    fn from(e: ClientError) -> Self {
        if e.is_not_found() {
            return SinkError::NotFound;
        }
        if e.is_already_exists() {
            return SinkError::AlreadyExists;
        }
        match &e {
            ClientError::Api(status) if status.code == 429 || status.code >= 500 => {
                SinkError::Unavailable(Box::new(e))
            }
            ClientError::Transport(_)
            | ClientError::Decode(_)
            | ClientError::DecodeCbor(_)
            | ClientError::Auth(_) => SinkError::Unavailable(Box::new(e)),
            _ => SinkError::Rejected(Box::new(e)),
        }
    }
}
