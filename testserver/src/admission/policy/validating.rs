//! ValidatingAdmissionPolicy (kube-apiserver
//! `admission/plugin/policy/validating/dispatcher.go` and `validator.go`): for every
//! policy whose `matchConstraints` select the request, every binding whose
//! `matchResources` (if any) select it too, and every param of the binding, the
//! `matchConditions` decide whether the policy applies, then each validation gives a
//! decision (admit, deny, or an error handled per `failurePolicy`), acted on per the
//! binding's `validationActions`; `auditAnnotations` are published under
//! `<policy>/<key>`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{
    PolicyOutcome, bind,
    compiled::{self, CompiledPolicy},
    expr::{self, Bound},
    match_conditions, matching, params,
    request::Request,
    spec::Binding,
};
use crate::{
    engine::Engine,
    errors::{ApiError, ApiResult, Cause, Reason},
};

/// The audit annotation a failed validation with the `Audit` action publishes.
pub(crate) const VALIDATION_FAILURE_KEY: &str =
    "validation.policy.admission.k8s.io/validation_failure";

/// The longest audit annotation value kept (`maxAuditAnnotationValueLength`).
const MAX_AUDIT_VALUE: usize = 10 * 1024;

/// A denial waiting for the end of the dispatch (the first one answers the request).
#[derive(Debug)]
struct Denial {
    policy: String,
    binding: Option<String>,
    message: String,
    /// `Unauthorized`, `Forbidden`, `Invalid`, `RequestEntityTooLarge` (None: Invalid).
    reason: Option<String>,
}

/// One decision of one validation.
enum Decision {
    Admit,
    /// A failed validation, or an error under `failurePolicy: Fail`.
    Deny {
        message: String,
        reason: Option<String>,
    },
}

/// The value of the `validation_failure` audit annotation (`ValidationFailureValue`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FailureValue<'a> {
    message: &'a str,
    policy: &'a str,
    binding: &'a str,
    expression_index: usize,
    validation_actions: &'a [String],
}

/// Runs the ValidatingAdmissionPolicies on the request.
pub(crate) fn validate(engine: &Engine, raw: &Value) -> ApiResult<PolicyOutcome> {
    let hooks = compiled::load(
        engine,
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
    );
    let mut outcome = PolicyOutcome::default();
    if hooks.is_empty() {
        return Ok(outcome);
    }
    let req = Request::parse(raw)?;
    let mut denied: Vec<Denial> = Vec::new();
    // Fetched when a binding is first evaluated: a request no policy selects never
    // needs its namespace.
    let mut ns_slot = None;
    for (cp, bindings) in &hooks {
        let policy = &cp.policy;
        let name = &policy.metadata.name;
        let ignore = policy.spec.ignores_errors();
        let config_error = |binding: Option<&str>, err: String, denied: &mut Vec<Denial>| {
            if ignore {
                tracing::debug!(policy = %name, error = %err, "validating admission policy: error ignored");
                return;
            }
            let what = if binding.is_some() {
                "binding"
            } else {
                "policy"
            };
            denied.push(Denial {
                policy: name.clone(),
                binding: binding.map(str::to_owned),
                message: format!("failed to configure {what}: {err}"),
                reason: None,
            });
        };
        let Some(constraints) = &policy.spec.match_constraints else {
            config_error(
                None,
                "policy contained no match constraints, a required field".into(),
                &mut denied,
            );
            continue;
        };
        match matching::matches(engine, &req, constraints) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                super::namespace_missing(&e)?;
                config_error(None, e.to_string(), &mut denied);
                continue;
            }
        }
        let mut annotations: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for binding in bindings {
            let bname = binding.metadata.name.as_str();
            if let Some(mr) = &binding.spec.match_resources {
                match matching::matches(engine, &req, mr) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        super::namespace_missing(&e)?;
                        config_error(Some(bname), e.to_string(), &mut denied);
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
                    config_error(Some(bname), e.to_string(), &mut denied);
                    continue;
                }
            };
            let ns_object = super::namespace_object(engine, &req, &mut ns_slot)?;
            for param in params {
                let bound = bind(cp, &req, req.object, param.as_deref(), ns_object.as_deref());
                let decisions = evaluate(cp, &bound, ignore);
                for (i, decision) in decisions.into_iter().enumerate() {
                    let Decision::Deny { message, reason } = decision else {
                        continue;
                    };
                    act(binding, name, i, message, reason, &mut outcome, &mut denied);
                }
                for (key, ve) in &cp.audit_annotations {
                    match annotation(ve, &bound) {
                        Ok(Some(value)) => {
                            let values = annotations.entry(key.clone()).or_default();
                            if !values.contains(&value) {
                                values.push(value);
                            }
                        }
                        Ok(None) => {}
                        Err(_) if ignore => {}
                        Err(message) => denied.push(Denial {
                            policy: name.clone(),
                            binding: Some(bname.to_owned()),
                            message,
                            reason: None,
                        }),
                    }
                }
            }
        }
        for (key, values) in annotations {
            add_annotation(&mut outcome, format!("{name}/{key}"), values.join(", "));
        }
    }
    match denied.into_iter().next() {
        Some(d) => Err(denial_error(&req, &d)),
        None => Ok(outcome),
    }
}

/// The decisions of the validations (`validator.go` `Validate`): none when a match
/// condition is false; one error decision when match conditions fail to evaluate.
fn evaluate(cp: &CompiledPolicy, bound: &Bound, ignore: bool) -> Vec<Decision> {
    let on_error = |message: String| {
        if ignore {
            Decision::Admit
        } else {
            Decision::Deny {
                message,
                reason: None,
            }
        }
    };
    match match_conditions(cp, bound) {
        Ok(true) => {}
        Ok(false) => return Vec::new(),
        Err(e) => return vec![on_error(e)],
    }
    cp.validations
        .iter()
        .zip(&cp.policy.spec.validations)
        .map(|(c, v)| {
            let result = match &c.expression {
                Ok(e) => bound.eval(e),
                Err(e) => Err(e.clone()),
            };
            match result {
                Err(e) => on_error(e.to_string()),
                Ok(kube_cel::cel::Value::Bool(true)) => Decision::Admit,
                // `EvalResult != celtypes.True`: anything but true denies.
                Ok(_) => Decision::Deny {
                    message: message(c, v, bound),
                    reason: v.reason.clone(),
                },
            }
        })
        .collect()
}

/// The message of a failed validation: the messageExpression's (trimmed, one line, at
/// most 5,000 bytes), else `message`, else `failed expression: <expression>`.
fn message(c: &compiled::CompiledValidation, v: &super::spec::Validation, bound: &Bound) -> String {
    let from_expression = c
        .message_expression
        .as_ref()
        .and_then(|m| m.as_ref().ok())
        .and_then(|m| match bound.eval(m) {
            Ok(kube_cel::cel::Value::String(s)) => Some(s.trim().to_owned()),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(error = %e, "validating admission policy: messageExpression failed");
                None
            }
        })
        .filter(|m| !m.is_empty() && m.len() <= 5000 && !m.contains('\n'));
    from_expression
        .or_else(|| {
            v.message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| format!("failed expression: {}", v.expression.trim()))
}

/// A denied validation, acted on per the binding's `validationActions`.
fn act(
    binding: &Binding,
    policy: &str,
    index: usize,
    message: String,
    reason: Option<String>,
    outcome: &mut PolicyOutcome,
    denied: &mut Vec<Denial>,
) {
    let bname = &binding.metadata.name;
    for action in &binding.spec.validation_actions {
        match action.as_str() {
            "Deny" => denied.push(Denial {
                policy: policy.to_owned(),
                binding: Some(bname.clone()),
                message: message.clone(),
                reason: reason.clone(),
            }),
            "Warn" => outcome.warnings.push(format!(
                "Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{bname}': {message}"
            )),
            "Audit" => {
                let value = FailureValue {
                    message: &message,
                    policy: &binding.spec.policy_name,
                    binding: bname,
                    expression_index: index,
                    validation_actions: &binding.spec.validation_actions,
                };
                match serde_json::to_string(&[value]) {
                    Ok(v) => add_annotation(outcome, VALIDATION_FAILURE_KEY.to_owned(), v),
                    Err(e) => tracing::warn!(error = %e, "validation_failure annotation"),
                }
            }
            other => tracing::warn!(action = %other, binding = %bname, "unknown validationAction"),
        }
    }
}

/// An audit annotation's value: a non-empty string is published, null or empty is left
/// out, anything else (or an error) is an error.
fn annotation(ve: &compiled::Expr, bound: &Bound) -> Result<Option<String>, String> {
    let compiled = ve.as_ref().map_err(ToString::to_string)?;
    match bound.eval(compiled).map_err(|e| e.to_string())? {
        kube_cel::cel::Value::String(s) => {
            let s = s.trim();
            Ok((!s.is_empty()).then(|| s.chars().take(MAX_AUDIT_VALUE).collect()))
        }
        kube_cel::cel::Value::Null => Ok(None),
        other => Err(format!(
            "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
            compiled.source,
            expr::type_name(&other)
        )),
    }
}

/// Adds an audit annotation; a key already set keeps its first value, as
/// `Attributes.AddAnnotation` refuses to overwrite one.
fn add_annotation(outcome: &mut PolicyOutcome, key: String, value: String) {
    if outcome.audit_annotations.iter().any(|(k, _)| *k == key) {
        tracing::warn!(%key, "admission policy: audit annotation already set");
        return;
    }
    outcome.audit_annotations.push((key, value));
}

/// The Status of a denial (`dispatcher.go`): `admission.NewForbidden`'s message with the
/// reason of the validation (default `Invalid`) and its code, and the message as a cause.
fn denial_error(req: &Request<'_>, d: &Denial) -> ApiError {
    let inner = match &d.binding {
        Some(b) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{b}' denied request: {}",
            d.policy, d.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            d.policy, d.message
        ),
    };
    let name = req.object_name();
    let (code, reason) = match d.reason.as_deref() {
        Some("Forbidden") => (403, Reason::Forbidden),
        Some("Unauthorized") => (401, Reason::Unauthorized),
        // No `RequestEntityTooLarge` in `crate::errors::Reason`: the code is right, the
        // reason string says `Invalid` (see the module docs of `policy`).
        Some("RequestEntityTooLarge") => (413, Reason::Invalid),
        _ => (422, Reason::Invalid),
    };
    let mut err = ApiError::new(
        code,
        reason,
        format!(
            "{} \"{name}\" is forbidden: {inner}",
            req.qualified_resource()
        ),
    );
    err.details.group = Some(req.group.to_owned());
    err.details.kind = Some(req.resource.to_owned());
    err.details.name = Some(name);
    err.details.causes = vec![Cause {
        reason: String::new(),
        message: inner,
        field: String::new(),
    }];
    err
}
