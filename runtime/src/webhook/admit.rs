//! [`Admit`]: the object-safe form every admission route takes (a validator, a defaulter or
//! a raw handler behind one trait object).

use futures::future::BoxFuture;
use kube_core::admission::AdmissionResponse;

use super::review::Decoded;

/// Answers one decoded admission request.
pub(crate) trait Admit: Send + Sync + 'static {
    fn admit(&self, decoded: Decoded) -> BoxFuture<'_, AdmissionResponse>;
}
