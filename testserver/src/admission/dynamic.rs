//! Dynamic admission: what kube-apiserver's admission chain runs after its built-in
//! plugins, in its order — mutating admission policies, mutating webhooks (with
//! reinvocation), then (in the registry) schema validation, then
//! ValidatingAdmissionPolicies, then validating webhooks. The endpoint handlers call
//! [`mutate`] and [`validate`] outside the store's lock, only when [`configured`] says
//! a webhook configuration or a policy binding exists.
//!
//! The policies ([`super::policy`]) take the `admission.k8s.io/v1` AdmissionRequest JSON
//! the webhooks get.

use serde_json::Value;

pub(crate) use super::request::Request;
use super::webhook;
use crate::{
    engine::{Engine, Warnings},
    errors::ApiResult,
    shared::Shared,
};

/// Whether writes take the admitted path: a webhook configuration or an admission policy
/// binding is stored.
pub(crate) fn configured(engine: &Engine) -> bool {
    webhook::configured(engine)
}

/// The MutatingAdmissionPolicies ([`super::policy::mutate_with_reinvocation`]): the
/// mutated object (`None` for no change) and whether a policy asked to be reinvoked
/// (`reinvocationPolicy: IfNeeded`).
pub(crate) fn run_mutating_policies(
    engine: &Engine,
    request: &Value,
) -> ApiResult<(Option<Value>, bool)> {
    let outcome = super::policy::mutate_with_reinvocation(engine, request)?;
    for invocation in &outcome.reinvocable {
        tracing::trace!(
            policy = %invocation.policy,
            binding = %invocation.binding,
            param = %invocation.param,
            "mutating admission policy asks to be reinvoked if needed"
        );
    }
    Ok((outcome.object, !outcome.reinvocable.is_empty()))
}

/// The ValidatingAdmissionPolicies ([`super::policy::validate`]): an error for a `Deny`,
/// else the warnings and audit annotations.
pub(crate) fn run_validating_policies(
    engine: &Engine,
    request: &Value,
) -> ApiResult<super::policy::PolicyOutcome> {
    super::policy::validate(engine, request)
}

/// The mutating stage: the mutating admission policies, then the mutating webhooks;
/// `request.object` becomes the mutated object.
pub(crate) async fn mutate(
    shared: &Shared,
    request: &mut Request,
    warnings: &Warnings,
) -> ApiResult<()> {
    let engine = &shared.engine;
    let mut reinvoke = false;
    if request.object.is_some() {
        let review = request.to_json(&uuid::Uuid::new_v4().to_string(), &request.rt);
        let (mutated, again) = run_mutating_policies(engine, &review)?;
        reinvoke = again;
        if let Some(mutated) = mutated {
            request.object = Some(mutated);
        }
    }
    let hooks = webhook::load(engine, true);
    if hooks.is_empty() {
        return Ok(());
    }
    let before = reinvoke.then(|| request.object.clone());
    webhook::dispatch::mutate(shared, &hooks, request, warnings).await?;
    // Reinvocation (kube-apiserver's `reinvocationPolicy: IfNeeded`): the webhooks
    // changed what the policies mutated, so the policies run once more.
    if let Some(before) = before
        && before != request.object
    {
        let review = request.to_json(&uuid::Uuid::new_v4().to_string(), &request.rt);
        if let (Some(mutated), _) = run_mutating_policies(engine, &review)? {
            request.object = Some(mutated);
        }
    }
    Ok(())
}

/// The validating stage: the ValidatingAdmissionPolicies, then the validating webhooks.
pub(crate) async fn validate(
    shared: &Shared,
    request: &Request,
    warnings: &Warnings,
) -> ApiResult<()> {
    let engine = &shared.engine;
    let review = request.to_json(&uuid::Uuid::new_v4().to_string(), &request.rt);
    let outcome = run_validating_policies(engine, &review)?;
    for w in outcome.warnings {
        warnings.add(w);
    }
    request
        .audit_annotations
        .lock()
        .extend(outcome.audit_annotations);
    let hooks = webhook::load(engine, false);
    if hooks.is_empty() {
        return Ok(());
    }
    webhook::dispatch::validate(shared, &hooks, request, warnings).await
}
