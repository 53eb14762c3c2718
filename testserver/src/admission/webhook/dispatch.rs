//! Calling the hooks that match a request: the mutating ones in order, each seeing the
//! previous one's changes, with `reinvocationPolicy: IfNeeded` (`mutating/dispatcher.go`);
//! the validating ones all at once (`validating/dispatcher.go`). A call that fails is
//! handled per `failurePolicy`; a denial ends the request with the hook's status.

use std::{collections::BTreeSet, sync::Arc};

use serde_json::Value;

use super::{Hook, matching, review};
use crate::{
    admission::request::{Request, convert},
    engine::Warnings,
    errors::{ApiError, ApiResult, Reason},
    registry::ResourceType,
    shared::Shared,
    webhook::CallError,
};

/// Why a call did not admit the request.
#[derive(Debug, thiserror::Error)]
enum Failure {
    /// kube-apiserver's `ErrCallingWebhook`: handled per `failurePolicy`.
    #[error("failed calling webhook {hook:?}: {reason}")]
    Calling {
        /// The hook's name.
        hook: String,
        /// What went wrong.
        reason: String,
    },
    /// A denial, or an error no `failurePolicy` forgives (a dry run to a hook with side
    /// effects).
    #[error("{0}")]
    Refused(ApiError),
}

/// kube-apiserver's `errors.ToStatusErr`: the hook's status, worded as a denial by it.
fn denial(hook: &str, status: Option<&Value>) -> ApiError {
    let field = |k: &str| {
        status
            .and_then(|s| s.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let code = status
        .and_then(|s| s.get("code"))
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(403);
    let (message, reason) = (field("message"), field("reason"));
    let denied = format!("admission webhook {hook:?} denied the request");
    let message = if !message.is_empty() {
        format!("{denied}: {message}")
    } else if !reason.is_empty() {
        format!("{denied}: {reason}")
    } else {
        format!("{denied} without explanation")
    };
    ApiError::new(code, Reason::for_code(code), message)
}

/// One call of a hook with the request seen as `as_rt`.
async fn call(
    shared: &Shared,
    hook: &Hook,
    request: &Request,
    as_rt: &ResourceType,
    mutating: bool,
) -> Result<review::Answer, Failure> {
    let calling = |reason: String| Failure::Calling {
        hook: hook.name.clone(),
        reason,
    };
    if request.dry_run {
        match hook.side_effects.as_deref() {
            None => return Err(calling("Webhook SideEffects is nil".into())),
            Some("None" | "NoneOnDryRun") => {}
            Some(_) => {
                return Err(Failure::Refused(ApiError::bad_request(format!(
                    "admission webhook {:?} does not support dry run",
                    hook.name
                ))));
            }
        }
    }
    if !hook.review_versions.iter().any(|v| v == "v1") {
        return Err(calling(
            "could not create admission objects: webhook does not accept known AdmissionReview versions"
                .into(),
        ));
    }
    let client = hook
        .client
        .as_ref()
        .map_err(|err| calling(format!("could not get REST client: {err}")))?;
    let uid = uuid::Uuid::new_v4().to_string();
    let body = review::review(request.to_json(&uid, as_rt));
    tracing::debug!(
        hook = %hook.name,
        configuration = %hook.configuration,
        %uid,
        operation = request.operation.as_str(),
        "calling admission webhook"
    );
    let answer = crate::webhook::post_json(client, &shared.services, &body, hook.timeout)
        .await
        .map_err(|err: CallError| {
            tracing::debug!(hook = %hook.name, timed_out = err.timed_out, "webhook call failed");
            calling(format!("failed to call webhook: {err}"))
        })?;
    let answer = review::verify(&uid, mutating, &answer)
        .map_err(|err| calling(format!("received invalid webhook response: {err}")))?;
    request.audit_annotations.lock().extend(
        answer
            .audit_annotations
            .iter()
            .map(|(key, value)| (format!("{}/{key}", hook.name), value.clone())),
    );
    if !answer.allowed {
        return Err(Failure::Refused(denial(&hook.name, answer.status.as_ref())));
    }
    Ok(answer)
}

/// A failed call per `failurePolicy`: `Ignore` logs and goes on (`Ok`), `Fail` ends the
/// request with kube-apiserver's 500.
fn handle(hook: &Hook, failure: Failure) -> ApiResult<()> {
    match failure {
        Failure::Calling { .. } if hook.ignore_failures => {
            tracing::warn!(hook = %hook.name, err = %failure, "failed calling webhook, failing open");
            Ok(())
        }
        Failure::Calling { .. } => {
            tracing::warn!(hook = %hook.name, err = %failure, "failed calling webhook, failing closed");
            Err(ApiError::internal(format!(
                "Internal error occurred: {failure}"
            )))
        }
        Failure::Refused(err) => {
            tracing::info!(hook = %hook.name, %err, "rejected by webhook");
            Err(err)
        }
    }
}

/// Calls one mutating hook and applies its patch; whether the object changed.
async fn mutate_once(
    shared: &Shared,
    hook: &Hook,
    as_rt: &Arc<ResourceType>,
    request: &mut Request,
    warnings: &Warnings,
) -> ApiResult<bool> {
    let answer = match call(shared, hook, request, as_rt, true).await {
        Ok(answer) => answer,
        Err(failure) => return handle(hook, failure).map(|()| false),
    };
    for w in answer.warnings {
        warnings.add(w);
    }
    let Some(patch) = answer.patch else {
        return Ok(false);
    };
    if patch.as_array().is_some_and(Vec::is_empty) {
        return Ok(false);
    }
    let Some(object) = request.object.as_ref() else {
        return Err(ApiError::internal(format!(
            "Internal error occurred: admission webhook {:?} attempted to modify the object, which is not supported for this operation",
            hook.name
        )));
    };
    let patch: json_patch::Patch = match serde_json::from_value(patch) {
        Ok(p) => p,
        Err(err) => {
            return handle(
                hook,
                Failure::Calling {
                    hook: hook.name.clone(),
                    reason: format!("received undecodable patch in webhook response: {err}"),
                },
            )
            .map(|()| false);
        }
    };
    let mut patched = convert(object.clone(), &request.rt, as_rt, &request.subresource);
    json_patch::patch(&mut patched, &patch)
        .map_err(|err| ApiError::internal(format!("Internal error occurred: {err}")))?;
    let patched = convert(patched, as_rt, &request.rt, &request.subresource);
    let changed = Some(&patched) != request.object.as_ref();
    request.object = Some(patched);
    Ok(changed)
}

/// The mutating hooks in order; a hook with `reinvocationPolicy: IfNeeded` is called once
/// more when a later hook changed the object after it ran.
pub(crate) async fn mutate(
    shared: &Shared,
    hooks: &[Hook],
    request: &mut Request,
    warnings: &Warnings,
) -> ApiResult<()> {
    if matching::exempt(&request.rt) {
        return Ok(());
    }
    let engine = &shared.engine;
    let mut invoked: Vec<usize> = Vec::new();
    let mut reinvoke: BTreeSet<usize> = BTreeSet::new();
    for hook in hooks {
        let Some(as_rt) = matching::should_call(engine, hook, request)? else {
            continue;
        };
        if mutate_once(shared, hook, &as_rt, request, warnings).await? {
            reinvoke.extend(invoked.drain(..));
        }
        if hook.reinvoke_if_needed {
            invoked.push(hook.index);
        }
    }
    if reinvoke.is_empty() {
        return Ok(());
    }
    for hook in hooks.iter().filter(|h| reinvoke.contains(&h.index)) {
        let Some(as_rt) = matching::should_call(engine, hook, request)? else {
            continue;
        };
        tracing::debug!(hook = %hook.name, "reinvoking mutating webhook");
        mutate_once(shared, hook, &as_rt, request, warnings).await?;
    }
    Ok(())
}

/// The validating hooks, called at once; the first error (in hook order) ends the request.
pub(crate) async fn validate(
    shared: &Shared,
    hooks: &[Hook],
    request: &Request,
    warnings: &Warnings,
) -> ApiResult<()> {
    if matching::exempt(&request.rt) {
        return Ok(());
    }
    let mut calls = Vec::new();
    for hook in hooks {
        if let Some(as_rt) = matching::should_call(&shared.engine, hook, request)? {
            calls.push(async move { (hook, call(shared, hook, request, &as_rt, false).await) });
        }
    }
    let mut first = None;
    for (hook, outcome) in futures::future::join_all(calls).await {
        let result = match outcome {
            Ok(answer) => {
                for w in answer.warnings {
                    warnings.add(w);
                }
                Ok(())
            }
            Err(failure) => handle(hook, failure),
        };
        if let Err(err) = result {
            first.get_or_insert(err);
        }
    }
    match first {
        Some(err) => Err(err),
        None => Ok(()),
    }
}
