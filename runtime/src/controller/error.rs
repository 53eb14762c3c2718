//! The controller's errors, and [`TerminalError`], the reconcile error it never retries.

use std::error::Error as StdError;

use crate::cache::InformerError;

/// A reconcile error that retrying cannot fix (controller-runtime's
/// `reconcile.TerminalError`): the controller logs it, counts it
/// (`controller_runtime_terminal_reconcile_errors_total`), records a Warning event on the
/// object when it has a recorder, and does not requeue the request. The next change to the
/// object reconciles it again.
///
/// Return it as the reconcile error, or anywhere in the error's `source()` chain (an enum
/// variant with `#[source] TerminalError` or `#[from] TerminalError` — not
/// `#[error(transparent)]`, which hides the wrapper itself from the chain).
#[derive(Debug, thiserror::Error)]
#[error("terminal error: {0}")]
pub struct TerminalError(#[source] Box<dyn StdError + Send + Sync>);

impl TerminalError {
    /// Wraps `error` (anything that converts into a boxed error, a `String` too).
    pub fn new(error: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self(error.into())
    }
}

/// Whether `error`, or any error in its `source()` chain, is a [`TerminalError`].
pub fn is_terminal(error: &(dyn StdError + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if error.is::<TerminalError>() {
            return true;
        }
        next = error.source();
    }
    false
}

/// A controller could not run.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// Stopped before every cache it uses had synced; no reconcile ran.
    #[error("stopped before the caches of controller {0:?} synced")]
    CacheSyncStopped(String),
    /// An informer refused the controller's event handler (it was stopped).
    #[error("controller {controller:?}: {source}")]
    Informer {
        /// The controller's name.
        controller: String,
        /// What the informer said.
        #[source]
        source: InformerError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum AppError {
        #[error("bad spec")]
        BadSpec(#[source] TerminalError),
        #[error("io")]
        Io(#[from] std::io::Error),
    }

    #[test]
    fn a_terminal_error_is_found_anywhere_in_the_chain() {
        assert!(is_terminal(&TerminalError::new(
            "replicas must be positive"
        )));
        assert!(is_terminal(&AppError::BadSpec(TerminalError::new("x"))));
        assert!(!is_terminal(&AppError::Io(std::io::Error::other("x"))));
    }
}
