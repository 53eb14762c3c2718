//! The validating admission stage (`ValidatingAdmissionWebhook`,
//! `ValidatingAdmissionPolicy` and the built-in validating plugins in kube-apiserver):
//! may refuse a write after mutation, never change it. A pass-through for now.

use serde_json::Value;

use super::Attributes;
use crate::errors::ApiResult;

/// Runs the validating plugins on a write's object (`None` when the handler has no
/// object before the registry: a patch, a delete). Admits everything.
pub(crate) fn validate(attributes: &Attributes<'_>, object: Option<&Value>) -> ApiResult<()> {
    tracing::trace!(
        verb = %attributes.request.verb,
        resource = %attributes.request.resource,
        user = %attributes.user.name,
        dry_run = attributes.dry_run,
        has_object = object.is_some(),
        "validating admission: no plugins"
    );
    Ok(())
}
