//! The mutating admission stage (`MutatingAdmissionWebhook`,
//! `MutatingAdmissionPolicy` and the built-in mutating plugins in kube-apiserver): may
//! change the object of a write before it is validated. The one built-in plugin modelled
//! so far is `DefaultTolerationSeconds` (`default_toleration_seconds.rs`); webhooks and
//! policies come later.

use serde_json::Value;

use super::Attributes;
use crate::errors::ApiResult;

/// Runs the mutating plugins on a write's object (`None` when the handler has no object
/// before the registry: a patch, a delete).
pub(crate) fn admit(attributes: &Attributes<'_>, object: Option<&mut Value>) -> ApiResult<()> {
    super::default_toleration_seconds::admit(attributes, object);
    tracing::trace!(
        verb = %attributes.request.verb,
        resource = %attributes.request.resource,
        user = %attributes.user.name,
        dry_run = attributes.dry_run,
        "mutating admission"
    );
    Ok(())
}
