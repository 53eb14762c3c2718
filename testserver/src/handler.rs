//! The HTTP semantics shared by both fronts: parses a request (path, query, body) into an
//! engine call and renders the reply (JSON, chunked watch stream, or a Status error).

use std::{collections::HashMap, sync::Arc, time::Duration};

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    aggregated_discovery, discovery,
    engine::{
        BodyOrigin, DeleteOptions, Engine, FieldCheck, ListOptions, Target, Warnings, WatchOptions,
        WriteOptions,
    },
    errors::{ApiError, ApiResult},
    faults::Faults,
    meta,
    negotiate::{self, Encoding, Offer},
    patch::{PatchType, apply_json_or_merge},
    render,
    schema::{FieldValidation, go_print, parse_with_duplicates},
    table::IncludeObject,
    watch::WatchStream,
};

/// A reply body: complete, or a stream of watch events.
pub enum ReplyBody {
    /// The whole body.
    Full(Bytes),
    /// A chunked stream (watch).
    Stream(WatchStream),
}

impl std::fmt::Debug for ReplyBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplyBody::Full(b) => write!(f, "Full({} bytes)", b.len()),
            ReplyBody::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

/// A reply.
pub type Reply = http::Response<ReplyBody>;

/// What a resource request addresses, as client-go's fake actions describe it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestInfo {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub verb: String,
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

/// State shared by every request of one server.
pub struct Shared {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Fault injection.
    pub faults: Faults,
    /// Required bearer token, if any.
    pub token: Option<String>,
    /// Cancelled when the server stops (ends watch tasks).
    pub shutdown: CancellationToken,
}

impl Shared {
    /// Shared state over `engine`.
    pub fn new(engine: Arc<Engine>, token: Option<String>) -> Arc<Self> {
        Arc::new(Shared {
            engine,
            faults: Faults::default(),
            token,
            shutdown: CancellationToken::new(),
        })
    }
}

fn json_reply(code: u16, body: Vec<u8>) -> Reply {
    let mut resp = http::Response::new(ReplyBody::Full(Bytes::from(body)));
    *resp.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

fn rendered_reply(r: render::Rendered) -> Reply {
    let mut resp = http::Response::new(ReplyBody::Full(Bytes::from(r.body)));
    *resp.status_mut() = StatusCode::from_u16(r.code).unwrap_or(StatusCode::OK);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(r.content_type),
    );
    resp
}

fn wants_aggregated(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(aggregated_discovery::wanted)
}

fn aggregated_reply(v: &Value) -> Reply {
    let mut resp = value_reply(200, v);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(aggregated_discovery::MEDIA_TYPE),
    );
    resp
}

/// The `openAPIV3Schema` of the CRD version serving `rt`, if `rt` is a custom resource.
fn crd_schema(engine: &Engine, rt: &crate::registry::ResourceType) -> Option<Value> {
    if rt.builtin {
        return None;
    }
    let crd = engine.store().get(
        &crate::registry::GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
        &(String::new(), format!("{}.{}", rt.plural, rt.group)),
    )?;
    crd.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(rt.version.as_str()))?
        .pointer("/schema/openAPIV3Schema")
        .cloned()
}

/// The `Status` a completed DELETE answers with (`details` name the object).
fn deleted_status(rt: &crate::registry::ResourceType, obj: &Value) -> Value {
    let mut details = serde_json::json!({
        "name": meta::name(obj),
        "kind": rt.plural,
        "uid": meta::uid(obj),
    });
    if !rt.group.is_empty()
        && let Some(d) = details.as_object_mut()
    {
        d.insert("group".into(), Value::String(rt.group.clone()));
    }
    serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

fn value_reply(code: u16, v: &Value) -> Reply {
    json_reply(code, serde_json::to_vec(v).unwrap_or_default())
}

/// Renders an error as a Status reply (with `Retry-After` when set).
pub fn error_reply(err: &ApiError) -> Reply {
    let mut resp = value_reply(err.code, &err.to_status());
    if let Some(secs) = err.details.retry_after_seconds
        && let Ok(v) = HeaderValue::from_str(&secs.to_string())
    {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a query string into a map (last value wins; `dryRun` may repeat).
pub fn parse_query(q: Option<&str>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for pair in q.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.insert(percent_decode(k), percent_decode(v));
    }
    out
}

fn flag(q: &HashMap<String, String>, k: &str) -> bool {
    q.get(k).is_some_and(|v| v == "true" || v == "1")
}

fn dry_run(q: &HashMap<String, String>) -> ApiResult<bool> {
    match q.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "Invalid dry run value: {other:?} (only \"All\" is supported)"
        ))),
    }
}

/// The write options of a request. Without a `fieldManager` parameter the manager is
/// derived from the User-Agent (`managerOrUserAgent` in staging
/// `apiserver/pkg/endpoints/handlers/rest.go`: the part before the first `/`, printable
/// characters only, at most 128 of them), except for apply, which requires one.
fn write_options(
    engine: &Engine,
    q: &HashMap<String, String>,
    options_kind: &str,
    headers: &http::HeaderMap,
    apply: bool,
) -> ApiResult<WriteOptions> {
    // apimachinery ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions:
    // an unknown directive is a 422 on `CreateOptions.meta.k8s.io ""` (and so on).
    let mode = if engine.config().schema_validation {
        FieldValidation::parse(q.get("fieldValidation").map(String::as_str))
            .map_err(|e| e.to_api_error("meta.k8s.io", options_kind, ""))?
    } else {
        FieldValidation::default()
    };
    let from_user_agent = || {
        let agent = headers.get(header::USER_AGENT)?.to_str().ok()?;
        let manager: String = agent
            .split('/')
            .next()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .take(128)
            .collect();
        (!manager.is_empty()).then_some(manager)
    };
    let explicit = q.get("fieldManager").cloned().filter(|s| !s.is_empty());
    Ok(WriteOptions {
        dry_run: dry_run(q)?,
        field_manager: if apply {
            explicit
        } else {
            explicit.or_else(from_user_agent)
        },
        force: flag(q, "force"),
        fields: FieldCheck {
            mode,
            ..FieldCheck::default()
        },
    })
}

/// One `Warning: 299 - "<text>"` header per warning (apiserver `filters/warning.go`,
/// `net.NewWarningHeader`: agent `-`, the text quoted with `"` and `\` escaped).
fn with_warnings(mut reply: Reply, warnings: &Warnings) -> Reply {
    for w in warnings.take() {
        let quoted = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{quoted}\"")) {
            reply.headers_mut().append(header::WARNING, v);
        }
    }
    reply
}

fn list_options(q: &HashMap<String, String>) -> ApiResult<ListOptions> {
    let limit = match q.get("limit").filter(|s| !s.is_empty()) {
        Some(l) => Some(
            l.parse::<usize>()
                .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
        ),
        None => None,
    };
    Ok(ListOptions {
        label_selector: q.get("labelSelector").cloned(),
        field_selector: q.get("fieldSelector").cloned(),
        limit,
        continue_token: q.get("continue").cloned().filter(|s| !s.is_empty()),
        resource_version: q.get("resourceVersion").cloned(),
        resource_version_match: q.get("resourceVersionMatch").cloned(),
    })
}

fn watch_options(q: &HashMap<String, String>) -> ApiResult<WatchOptions> {
    let timeout = match q.get("timeoutSeconds").filter(|s| !s.is_empty()) {
        Some(t) => Some(Duration::from_secs(t.parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!("invalid timeoutSeconds {t:?}"))
        })?)),
        None => None,
    };
    let send_initial_events = match q.get("sendInitialEvents").map(String::as_str) {
        Some("true") | Some("1") => Some(true),
        Some("false") | Some("0") => Some(false),
        _ => None,
    };
    Ok(WatchOptions {
        label_selector: q.get("labelSelector").cloned(),
        field_selector: q.get("fieldSelector").cloned(),
        resource_version: q.get("resourceVersion").cloned(),
        resource_version_match: q.get("resourceVersionMatch").cloned(),
        allow_bookmarks: flag(q, "allowWatchBookmarks"),
        send_initial_events,
        timeout,
    })
}

fn delete_options(
    q: &HashMap<String, String>,
    headers: &http::HeaderMap,
    body: &[u8],
) -> ApiResult<DeleteOptions> {
    let mut opts = DeleteOptions {
        propagation: q
            .get("propagationPolicy")
            .cloned()
            .filter(|s| !s.is_empty()),
        dry_run: dry_run(q)?,
        ..DeleteOptions::default()
    };
    if !body.iter().all(u8::is_ascii_whitespace) {
        // client-go's typed clients send DeleteOptions in their own content type.
        let v: Value = if crate::protobuf::is_protobuf(body) {
            crate::protobuf::decode_object(body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions body: {e}")))?
        } else if negotiate::body_encoding(content_type(headers))? == Encoding::Yaml {
            parse_body(headers, body, true)?
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions body: {e}")))?
        };
        if let Some(p) = v.get("propagationPolicy").and_then(Value::as_str) {
            opts.propagation = Some(p.to_string());
        }
        if v.get("orphanDependents").and_then(Value::as_bool) == Some(true) {
            opts.propagation = Some("Orphan".into());
        }
        if let Some(uid) = v.pointer("/preconditions/uid").and_then(Value::as_str) {
            opts.precondition_uid = Some(uid.to_string());
        }
        if let Some(rv) = v
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
        {
            opts.precondition_rv = Some(rv.to_string());
        }
        if let Some(list) = v.get("dryRun").and_then(Value::as_array)
            && list.iter().any(|d| d.as_str() == Some("All"))
        {
            opts.dry_run = true;
        }
    }
    Ok(opts)
}

fn content_type(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
}

/// [`parse_body`] of a write's object, recording a JSON body's duplicate fields (which
/// vanish once parsed) for `fieldValidation`.
fn parse_object(
    headers: &http::HeaderMap,
    body: &[u8],
    builtin: bool,
    opts: &mut WriteOptions,
) -> ApiResult<Value> {
    if negotiate::body_encoding(content_type(headers))? == Encoding::Json {
        let (value, dups) = parse_with_duplicates(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding JSON body: {e}")))?;
        opts.fields.duplicates = dups;
        return Ok(value);
    }
    parse_body(headers, body, builtin)
}

/// Decodes a request body by its Content-Type: JSON, YAML, or (built-in kinds only, as
/// apiextensions-apiserver serves custom resources in JSON and YAML) protobuf.
fn parse_body(headers: &http::HeaderMap, body: &[u8], builtin: bool) -> ApiResult<Value> {
    match negotiate::body_encoding(content_type(headers))? {
        Encoding::Json => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding JSON body: {e}"))),
        Encoding::Yaml => {
            let text = std::str::from_utf8(body)
                .map_err(|_| ApiError::bad_request("body is not UTF-8"))?;
            serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML body: {e}")))
        }
        Encoding::Protobuf if !builtin => Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
        )),
        Encoding::Protobuf => crate::protobuf::decode_object(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding protobuf body: {e}"))),
    }
}

/// Where a path points.
enum Route {
    Root,
    Version,
    CoreVersions,
    Groups,
    Group(String),
    Resources(String, String),
    OpenApiIndex,
    OpenApiDoc(String, String),
    Resource {
        info: RequestInfo,
        legacy_watch: bool,
    },
}

fn route(engine: &Engine, path: &str) -> ApiResult<Route> {
    let segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let not_found = || {
        ApiError::new(
            404,
            crate::errors::Reason::NotFound,
            "the server could not find the requested resource",
        )
    };
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
    Ok(Route::Resource {
        info: RequestInfo {
            verb: String::new(),
            group: group.into(),
            version: version.into(),
            resource: plural.into(),
            namespace: namespace.into(),
            name: name.into(),
            subresource: sub.into(),
        },
        legacy_watch,
    })
}

/// Works out the verb and resource of a request without executing it (for the action log,
/// reactors and fault matching). `None` for non-resource paths.
pub fn request_info(engine: &Engine, method: &Method, uri: &http::Uri) -> Option<RequestInfo> {
    let Ok(Route::Resource {
        mut info,
        legacy_watch,
    }) = route(engine, uri.path())
    else {
        return None;
    };
    let q = parse_query(uri.query());
    info.verb = verb_for(method, &info, legacy_watch || flag(&q, "watch")).to_string();
    Some(info)
}

fn verb_for(method: &Method, info: &RequestInfo, watching: bool) -> &'static str {
    let named = !info.name.is_empty();
    match *method {
        Method::GET if watching => "watch",
        Method::GET if named => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

/// Serves one request.
pub async fn handle(shared: &Arc<Shared>, req: http::Request<Bytes>) -> Reply {
    if let Some(token) = &shared.token {
        let ok = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|t| t == token);
        if !ok {
            return error_reply(&ApiError::unauthorized());
        }
    }
    if let Some(delay) = shared.faults.delay() {
        tokio::time::sleep(delay).await;
    }
    match dispatch(shared, req).await {
        Ok(reply) => reply,
        Err(err) => error_reply(&err),
    }
}

async fn dispatch(shared: &Arc<Shared>, req: http::Request<Bytes>) -> ApiResult<Reply> {
    let engine = &shared.engine;
    let (parts, body) = req.into_parts();
    let route = route(engine, parts.uri.path())?;
    let registry = engine.registry();
    let (mut info, legacy_watch) = match route {
        Route::Root => {
            let paths = serde_json::json!({"paths": ["/api", "/api/v1", "/apis", "/version"]});
            return Ok(value_reply(200, &paths));
        }
        Route::Version => return Ok(value_reply(200, &discovery::version())),
        Route::CoreVersions if wants_aggregated(&parts.headers) => {
            return Ok(aggregated_reply(&aggregated_discovery::core(registry)));
        }
        Route::Groups if wants_aggregated(&parts.headers) => {
            return Ok(aggregated_reply(&aggregated_discovery::groups(registry)));
        }
        Route::CoreVersions => return Ok(value_reply(200, &discovery::core_versions())),
        Route::Groups => return Ok(value_reply(200, &discovery::group_list(registry))),
        Route::Group(g) => {
            return discovery::group(registry, &g)
                .map(|v| value_reply(200, &v))
                .ok_or_else(|| ApiError::not_found("", "groups", &g));
        }
        Route::Resources(g, v) => {
            return discovery::resource_list(registry, &g, &v)
                .map(|v| value_reply(200, &v))
                .ok_or_else(|| {
                    ApiError::new(
                        404,
                        crate::errors::Reason::NotFound,
                        "the server could not find the requested resource",
                    )
                });
        }
        Route::OpenApiIndex => return Ok(value_reply(200, &crate::openapi::index(registry))),
        Route::OpenApiDoc(g, v) => {
            return crate::openapi::document(registry, &g, &v, |rt| crd_schema(engine, rt))
                .map(|d| value_reply(200, &d))
                .ok_or_else(|| ApiError::not_found("", "openapi", &v));
        }
        Route::Resource { info, legacy_watch } => (info, legacy_watch),
    };
    let q = parse_query(parts.uri.query());
    let watching = legacy_watch || flag(&q, "watch");
    info.verb = verb_for(&parts.method, &info, watching).to_string();
    if let Some(err) = shared.faults.check(&info.verb, &info.resource) {
        return Err(err);
    }
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
            || rt.strategy.serves_subresource(sub);
        if !known {
            return Err(ApiError::not_found(
                &rt.group,
                &format!("{}/{sub}", rt.plural),
                &info.name,
            ));
        }
    }
    let reads = matches!(info.verb.as_str(), "get" | "list" | "watch");
    let neg = negotiate::negotiate(
        parts
            .headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
        Offer {
            protobuf: rt.builtin || target.subresource.as_deref() == Some("scale"),
            transforms: reads && target.subresource.is_none(),
            // A watch's events carry single objects: client-go's metadata client watches
            // with `as=PartialObjectMetadata` (metadata/metadata.go `Watch`).
            list: info.verb == "list",
        },
    )?;
    let include = IncludeObject::parse(q.get("includeObject").map(String::as_str))
        .map_err(ApiError::bad_request)?;
    let reply = |code: u16, obj: &Value| {
        render::object(engine, &rt, neg, include, code, obj).map(rendered_reply)
    };
    match info.verb.as_str() {
        "watch" => {
            let mut opts = watch_options(&q)?;
            if let Some(name) = &target.name {
                let by_name = format!("metadata.name={name}");
                opts.field_selector = Some(match opts.field_selector.take() {
                    Some(f) if !f.is_empty() => format!("{f},{by_name}"),
                    _ => by_name,
                });
            }
            let mut t = target.clone();
            t.name = None;
            let stream = crate::watch::watch(
                engine,
                &t,
                &opts,
                shared.faults.watch_faults(),
                shared.shutdown.child_token(),
            )?;
            let (stream, content_type) = render::watch(engine, &rt, neg, include, stream);
            let mut resp = http::Response::new(ReplyBody::Stream(stream));
            resp.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            resp.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache, private"),
            );
            Ok(resp)
        }
        "get" => {
            let obj = engine.get(&target)?;
            reply(200, &obj)
        }
        "list" => {
            let list = engine.list(&target, &list_options(&q)?)?;
            render::list(engine, &rt, neg, include, &list).map(rendered_reply)
        }
        "create" => {
            if target.name.is_some() {
                return Err(ApiError::method_not_allowed(
                    "the server does not allow this method on the requested resource",
                ));
            }
            let mut opts = write_options(engine, &q, "CreateOptions", &parts.headers, false)?;
            let value = parse_object(&parts.headers, &body, rt.builtin, &mut opts)?;
            let obj = engine.create(&target, value, &opts)?;
            Ok(with_warnings(reply(201, &obj)?, &opts.fields.warnings))
        }
        "update" => {
            if target.name.is_none() {
                return Err(ApiError::method_not_allowed(
                    "the server does not allow this method on the requested resource",
                ));
            }
            let builtin = rt.builtin || target.subresource.as_deref() == Some("scale");
            let mut opts = write_options(engine, &q, "UpdateOptions", &parts.headers, false)?;
            let value = parse_object(&parts.headers, &body, builtin, &mut opts)?;
            let obj = engine.update(&target, value, &opts)?;
            Ok(with_warnings(reply(200, &obj)?, &opts.fields.warnings))
        }
        "patch" => {
            if target.name.is_none() {
                return Err(ApiError::method_not_allowed(
                    "the server does not allow this method on the requested resource",
                ));
            }
            let ct = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let patch_type = PatchType::from_content_type(ct)?;
            let apply = matches!(patch_type, PatchType::Apply);
            let mut opts = write_options(engine, &q, "PatchOptions", &parts.headers, apply)?;
            opts.fields.origin = match patch_type {
                PatchType::Merge | PatchType::Json => BodyOrigin::JsonPatch,
                PatchType::Strategic => BodyOrigin::StrategicPatch(
                    serde_json::from_slice::<Value>(&body)
                        .map(|p| go_print(&p))
                        .unwrap_or_default(),
                ),
                PatchType::Apply => BodyOrigin::Object,
            };
            // Duplicates of a merge, strategic or (JSON) apply patch are the object's: the
            // patch has the object's shape (`patch.go` decodes it strictly).
            if patch_type != PatchType::Json
                && let Ok((_, dups)) = parse_with_duplicates(&body)
            {
                opts.fields.duplicates = dups;
            }
            let (code, obj) = patch(engine, &target, patch_type, &body, &opts)?;
            Ok(with_warnings(reply(code, &obj)?, &opts.fields.warnings))
        }
        "delete" => {
            let opts = delete_options(&q, &parts.headers, &body)?;
            let obj = engine.delete(&target, &opts)?;
            // The generic store answers a completed deletion with a `Status` of `Success`
            // unless the resource's store sets `ReturnDeletedObject`; a deletion held
            // by finalizers answers with the object (registry/store.go `Delete`).
            if meta::is_deleting(&obj) || rt.strategy.returns_deleted_object() {
                reply(200, &obj)
            } else {
                Ok(value_reply(200, &deleted_status(&rt, &obj)))
            }
        }
        "deletecollection" => {
            let opts = delete_options(&q, &parts.headers, &body)?;
            let list = engine.delete_collection(&target, &list_options(&q)?, &opts)?;
            render::list(engine, &rt, neg, include, &list).map(rendered_reply)
        }
        _ => Err(ApiError::method_not_allowed(format!(
            "the server does not allow method {} on the requested resource",
            parts.method
        ))),
    }
}

/// Applies a PATCH of any type.
pub fn patch(
    engine: &Engine,
    target: &Target,
    patch_type: PatchType,
    body: &[u8],
    opts: &WriteOptions,
) -> ApiResult<(u16, Arc<Value>)> {
    let rt = &target.rt;
    match patch_type {
        PatchType::Apply => crate::apply::apply(engine, target, body, opts),
        PatchType::Strategic if !rt.builtin => Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        )),
        _ => {
            let sub = target.subresource.clone();
            let rt2 = rt.clone();
            let obj = engine.replace_with(target, opts, move |old| {
                let base: Value = if sub.as_deref() == Some("scale") {
                    (*crate::scale::to_scale(&rt2, old)?).clone()
                } else {
                    old.clone()
                };
                let patched = apply_json_or_merge(&base, patch_type, body)?;
                if !patched.is_object() {
                    return Err(ApiError::bad_request("the patch produced a non-object"));
                }
                let name = crate::meta::name(&patched);
                if sub.is_none() && name != crate::meta::name(old) {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({name}) does not match the name on the URL ({})",
                        crate::meta::name(old)
                    )));
                }
                if sub.is_none() {
                    let causes = crate::meta::validate_labels(&patched);
                    if !causes.is_empty() {
                        return Err(ApiError::invalid(
                            &rt2.group,
                            &rt2.kind,
                            crate::meta::name(old),
                            causes,
                        ));
                    }
                }
                let rv = crate::meta::resource_version(&patched).to_string();
                let rv = if rv == crate::meta::resource_version(old) {
                    String::new()
                } else {
                    rv
                };
                Ok(Some((patched, rv)))
            })?;
            Ok((200, obj))
        }
    }
}
