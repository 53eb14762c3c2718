//! Policies read from the store and compiled once per stored object (see [`load`]):
//! every expression parsed up front, a parse error kept with its expression (kube-apiserver
//! reports it when the expression would run, under the policy's `failurePolicy`).

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock},
};

use parking_lot::Mutex;
use serde_json::Value;

use super::{
    expr::{CelError, Compiled, compile},
    spec::{Binding, Policy},
};
use crate::{engine::Engine, errors::Cause, registry::GroupResource};

/// The API group of the policy kinds.
pub(crate) const GROUP: &str = "admissionregistration.k8s.io";

/// One expression, compiled or not.
pub(crate) type Expr = Result<Compiled, CelError>;

/// A validation with its compiled expressions.
#[derive(Debug)]
pub(crate) struct CompiledValidation {
    /// `expression`.
    pub(crate) expression: Expr,
    /// `messageExpression`.
    pub(crate) message_expression: Option<Expr>,
}

/// A mutation with its compiled expression.
#[derive(Debug)]
pub(crate) enum CompiledMutation {
    /// `patchType: ApplyConfiguration`.
    Apply(Expr),
    /// `patchType: JSONPatch`.
    JsonPatch(Expr),
    /// Another patch type, or the expression missing.
    Invalid(String),
}

/// A policy and its compiled expressions.
#[derive(Debug)]
pub(crate) struct CompiledPolicy {
    /// The policy as stored.
    pub(crate) policy: Policy,
    /// `variables`, in order.
    pub(crate) variables: Vec<(String, Expr)>,
    /// `matchConditions`.
    pub(crate) match_conditions: Vec<(String, Expr)>,
    /// `validations`.
    pub(crate) validations: Vec<CompiledValidation>,
    /// `auditAnnotations` (key, valueExpression).
    pub(crate) audit_annotations: Vec<(String, Expr)>,
    /// `mutations`.
    pub(crate) mutations: Vec<CompiledMutation>,
}

impl CompiledPolicy {
    fn new(policy: Policy) -> CompiledPolicy {
        let spec = &policy.spec;
        let named = |list: &[super::spec::NamedExpression]| {
            list.iter()
                .map(|v| (v.name.clone(), compile(&v.expression)))
                .collect()
        };
        let validations = spec
            .validations
            .iter()
            .map(|v| CompiledValidation {
                expression: compile(&v.expression),
                message_expression: v
                    .message_expression
                    .as_deref()
                    .filter(|m| !m.trim().is_empty())
                    .map(compile),
            })
            .collect();
        let audit_annotations = spec
            .audit_annotations
            .iter()
            .map(|a| (a.key.clone(), compile(&a.value_expression)))
            .collect();
        let mutations = spec
            .mutations
            .iter()
            .map(|m| match m.patch_type.as_str() {
                "ApplyConfiguration" => match &m.apply_configuration {
                    Some(e) => CompiledMutation::Apply(compile(&e.expression)),
                    None => CompiledMutation::Invalid("applyConfiguration is required".into()),
                },
                "JSONPatch" => match &m.json_patch {
                    Some(e) => CompiledMutation::JsonPatch(compile(&e.expression)),
                    None => CompiledMutation::Invalid("jsonPatch is required".into()),
                },
                other => CompiledMutation::Invalid(format!("unsupported patchType \"{other}\"")),
            })
            .collect();
        CompiledPolicy {
            variables: named(&spec.variables),
            match_conditions: named(&spec.match_conditions),
            validations,
            audit_annotations,
            mutations,
            policy,
        }
    }
}

/// A compiled policy and the stored object it was compiled from.
type Entry = (Arc<Value>, Arc<CompiledPolicy>);

/// (engine address, policy plural, policy name).
type CacheKey = (usize, &'static str, String);

/// Compiled policies by (engine address, kind, name). An entry is used only for the very
/// object it was compiled from (the same `Arc` the store hands out while the object is
/// unchanged, else an equal value), so neither a new resourceVersion nor another engine
/// reusing the address with equal uids (seeded engines) can see a stale compilation.
static CACHE: LazyLock<Mutex<HashMap<CacheKey, Entry>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// How many compiled policies are kept before the cache starts over.
const CACHE_LIMIT: usize = 4096;

/// Every stored policy of `plural` (sorted by name), compiled, with the bindings of each
/// (sorted by name); a policy no binding names is left out (kube-apiserver never
/// evaluates one). A stored object that does not deserialize is skipped with a warning.
pub(crate) fn load(
    engine: &Engine,
    policies: &'static str,
    bindings: &str,
) -> Vec<(Arc<CompiledPolicy>, Vec<Binding>)> {
    let bindings = list(engine, bindings)
        .into_iter()
        .filter_map(|b| parse::<Binding>(&b, "binding"))
        .collect::<Vec<_>>();
    if bindings.is_empty() {
        return Vec::new();
    }
    let engine_id = engine as *const Engine as usize;
    let mut out = Vec::new();
    for raw in list(engine, policies) {
        let name = crate::meta::name(&raw).to_owned();
        let mut mine: Vec<Binding> = bindings
            .iter()
            .filter(|b| b.spec.policy_name == name)
            .cloned()
            .collect();
        if mine.is_empty() {
            continue;
        }
        mine.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let key = (engine_id, policies, name);
        let cached = CACHE
            .lock()
            .get(&key)
            .filter(|(r, _)| Arc::ptr_eq(r, &raw) || **r == *raw)
            .map(|(_, c)| c.clone());
        let compiled = match cached {
            Some(c) => c,
            None => {
                let Some(policy) = parse::<Policy>(&raw, "policy") else {
                    continue;
                };
                let c = Arc::new(CompiledPolicy::new(policy));
                let mut cache = CACHE.lock();
                if cache.len() >= CACHE_LIMIT {
                    cache.clear();
                }
                cache.insert(key, (raw.clone(), c.clone()));
                c
            }
        };
        out.push((compiled, mine));
    }
    out.sort_by(|a, b| a.0.policy.metadata.name.cmp(&b.0.policy.metadata.name));
    out
}

fn list(engine: &Engine, plural: &str) -> Vec<Arc<Value>> {
    match engine.store().list(
        &GroupResource::new(GROUP, plural),
        None,
        None,
        None,
        None,
        &|_| true,
    ) {
        Ok(page) => page.items,
        Err(e) => {
            tracing::warn!(%plural, error = %e, "admission policy: cannot list");
            Vec::new()
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(raw: &Value, what: &str) -> Option<T> {
    match T::deserialize(raw) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(name = %crate::meta::name(raw), error = %e, "admission policy: unreadable {what}");
            None
        }
    }
}

/// The expressions of a policy object that do not compile, as the field causes
/// kube-apiserver's validation gives (`spec.validations[0].expression: Invalid value:
/// ...: compilation failed: ...`), for the registry to refuse such a policy with a 422.
pub(crate) fn compile_errors(policy: &Value) -> Vec<Cause> {
    let Some(policy) = parse::<Policy>(policy, "policy") else {
        return Vec::new();
    };
    let spec = &policy.spec;
    let mut causes = Vec::new();
    let mut check = |field: String, source: &str| {
        if let Err(e) = compile(source) {
            causes.push(Cause::invalid(
                &field,
                format!("Invalid value: {source:?}: {e}"),
            ));
        }
    };
    for (i, v) in spec.variables.iter().enumerate() {
        check(format!("spec.variables[{i}].expression"), &v.expression);
    }
    for (i, v) in spec.match_conditions.iter().enumerate() {
        check(
            format!("spec.matchConditions[{i}].expression"),
            &v.expression,
        );
    }
    for (i, v) in spec.validations.iter().enumerate() {
        check(format!("spec.validations[{i}].expression"), &v.expression);
        if let Some(m) = v
            .message_expression
            .as_deref()
            .filter(|m| !m.trim().is_empty())
        {
            check(format!("spec.validations[{i}].messageExpression"), m);
        }
    }
    for (i, a) in spec.audit_annotations.iter().enumerate() {
        check(
            format!("spec.auditAnnotations[{i}].valueExpression"),
            &a.value_expression,
        );
    }
    for (i, m) in spec.mutations.iter().enumerate() {
        if let Some(e) = &m.apply_configuration {
            check(
                format!("spec.mutations[{i}].applyConfiguration.expression"),
                &e.expression,
            );
        }
        if let Some(e) = &m.json_patch {
            check(
                format!("spec.mutations[{i}].jsonPatch.expression"),
                &e.expression,
            );
        }
    }
    causes
}
