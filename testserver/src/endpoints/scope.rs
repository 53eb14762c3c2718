//! What every verb handler of one resource request needs (kube-apiserver's
//! `handlers.RequestScope`): the resolved resource type and target, the query, the
//! negotiated output and the table's `includeObject`.

use std::sync::Arc;

use http::header;
use kubegen::catalog::Verb;
use serde_json::Value;

use super::{
    negotiate::{self, Negotiated, Offer},
    query::Query,
    render,
    reply::{self, Reply},
    request_info::RequestInfo,
    table::IncludeObject,
};
use crate::{
    engine::{Engine, Target},
    errors::{ApiError, ApiResult},
    registry::ResourceType,
    shared::Shared,
};

/// One resource request, resolved.
pub(crate) struct Scope<'a> {
    /// The server's state.
    pub(crate) shared: &'a Shared,
    /// The request.
    pub(crate) info: &'a RequestInfo,
    /// The served type, in the request's version.
    pub(crate) rt: Arc<ResourceType>,
    /// What the request addresses.
    pub(crate) target: Target,
    /// The query parameters.
    pub(crate) query: Query,
    /// The negotiated output.
    pub(crate) negotiated: Negotiated,
    /// What table rows carry.
    pub(crate) include: IncludeObject,
}

impl<'a> Scope<'a> {
    /// Resolves `info` against the registry: 404 for an unserved resource or
    /// subresource, 400 for a namespace on a cluster-scoped resource, 406 when no
    /// acceptable output exists, 400 for a bad `includeObject`.
    pub(crate) fn new(
        shared: &'a Shared,
        info: &'a RequestInfo,
        parts: &http::request::Parts,
    ) -> ApiResult<Self> {
        let engine = &shared.engine;
        let rt = crate::engine::resolve(engine, &info.group, &info.version, &info.resource)?;
        if !rt.namespaced && !info.namespace.is_empty() {
            return Err(ApiError::bad_request(
                "cluster-scoped resources have no namespace",
            ));
        }
        let target = Target {
            rt: rt.clone(),
            namespace: (!info.namespace.is_empty()).then(|| info.namespace.clone()),
            name: (!info.name.is_empty()).then(|| info.name.clone()),
            subresource: (!info.subresource.is_empty()).then(|| info.subresource.clone()),
        };
        if let Some(sub) = &target.subresource {
            let known = (sub == "status" && rt.status_subresource)
                || (sub == "scale" && rt.scale.is_some())
                || rt.strategy.serves_subresource(sub)
                || (info.verb == kubegen::catalog::Verb::Create
                    && crate::authn::token_request::is_token_request(&rt.group, &rt.plural, sub))
                || (info.verb == kubegen::catalog::Verb::Create
                    && rt
                        .strategy
                        .create_subresource(sub, &serde_json::Value::Null, &serde_json::Value::Null)
                        .is_some());
            if !known {
                return Err(ApiError::not_found(
                    &rt.group,
                    &format!("{}/{sub}", rt.plural),
                    &info.name,
                ));
            }
        }
        let negotiated = negotiate::negotiate(
            parts
                .headers
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok()),
            Offer {
                protobuf: rt.builtin || target.subresource.as_deref() == Some("scale"),
                transforms: info.verb.is_read() && target.subresource.is_none(),
                // A watch's events carry single objects: client-go's metadata client
                // watches with `as=PartialObjectMetadata` (metadata/metadata.go `Watch`).
                list: info.verb == Verb::List,
                stream: info.verb == Verb::Watch,
            },
        )?;
        let query = Query::parse(parts.uri.query());
        let include = IncludeObject::parse(query.get("includeObject").map(String::as_str))
            .map_err(ApiError::bad_request)?;
        Ok(Scope {
            shared,
            info,
            rt,
            target,
            query,
            negotiated,
            include,
        })
    }

    /// The engine.
    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.shared.engine
    }

    /// The encode step: `obj` in the negotiated output, answered with `code`.
    pub(crate) fn encode(&self, code: u16, obj: &Value) -> ApiResult<Reply> {
        render::object(
            self.engine(),
            &self.rt,
            self.negotiated,
            self.include,
            code,
            obj,
        )
        .map(reply::rendered)
    }

    /// A 405 for a verb the path's shape does not allow (a create on a name, an update
    /// of a collection).
    pub(crate) fn method_not_allowed() -> ApiError {
        ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )
    }
}
