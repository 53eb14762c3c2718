//! The endpoint layer (kube-apiserver's `k8s.io/apiserver/pkg/endpoints`): what a request
//! addresses ([`request_info`]), its options ([`options`]), one handler per verb
//! ([`handlers`]) and the replies ([`reply`]), with the HTTP-only concerns beside them:
//! content negotiation, rendering (tables, partial metadata, protobuf), discovery,
//! OpenAPI and watch streams. The storage below (`crate::engine`, `crate::store`) knows
//! nothing of HTTP.
//!
//! [`serve`] is the last stage of the handler chain (`crate::chain`).

pub(crate) mod aggregated_discovery;
pub(crate) mod cbor;
pub(crate) mod context;
pub(crate) mod decode;
pub(crate) mod discovery;
pub(crate) mod handlers;
pub(crate) mod jsonpath;
pub(crate) mod metadata;
pub(crate) mod negotiate;
pub(crate) mod openapi;
pub(crate) mod options;
pub(crate) mod query;
pub(crate) mod render;
pub(crate) mod reply;
pub mod request_info;
pub(crate) mod scope;
pub(crate) mod table;
pub(crate) mod watch;

use http::header;
use kubegen::catalog::Verb;
use serde_json::Value;

use self::{
    context::RequestContext,
    reply::Reply,
    request_info::{RequestInfo, Route},
    scope::Scope,
};
use crate::{
    engine::Engine,
    errors::{ApiError, ApiResult, Reason},
    registry::{GroupResource, ResourceType},
    shared::Shared,
};

/// Serves a request that passed the chain's filters: a discovery or OpenAPI document,
/// or a resource request through its verb's handler.
pub(crate) async fn serve(shared: &Shared, cx: &mut RequestContext) -> ApiResult<Reply> {
    let route = match cx.route.take() {
        Some(route) => route,
        None => request_info::resolve(&shared.engine, &cx.parts.method, &cx.parts.uri),
    }?;
    match route {
        Route::Resource(info) => resource(shared, &info, cx).await,
        other => non_resource(&shared.engine, &cx.parts.headers, other),
    }
}

/// A resource request through its verb's handler.
async fn resource(
    shared: &Shared,
    info: &RequestInfo,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    let scope = Scope::new(shared, info, &cx.parts)?;
    // A custom resource whose CRD converts through a webhook, requested in a version
    // other than the storage version (`crate::conversion`).
    if let Some(plan) = crate::conversion::Plan::for_request(&shared.engine, &scope.rt)? {
        return handlers::converted::serve(&scope, plan, cx).await;
    }
    match info.verb {
        Verb::Get => handlers::get::get(&scope, cx),
        Verb::List => handlers::list::list(&scope, cx),
        Verb::Watch => handlers::watch::watch(&scope, cx),
        Verb::Create => handlers::create::create(&scope, cx).await,
        Verb::Update => handlers::update::update(&scope, cx).await,
        Verb::Patch => handlers::patch::patch(&scope, cx).await,
        Verb::Delete => handlers::delete::delete(&scope, cx).await,
        Verb::DeleteCollection => handlers::delete_collection::delete_collection(&scope, cx).await,
    }
}

/// Whether the client asks for aggregated discovery.
fn wants_aggregated(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(aggregated_discovery::wanted)
}

/// Discovery and OpenAPI.
fn non_resource(engine: &Engine, headers: &http::HeaderMap, route: Route) -> ApiResult<Reply> {
    let registry = engine.registry();
    match route {
        Route::Root => {
            let paths = serde_json::json!({"paths": ["/api", "/api/v1", "/apis", "/version"]});
            Ok(reply::json(200, &paths))
        }
        Route::Version => Ok(reply::json(200, &discovery::version())),
        Route::CoreVersions if wants_aggregated(headers) => {
            Ok(reply::aggregated(&aggregated_discovery::core(registry)))
        }
        Route::Groups if wants_aggregated(headers) => {
            Ok(reply::aggregated(&aggregated_discovery::groups(registry)))
        }
        Route::CoreVersions => Ok(reply::json(200, &discovery::core_versions())),
        Route::Groups => Ok(reply::json(200, &discovery::group_list(registry))),
        Route::Group(g) => discovery::group(registry, &g)
            .map(|v| reply::json(200, &v))
            .ok_or_else(|| ApiError::not_found("", "groups", &g)),
        Route::Resources(g, v) => discovery::resource_list(registry, &g, &v)
            .map(|v| reply::json(200, &v))
            .ok_or_else(|| {
                ApiError::new(
                    404,
                    Reason::NotFound,
                    "the server could not find the requested resource",
                )
            }),
        Route::OpenApiIndex => Ok(reply::json(200, &openapi::index(registry))),
        Route::OpenApiDoc(g, v) => openapi::document(registry, &g, &v, |rt| crd_schema(engine, rt))
            .map(|d| reply::json(200, &d))
            .ok_or_else(|| ApiError::not_found("", "openapi", &v)),
        Route::Resource(_) => Err(ApiError::internal("a resource route reached discovery")),
    }
}

/// The `openAPIV3Schema` of the CRD version serving `rt`, if `rt` is a custom resource.
fn crd_schema(engine: &Engine, rt: &ResourceType) -> Option<Value> {
    if rt.builtin {
        return None;
    }
    let crd = engine.store().get(
        &GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
        &(String::new(), format!("{}.{}", rt.plural, rt.group)),
    )?;
    crd.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(rt.version.as_str()))?
        .pointer("/schema/openAPIV3Schema")
        .cloned()
}
