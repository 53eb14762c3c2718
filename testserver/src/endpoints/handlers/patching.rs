//! The registry side of a PATCH of any type: the patch applied to the current object inside
//! the registry's update (or server-side apply), shared by the plain path (`patch`) and the
//! admitted one (`admitted`, as a dry run first).

use std::sync::Arc;

use serde_json::Value;

use crate::{
    engine::{Engine, Target, WriteOptions},
    errors::{ApiError, ApiResult},
    patch::{PatchType, apply_json_or_merge},
};

/// Applies a PATCH of any type.
pub(super) fn apply_patch(
    engine: &Engine,
    target: &Target,
    patch_type: PatchType,
    body: &[u8],
    opts: &WriteOptions,
) -> ApiResult<(u16, Arc<Value>)> {
    let rt = &target.rt;
    match patch_type {
        PatchType::Apply => crate::apply::apply(engine, target, body, opts),
        PatchType::Strategic if !rt.builtin => Err(strategic_unsupported()),
        _ => {
            let sub = target.subresource.clone();
            let rt2 = rt.clone();
            let obj = engine.replace_with(target, opts, move |old| {
                let base: Value = if sub.as_deref() == Some("scale") {
                    (*crate::scale::to_scale(&rt2, old)?).clone()
                } else {
                    old.clone()
                };
                let patched = apply_json_or_merge(&base, patch_type, body)?;
                if !patched.is_object() {
                    return Err(ApiError::bad_request("the patch produced a non-object"));
                }
                let name = crate::meta::name(&patched);
                if sub.is_none() && name != crate::meta::name(old) {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({name}) does not match the name on the URL ({})",
                        crate::meta::name(old)
                    )));
                }
                if sub.is_none() {
                    let causes = crate::meta::validate_labels(&patched);
                    if !causes.is_empty() {
                        return Err(ApiError::invalid(
                            &rt2.group,
                            &rt2.kind,
                            crate::meta::name(old),
                            causes,
                        ));
                    }
                }
                let rv = crate::meta::resource_version(&patched).to_string();
                let rv = if rv == crate::meta::resource_version(old) {
                    String::new()
                } else {
                    rv
                };
                Ok(Some((patched, rv)))
            })?;
            Ok((200, obj))
        }
    }
}

/// The 415 of a strategic merge patch of a custom resource (kube-apiserver's patch
/// handler offers only the other types for them).
pub(super) fn strategic_unsupported() -> ApiError {
    ApiError::unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )
}
