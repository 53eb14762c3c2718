//! The params of a binding (`generic/policy_dispatcher.go` `CollectParams`): none
//! without a `paramKind` or a `paramRef` (one evaluation with `params` null), the object
//! named by `paramRef.name`, or every object `paramRef.selector` selects (one evaluation
//! each); none found is an error under `parameterNotFoundAction: Deny` and skips the
//! binding otherwise.

use std::sync::Arc;

use serde_json::Value;

use super::{
    matching::selector_matches,
    spec::{ParamKind, ParamRef},
};
use crate::{engine::Engine, registry::ResourceType};

/// A binding's params could not be collected (a configuration error of the binding).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ParamError {
    /// The paramKind is not served.
    #[error("paramKind kind `{0}` not known")]
    UnknownKind(String),
    /// A namespaced paramKind, no `paramRef.namespace` and a cluster-scoped request.
    #[error(
        "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
    )]
    NoNamespace,
    /// `paramRef.namespace` for a cluster-scoped paramKind.
    #[error("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")]
    NamespaceForClusterScoped,
    /// Both or neither of `name` and `selector`.
    #[error("{0}")]
    Invalid(&'static str),
    /// A selector that does not convert.
    #[error("{0}")]
    Selector(String),
    /// Nothing found under `parameterNotFoundAction: Deny`.
    #[error("no params found for policy binding with `Deny` parameterNotFoundAction")]
    NotFoundDeny,
}

/// The params to evaluate a binding with: `vec![None]` for one evaluation without params,
/// an empty list to skip the binding.
pub(crate) fn collect(
    engine: &Engine,
    kind: Option<&ParamKind>,
    param_ref: Option<&ParamRef>,
    request_namespace: &str,
) -> Result<Vec<Option<Arc<Value>>>, ParamError> {
    let (Some(kind), Some(pref)) = (kind, param_ref) else {
        return Ok(vec![None]);
    };
    let rt = resolve_kind(engine, kind).ok_or_else(|| {
        ParamError::UnknownKind(format!("{}, Kind={}", kind.api_version, kind.kind))
    })?;
    let ref_ns = pref.namespace.as_deref().filter(|n| !n.is_empty());
    let namespace = if rt.namespaced {
        match ref_ns.or((!request_namespace.is_empty()).then_some(request_namespace)) {
            Some(ns) => Some(ns.to_owned()),
            None => return Err(ParamError::NoNamespace),
        }
    } else if ref_ns.is_some() {
        return Err(ParamError::NamespaceForClusterScoped);
    } else {
        None
    };
    let gr = rt.group_resource();
    let name = pref.name.as_deref().filter(|n| !n.is_empty());
    let found: Vec<Arc<Value>> = match (name, &pref.selector) {
        (Some(_), Some(_)) => {
            return Err(ParamError::Invalid(
                "paramRef.name and paramRef.selector are mutually exclusive",
            ));
        }
        (Some(name), None) => engine
            .store()
            .get(
                &gr,
                &(namespace.clone().unwrap_or_default(), name.to_owned()),
            )
            .into_iter()
            .collect(),
        (None, Some(selector)) => {
            let page = engine
                .store()
                .list(&gr, namespace.as_deref(), None, None, None, &|_| true)
                .map_err(|e| ParamError::Selector(e.message))?;
            let mut out = Vec::new();
            for obj in page.items {
                let labels = obj.pointer("/metadata/labels");
                if selector_matches(selector, labels)
                    .map_err(|e| ParamError::Selector(e.to_string()))?
                {
                    out.push(obj);
                }
            }
            out
        }
        (None, None) => {
            return Err(ParamError::Invalid(
                "one of name or selector must be provided",
            ));
        }
    };
    if found.is_empty() && pref.parameter_not_found_action.as_deref() == Some("Deny") {
        return Err(ParamError::NotFoundDeny);
    }
    Ok(found
        .into_iter()
        .map(|o| Some(engine.present(&rt, o)))
        .collect())
}

/// The served resource of a paramKind (`apiVersion` `group/version` or `v1`).
fn resolve_kind(engine: &Engine, kind: &ParamKind) -> Option<Arc<ResourceType>> {
    let (group, version) = kind
        .api_version
        .split_once('/')
        .unwrap_or(("", kind.api_version.as_str()));
    engine
        .registry()
        .in_group_version(group, version)
        .into_iter()
        .find(|rt| rt.kind == kind.kind)
}
