//! The broadcasters' structured logging of events (client-go's `StartStructuredLogging`):
//! [`log_at!`], a `tracing` event at a level chosen at run time (tracing's macros want a
//! constant one), and [`object_path`], how the object an event is about is logged.

use k8s_openapi::api::core::v1::ObjectReference;

/// `tracing::event!` at the run-time `tracing::Level` given first, with the fields and
/// message that follow.
macro_rules! log_at {
    ($level:expr, $($event:tt)+) => {
        match $level {
            tracing::Level::ERROR => tracing::event!(tracing::Level::ERROR, $($event)+),
            tracing::Level::WARN => tracing::event!(tracing::Level::WARN, $($event)+),
            tracing::Level::INFO => tracing::event!(tracing::Level::INFO, $($event)+),
            tracing::Level::DEBUG => tracing::event!(tracing::Level::DEBUG, $($event)+),
            _ => tracing::event!(tracing::Level::TRACE, $($event)+),
        }
    };
}

pub(crate) use log_at;

/// `namespace/name` of the object `r` refers to, or its name alone when it has no namespace.
pub(crate) fn object_path(r: &ObjectReference) -> String {
    match (r.namespace.as_deref(), r.name.as_deref()) {
        (Some(ns), Some(name)) if !ns.is_empty() => format!("{ns}/{name}"),
        (_, name) => name.unwrap_or_default().to_owned(),
    }
}
