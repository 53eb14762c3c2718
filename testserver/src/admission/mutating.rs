//! The mutating admission stage (`MutatingAdmissionWebhook`,
//! `MutatingAdmissionPolicy` and the built-in mutating plugins in kube-apiserver): may
//! change the object of a write before it is validated. A pass-through for now.

use serde_json::Value;

use super::Attributes;
use crate::errors::ApiResult;

/// Runs the mutating plugins on a write's object (`None` when the handler has no object
/// before the registry: a patch, a delete). Admits everything unchanged.
pub(crate) fn admit(attributes: &Attributes<'_>, object: Option<&mut Value>) -> ApiResult<()> {
    tracing::trace!(
        verb = %attributes.request.verb,
        resource = %attributes.request.resource,
        user = %attributes.user.name,
        dry_run = attributes.dry_run,
        has_object = object.is_some(),
        "mutating admission: no plugins"
    );
    Ok(())
}
