//! Dynamic admission: what kube-apiserver's admission chain runs after its built-in
//! plugins, in its order — mutating admission policies, mutating webhooks (with
//! reinvocation), then (in the registry) schema validation, then
//! ValidatingAdmissionPolicies, then validating webhooks. The endpoint handlers call
//! [`mutate`] and [`validate`] outside the store's lock, only when [`configured`] says
//! a webhook configuration or a policy binding exists.
//!
//! The policies (`crate::admission::policy`, written separately) take the
//! `admission.k8s.io/v1` AdmissionRequest JSON the webhooks get; until they are wired,
//! [`run_mutating_policies`] and [`run_validating_policies`] admit everything.

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

/// What the validating admission policies answered.
#[derive(Debug, Clone, Default)]
pub(crate) struct PolicyOutcome {
    /// `Warn` actions' messages.
    pub(crate) warnings: Vec<String>,
    /// `Audit` actions' annotations.
    pub(crate) audit_annotations: Vec<(String, String)>,
}

/// The MutatingAdmissionPolicies: the mutated object, or `None` for no change. A
/// pass-through until `crate::admission::policy` is wired in.
pub(crate) fn run_mutating_policies(engine: &Engine, request: &Value) -> ApiResult<Option<Value>> {
    // policy: crate::admission::policy::mutate(engine, &request)
    let _ = (engine, request);
    Ok(None)
}

/// The ValidatingAdmissionPolicies: an error for a `Deny`, else the warnings and audit
/// annotations. A pass-through until `crate::admission::policy` is wired in.
pub(crate) fn run_validating_policies(
    engine: &Engine,
    request: &Value,
) -> ApiResult<PolicyOutcome> {
    // policy: crate::admission::policy::validate(engine, &request)
    let _ = (engine, request);
    Ok(PolicyOutcome::default())
}

/// The mutating stage: the mutating admission policies, then the mutating webhooks;
/// `request.object` becomes the mutated object.
pub(crate) async fn mutate(
    shared: &Shared,
    request: &mut Request,
    warnings: &Warnings,
) -> ApiResult<()> {
    let engine = &shared.engine;
    if request.object.is_some() {
        let review = request.to_json(&uuid::Uuid::new_v4().to_string(), &request.rt);
        if let Some(mutated) = run_mutating_policies(engine, &review)? {
            request.object = Some(mutated);
        }
    }
    let hooks = webhook::load(engine, true);
    if hooks.is_empty() {
        return Ok(());
    }
    webhook::dispatch::mutate(shared, &hooks, request, warnings).await
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
