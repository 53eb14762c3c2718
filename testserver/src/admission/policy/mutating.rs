//! MutatingAdmissionPolicy (kube-apiserver `admission/plugin/policy/mutating/`,
//! `dispatcher.go` and `patch/`): for every policy, binding and param that select the
//! request (the same matching and params as the validating policies) and whose
//! `matchConditions` hold, the mutations run in order on the object, each seeing the
//! previous one's result.
//!
//! * `ApplyConfiguration`: the expression builds an object
//!   (`Object{metadata: Object.metadata{labels: {...}}}`), merged into the object.
//!   kube-apiserver merges with server-side apply's structured merge (lists merged by
//!   key where the schema says `listType: map`/`set`); here the merge is structural:
//!   maps merge recursively, every list and scalar is replaced, a `null` removes the
//!   field.
//! * `JSONPatch`: the expression builds a list of `JSONPatch{op, path, from, value}`,
//!   applied with the `json-patch` crate; a failed `test` operation leaves the object as
//!   it was (`patch/json_patch.go`).
//!
//! Errors (match conditions or mutations that fail) are handled per `failurePolicy`; the
//! first one not ignored denies the request with `policy '<p>' with binding '<b>' denied
//! request: <error>` (403, reason `Invalid`, as `generic/policy_dispatcher.go` builds it).
//! The object is not defaulted after a mutation (kube-apiserver runs the type's
//! defaulting).

use serde_json::Value;

use super::{
    bind,
    compiled::{self, CompiledMutation},
    expr::{self, Bound, CelError},
    match_conditions, matching, params,
    request::Request,
};
use crate::{
    engine::Engine,
    errors::{ApiError, ApiResult, Cause, Reason},
};

/// One invocation of a policy with `reinvocationPolicy: IfNeeded` (policy, binding, and
/// param `namespace/name` or empty), for the caller's reinvocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invocation {
    /// The policy's name.
    pub(crate) policy: String,
    /// The binding's name.
    pub(crate) binding: String,
    /// The param's `namespace/name` (`""` without params).
    pub(crate) param: String,
}

/// What the mutating policies did.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MutationOutcome {
    /// The mutated object (`None` when no policy changed it).
    pub(crate) object: Option<Value>,
    /// The invocations whose policy asks to be reinvoked (`reinvocationPolicy:
    /// IfNeeded`): kube-apiserver runs them again once if a later plugin (a mutating
    /// webhook) changes the object.
    pub(crate) reinvocable: Vec<Invocation>,
}

/// A policy error waiting for the end of the dispatch (`generic.PolicyError`).
struct PolicyError {
    policy: String,
    binding: Option<String>,
    message: String,
}

/// Runs the MutatingAdmissionPolicies on the request's object.
pub(crate) fn mutate(engine: &Engine, raw: &Value) -> ApiResult<MutationOutcome> {
    let hooks = compiled::load(
        engine,
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
    );
    let mut outcome = MutationOutcome::default();
    if hooks.is_empty() {
        return Ok(outcome);
    }
    let req = Request::parse(raw)?;
    // No object to patch (a DELETE): nothing to do.
    let Some(original) = req.object else {
        return Ok(outcome);
    };
    let mut object = original.clone();
    let mut errors: Vec<PolicyError> = Vec::new();
    // Fetched when a binding is first evaluated: a request no policy selects never
    // needs its namespace.
    let mut ns_slot = None;
    for (cp, bindings) in &hooks {
        let policy = &cp.policy;
        let name = &policy.metadata.name;
        let ignore = policy.spec.ignores_errors();
        let fail = |binding: Option<&str>, message: String, errors: &mut Vec<PolicyError>| {
            if ignore {
                tracing::debug!(policy = %name, error = %message, "mutating admission policy: error ignored");
            } else {
                errors.push(PolicyError {
                    policy: name.clone(),
                    binding: binding.map(str::to_owned),
                    message,
                });
            }
        };
        let Some(constraints) = &policy.spec.match_constraints else {
            fail(
                None,
                "failed to configure policy: policy contained no match constraints, a required field".into(),
                &mut errors,
            );
            continue;
        };
        match matching::matches(engine, &req, constraints) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                super::namespace_missing(&e)?;
                fail(
                    None,
                    format!("failed to configure policy: {e}"),
                    &mut errors,
                );
                continue;
            }
        }
        for binding in bindings {
            let bname = binding.metadata.name.as_str();
            if let Some(mr) = &binding.spec.match_resources {
                match matching::matches(engine, &req, mr) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        super::namespace_missing(&e)?;
                        fail(
                            Some(bname),
                            format!("failed to configure binding: {e}"),
                            &mut errors,
                        );
                        continue;
                    }
                }
            }
            let params = match params::collect(
                engine,
                policy.spec.param_kind.as_ref(),
                binding.spec.param_ref.as_ref(),
                req.namespace,
            ) {
                Ok(p) => p,
                Err(e) => {
                    fail(
                        Some(bname),
                        format!("failed to configure binding: {e}"),
                        &mut errors,
                    );
                    continue;
                }
            };
            let ns_object = super::namespace_object(engine, &req, &mut ns_slot)?;
            for param in params {
                let mut bound = bind(
                    cp,
                    &req,
                    Some(&object),
                    param.as_deref(),
                    ns_object.as_deref(),
                );
                match match_conditions(cp, &bound) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        fail(Some(bname), e, &mut errors);
                        continue;
                    }
                }
                for mutation in &cp.mutations {
                    match apply(mutation, &bound, &object) {
                        Ok(Some(next)) => {
                            bound.set_object(&next);
                            object = next;
                        }
                        Ok(None) => {}
                        Err(e) => fail(Some(bname), e, &mut errors),
                    }
                }
                if policy.spec.reinvocation_policy.as_deref() == Some("IfNeeded") {
                    let param = param
                        .as_deref()
                        .map(|p| format!("{}/{}", crate::meta::namespace(p), crate::meta::name(p)))
                        .unwrap_or_default();
                    outcome.reinvocable.push(Invocation {
                        policy: name.clone(),
                        binding: bname.to_owned(),
                        param,
                    });
                }
            }
        }
    }
    if let Some(first) = errors.first() {
        return Err(denial_error(&req, &errors, first));
    }
    if object != *original {
        outcome.object = Some(object);
    }
    Ok(outcome)
}

/// One mutation on `object`: the new object, or `None` when it is unchanged.
fn apply(
    mutation: &CompiledMutation,
    bound: &Bound,
    object: &Value,
) -> Result<Option<Value>, String> {
    let run = |e: &compiled::Expr| -> Result<Value, String> {
        let c = e.as_ref().map_err(ToString::to_string)?;
        let v = bound.eval(c).map_err(|e| e.to_string())?;
        expr::to_json(&v).map_err(|e: CelError| e.to_string())
    };
    let next = match mutation {
        CompiledMutation::Invalid(why) => return Err(why.clone()),
        CompiledMutation::Apply(e) => {
            let patch = run(e)?;
            if !patch.is_object() {
                return Err("ApplyConfiguration expression must evaluate to an Object".into());
            }
            let mut next = object.clone();
            merge(&mut next, patch);
            next
        }
        CompiledMutation::JsonPatch(e) => {
            let ops = run(e)?;
            let Value::Array(list) = ops else {
                return Err(
                    "type mismatch: JSONPatchType.expression should evaluate to array".into(),
                );
            };
            let ops: Vec<Value> = list
                .into_iter()
                .map(|mut op| {
                    // An empty `from` is absent (`if len(op.From) > 0`).
                    if let Some(m) = op.as_object_mut()
                        && m.get("from").and_then(Value::as_str) == Some("")
                    {
                        m.remove("from");
                    }
                    op
                })
                .collect();
            let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops)).map_err(|e| {
                format!("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: {e}")
            })?;
            let mut next = object.clone();
            match json_patch::patch(&mut next, &patch) {
                Ok(()) => next,
                Err(e) if matches!(e.kind, json_patch::PatchErrorKind::TestFailed) => {
                    return Ok(None);
                }
                Err(e) => return Err(format!("JSONPath: {e}")),
            }
        }
    };
    Ok((next != *object).then_some(next))
}

/// The structural merge of an apply configuration into an object (see the module docs).
pub(crate) fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(&k);
                } else if let Some(existing) = t.get_mut(&k) {
                    merge(existing, v);
                } else {
                    t.insert(k, v);
                }
            }
        }
        (t, p) => *t = p,
    }
}

/// The Status of a refused mutation (`generic/policy_dispatcher.go`): `NewForbidden`'s
/// 403 and details, the first error's message and reason `Invalid`, every error a cause.
fn denial_error(req: &Request<'_>, errors: &[PolicyError], first: &PolicyError) -> ApiError {
    let text = |e: &PolicyError| match &e.binding {
        Some(b) => format!(
            "policy '{}' with binding '{b}' denied request: {}",
            e.policy, e.message
        ),
        None => format!("policy \"{}\" denied request: {}", e.policy, e.message),
    };
    let mut err = ApiError::new(403, Reason::Invalid, text(first));
    err.details.group = Some(req.group.to_owned());
    err.details.kind = Some(req.resource.to_owned());
    err.details.name = Some(req.object_name());
    err.details.causes = errors
        .iter()
        .map(|e| Cause {
            reason: String::new(),
            message: text(e),
            field: String::new(),
        })
        .collect();
    err
}
