//! What a request addresses (kube-apiserver's `endpoints/request.RequestInfoFactory`):
//! a discovery or OpenAPI path, or a resource request with its typed [`Verb`], group,
//! version, resource, namespace, name and subresource.

use http::Method;
use kubegen::catalog::Verb;

use super::query::{Query, percent_decode};
use crate::{
    engine::Engine,
    errors::{ApiError, ApiResult, Reason},
};

/// A resource request, as kube-apiserver's `RequestInfo` and client-go's fake actions
/// describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestInfo {
    /// The verb (`GET` of a name is [`Verb::Get`], with `watch=true` [`Verb::Watch`], ...).
    pub verb: Verb,
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource plural.
    pub resource: String,
    /// Namespace, `""` if none.
    pub namespace: String,
    /// Object name, `""` if none.
    pub name: String,
    /// Subresource, `""` if none.
    pub subresource: String,
}

/// Where a path points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/`: the list of root paths.
    Root,
    /// `/version`.
    Version,
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/apis/<group>`.
    Group(String),
    /// `/api/v1`, `/apis/<group>/<version>`: a resource list.
    Resources(String, String),
    /// `/openapi/v3`.
    OpenApiIndex,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`.
    OpenApiDoc(String, String),
    /// A served resource.
    Resource(RequestInfo),
}

/// The 404 kube-apiserver answers for a path nothing serves.
fn not_found() -> ApiError {
    ApiError::new(
        404,
        Reason::NotFound,
        "the server could not find the requested resource",
    )
}

/// Resolves a request's route: 404 for a path that serves nothing, 405 for a method no
/// verb has on a resource path.
pub(crate) fn resolve(engine: &Engine, method: &Method, uri: &http::Uri) -> ApiResult<Route> {
    let segs: Vec<String> = uri
        .path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let (group, version, rest) = match s.as_slice() {
        [] => return Ok(Route::Root),
        ["version"] => return Ok(Route::Version),
        ["api"] => return Ok(Route::CoreVersions),
        ["api", "v1"] => return Ok(Route::Resources(String::new(), "v1".into())),
        ["apis"] => return Ok(Route::Groups),
        ["apis", g] => return Ok(Route::Group(g.to_string())),
        ["apis", g, v] => return Ok(Route::Resources(g.to_string(), v.to_string())),
        ["openapi", "v3"] => return Ok(Route::OpenApiIndex),
        ["openapi", "v3", "api", v] => return Ok(Route::OpenApiDoc(String::new(), v.to_string())),
        ["openapi", "v3", "apis", g, v] => {
            return Ok(Route::OpenApiDoc(g.to_string(), v.to_string()));
        }
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(not_found()),
    };
    let (legacy_watch, rest) = match rest {
        ["watch", rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    let served = |plural: &str| engine.registry().get(group, version, plural);
    let (namespace, plural, name, sub) = match rest {
        ["namespaces", ns, plural, tail @ ..] if served(plural).is_some_and(|rt| rt.namespaced) => {
            match tail {
                [] => (*ns, *plural, "", ""),
                [name] => (*ns, *plural, *name, ""),
                [name, sub] => (*ns, *plural, *name, *sub),
                _ => return Err(not_found()),
            }
        }
        [plural] => ("", *plural, "", ""),
        [plural, name] => ("", *plural, *name, ""),
        [plural, name, sub] => ("", *plural, *name, *sub),
        _ => return Err(not_found()),
    };
    if served(plural).is_none() {
        return Err(not_found());
    }
    let watching = legacy_watch || Query::parse(uri.query()).flag("watch");
    let Some(verb) = verb_for(method, !name.is_empty(), watching) else {
        return Err(ApiError::method_not_allowed(format!(
            "the server does not allow method {method} on the requested resource"
        )));
    };
    Ok(Route::Resource(RequestInfo {
        verb,
        group: group.into(),
        version: version.into(),
        resource: plural.into(),
        namespace: namespace.into(),
        name: name.into(),
        subresource: sub.into(),
    }))
}

/// The verb of a method on a resource path (`None`: no verb, a 405).
fn verb_for(method: &Method, named: bool, watching: bool) -> Option<Verb> {
    Some(match *method {
        Method::GET if watching => Verb::Watch,
        Method::GET if named => Verb::Get,
        Method::GET => Verb::List,
        Method::POST => Verb::Create,
        Method::PUT => Verb::Update,
        Method::PATCH => Verb::Patch,
        Method::DELETE if named => Verb::Delete,
        Method::DELETE => Verb::DeleteCollection,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineConfig;

    fn route(method: Method, uri: &str) -> ApiResult<Route> {
        let engine = Engine::with_controllers(EngineConfig::default(), Vec::new());
        resolve(&engine, &method, &uri.parse().expect("uri"))
    }

    fn info(method: Method, uri: &str) -> RequestInfo {
        match route(method, uri) {
            Ok(Route::Resource(info)) => info,
            other => panic!("{uri}: {other:?}"),
        }
    }

    #[test]
    fn methods_and_paths_give_the_verb() {
        let cms = "/api/v1/namespaces/default/configmaps";
        assert_eq!(info(Method::GET, cms).verb, Verb::List);
        assert_eq!(
            info(Method::GET, &format!("{cms}?watch=1")).verb,
            Verb::Watch
        );
        assert_eq!(
            info(Method::GET, "/api/v1/watch/configmaps").verb,
            Verb::Watch
        );
        assert_eq!(info(Method::GET, &format!("{cms}/a")).verb, Verb::Get);
        assert_eq!(info(Method::POST, cms).verb, Verb::Create);
        assert_eq!(info(Method::PUT, &format!("{cms}/a")).verb, Verb::Update);
        assert_eq!(info(Method::PATCH, &format!("{cms}/a")).verb, Verb::Patch);
        assert_eq!(info(Method::DELETE, &format!("{cms}/a")).verb, Verb::Delete);
        assert_eq!(info(Method::DELETE, cms).verb, Verb::DeleteCollection);
        let status = info(
            Method::PUT,
            "/apis/apps/v1/namespaces/web/deployments/d/status",
        );
        assert_eq!(
            status,
            RequestInfo {
                verb: Verb::Update,
                group: "apps".into(),
                version: "v1".into(),
                resource: "deployments".into(),
                namespace: "web".into(),
                name: "d".into(),
                subresource: "status".into(),
            }
        );
    }

    #[test]
    fn discovery_paths_and_errors() {
        assert_eq!(
            route(Method::GET, "/apis/apps").ok(),
            Some(Route::Group("apps".into()))
        );
        assert_eq!(route(Method::GET, "/version").ok(), Some(Route::Version));
        assert_eq!(
            route(Method::GET, "/api/v1/nothings").map_err(|e| e.code),
            Err(404)
        );
        assert_eq!(
            route(Method::OPTIONS, "/api/v1/pods").map_err(|e| e.code),
            Err(405)
        );
    }
}
