//! Errors of the record module.

/// Why an event could not be recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The event type is neither `Normal` nor `Warning`.
    #[error("unsupported event type {0:?}: the types are Normal and Warning")]
    InvalidEventType(String),
    /// The object an event is about has no name, so no event name can be made for it.
    #[error("the involved object has no name")]
    MissingName,
}
