//! Admission policies: ValidatingAdmissionPolicy and MutatingAdmissionPolicy
//! (`admissionregistration.k8s.io/v1`), evaluated with CEL as kube-apiserver's
//! `admission/plugin/policy/{validating,mutating,matching,generic}` do. The admission
//! chain calls [`mutate_with_reinvocation`] (first in the mutating stage) and [`validate`] (after schema
//! validation), each with the `admission.k8s.io/v1` AdmissionRequest it builds for the
//! webhooks.
//!
//! Policies and bindings are read from the store on every call (a cheap list by
//! group-resource) and compiled once per uid and resourceVersion (`compiled.rs`). The
//! MutatingAdmissionPolicy objects are read from
//! `admissionregistration.k8s.io/mutatingadmissionpolicies` and
//! `.../mutatingadmissionpolicybindings` in any version: the runtime's catalogue does not
//! serve them yet (k8s-openapi's `latest`, v1_37, has them in `v1`, GA in 1.36), so until
//! it does only objects put in the store directly are seen.
//!
//! Differences from kube-apiserver, besides those of the CEL layer (`expr.rs`: no type
//! checking, no cost budget, no `authorizer`): a RequestEntityTooLarge validation
//! `reason` answers 413 with the reason string `Invalid` (`crate::errors::Reason` has no
//! variant for it); the Status causes carry empty `reason`/`field` strings where
//! kube-apiserver omits them; `matchPolicy: Equivalent` only considers the other served
//! versions of the same group and resource (no renamed resources such as
//! `extensions/deployments`); the apply-configuration merge is structural
//! (`mutating.rs`).

mod compiled;
mod expr;
mod matching;
mod mutating;
mod params;
mod request;
mod spec;
#[cfg(test)]
mod tests;
mod validating;

use std::sync::Arc;

use serde_json::Value;

pub(crate) use compiled::compile_errors;

use self::{compiled::CompiledPolicy, expr::Bound, matching::MatchError, request::Request};
use crate::{
    engine::Engine,
    errors::{ApiError, ApiResult},
};

/// What the validating policies add to an admitted request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PolicyOutcome {
    /// `Warning` headers (bindings with the `Warn` action), in kube-apiserver's form
    /// `Validation failed for ValidatingAdmissionPolicy '<p>' with binding '<b>': <msg>`.
    pub(crate) warnings: Vec<String>,
    /// Audit annotations: `<policy>/<key>` from `auditAnnotations`, and
    /// `validation.policy.admission.k8s.io/validation_failure` (bindings with `Audit`).
    pub(crate) audit_annotations: Vec<(String, String)>,
}

/// Runs the ValidatingAdmissionPolicies on `request` (an `admission.k8s.io/v1`
/// AdmissionRequest as JSON: uid, kind, resource, subResource, requestKind,
/// requestResource, name, namespace, operation, userInfo, object, oldObject (null when
/// absent), dryRun, options). A denial is the error kube-apiserver answers (its message
/// `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>'
/// denied request: <message>`, its code from the validation's `reason`, 422 by default).
pub(crate) fn validate(engine: &Engine, request: &Value) -> ApiResult<PolicyOutcome> {
    validating::validate(engine, request)
}

/// Runs the MutatingAdmissionPolicies on `request.object`: the mutated object (`None`
/// when no policy changed it) and the invocations that asked for reinvocation
/// (`reinvocationPolicy: IfNeeded`), for the chain's reinvocation.
pub(crate) fn mutate_with_reinvocation(
    engine: &Engine,
    request: &Value,
) -> ApiResult<mutating::MutationOutcome> {
    mutating::mutate(engine, request)
}

/// The `namespaceObject` of a request (`cel.CreateNamespaceObject`: the namespace's
/// metadata without managed fields, spec and status), `None` for cluster-scoped
/// resources and Namespace objects; a namespace missing from the store is a 404. Read
/// once per request into `slot`.
fn namespace_object(
    engine: &Engine,
    req: &Request<'_>,
    slot: &mut Option<Option<Arc<Value>>>,
) -> ApiResult<Option<Arc<Value>>> {
    if let Some(cached) = slot {
        return Ok(cached.clone());
    }
    let Some(name) = req.namespace_for_object() else {
        *slot = Some(None);
        return Ok(None);
    };
    let ns = matching::namespace(engine, name)
        .ok_or_else(|| ApiError::not_found("", "namespaces", name))?;
    let mut ns = (*ns).clone();
    if let Some(m) = ns.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    let ns = Some(Arc::new(ns));
    *slot = Some(ns.clone());
    Ok(ns)
}

/// A namespace missing during matching is kube-apiserver's 404, not a policy error.
fn namespace_missing(e: &MatchError) -> ApiResult<()> {
    match e {
        MatchError::NamespaceNotFound(ns) => Err(ApiError::not_found("", "namespaces", ns)),
        MatchError::Selector(_) => Ok(()),
    }
}

/// The CEL variables of one evaluation, with the policy's `variables` computed in order.
fn bind(
    cp: &CompiledPolicy,
    req: &Request<'_>,
    object: Option<&Value>,
    params: Option<&Value>,
    namespace_object: Option<&Value>,
) -> Bound {
    let mut bound = Bound::new(
        object,
        req.old_object,
        &req.cel_request(),
        params,
        namespace_object,
    );
    for (name, e) in &cp.variables {
        let value = match e {
            Ok(c) => bound.eval(c),
            Err(err) => Err(err.clone()),
        };
        bound.add_variable(name, value);
    }
    bound
}

/// The policy's `matchConditions` (`webhook/matchconditions/matcher.go`): false as soon
/// as one is false; otherwise an error if any failed to evaluate (or is not a bool; the
/// messages aggregated as `utilerrors.NewAggregate` does: one as is, several as
/// `[a, b]`); otherwise true.
fn match_conditions(cp: &CompiledPolicy, bound: &Bound) -> Result<bool, String> {
    let mut errors = Vec::new();
    for (name, e) in &cp.match_conditions {
        let result = match e {
            Ok(c) => bound.eval(c),
            Err(err) => Err(err.clone()),
        };
        match result {
            Ok(kube_cel::cel::Value::Bool(true)) => {}
            Ok(kube_cel::cel::Value::Bool(false)) => return Ok(false),
            Ok(other) => errors.push(format!(
                "matchCondition '{name}' must evaluate to bool, got {}",
                expr::type_name(&other)
            )),
            Err(err) => errors.push(err.to_string()),
        }
    }
    match errors.len() {
        0 => Ok(true),
        1 => Err(errors.remove(0)),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}
