//! Every verb of a custom resource whose CRD converts through a webhook, requested in a
//! version other than its storage version (apiextensions-apiserver's `crdHandler` with a
//! webhook converter; the table in `crate::conversion`), and of an `events.k8s.io/v1`
//! Event (stored as a core Event). The engine only ever sees the
//! storage version: the handler's registry step runs on a second [`Scope`] whose type
//! and target are the storage version's ([`conversion::Plan::storage`]), request bodies
//! are converted to it before and the answers back to the request's version after; the
//! decode, options, admission and encode steps are those of the plain handlers, the
//! encode with the request's type (its Table columns, its `apiVersion`).
//!
//! * a write's body is pruned, defaulted and validated with the request version's schema
//!   before it is converted (its errors name that version's fields), as the
//!   `crdHandler`'s storage of that version does; the engine admits the converted object
//!   with the storage version's schema again;
//! * a patch reads the stored object, converts it to the request's version, applies the
//!   patch there, converts the result back and updates with the read resourceVersion as
//!   precondition, starting over when the object moved on (`GuaranteedUpdate`); an apply
//!   converts its configuration to the storage version and is applied there (its
//!   managedFields then name the storage version);
//! * the `scale` subresource is served on the storage version (a Scale has no version of
//!   the custom resource);
//! * dynamic admission sees the storage version's objects;
//! * managedFields entries of these writes name the storage version (kube-apiserver's
//!   name the request's version, with that version's field paths).

use std::sync::Arc;

use http::header;
use serde_json::Value;

use super::{
    super::{
        context::RequestContext,
        decode, options, render,
        reply::{self, Reply},
        scope::Scope,
    },
    admit, escalation_guard,
};
use crate::{
    conversion::Plan,
    engine::{BodyOrigin, Target, WriteOptions},
    errors::{ApiError, ApiResult},
    meta,
    patch::{PatchType, apply_json_or_merge},
};
use kubegen::catalog::Verb;

/// How many times a patch starts over after the object changed under it.
const ATTEMPTS: usize = 5;

/// Serves `scope`'s request through `plan`.
pub(crate) async fn serve(
    scope: &Scope<'_>,
    plan: Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    let stored = storage_scope(scope, &plan);
    if scope.target.subresource.as_deref() == Some("scale") {
        return serve_unconverted(&stored, cx).await;
    }
    tracing::debug!(
        kind = %plan.request.kind,
        request = %plan.request.version,
        storage = %plan.storage.version,
        verb = ?scope.info.verb,
        "serving through the conversion webhook"
    );
    match scope.info.verb {
        Verb::Get => get(scope, &stored, &plan, cx).await,
        Verb::List => list(scope, &stored, &plan, cx).await,
        Verb::Watch => watch(scope, &stored, plan, cx),
        Verb::Create => create(scope, &stored, &plan, cx).await,
        Verb::Update => update(scope, &stored, &plan, cx).await,
        Verb::Patch => patch(scope, &stored, &plan, cx).await,
        Verb::Delete => delete(scope, &stored, &plan, cx).await,
        Verb::DeleteCollection => delete_collection(scope, &stored, &plan, cx).await,
    }
}

/// `scope` with the storage version's type and target.
fn storage_scope<'a>(scope: &Scope<'a>, plan: &Plan) -> Scope<'a> {
    Scope {
        shared: scope.shared,
        info: scope.info,
        rt: plan.storage.clone(),
        target: Target {
            rt: plan.storage.clone(),
            ..scope.target.clone()
        },
        query: scope.query.clone(),
        negotiated: scope.negotiated,
        include: scope.include,
    }
}

/// The plain handlers on the storage version (the `scale` subresource).
async fn serve_unconverted(stored: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    match stored.info.verb {
        Verb::Get => super::get::get(stored, cx),
        Verb::List => super::list::list(stored, cx),
        Verb::Watch => super::watch::watch(stored, cx),
        Verb::Create => super::create::create(stored, cx).await,
        Verb::Update => super::update::update(stored, cx).await,
        Verb::Patch => super::patch::patch(stored, cx).await,
        Verb::Delete => super::delete::delete(stored, cx).await,
        Verb::DeleteCollection => super::delete_collection::delete_collection(stored, cx).await,
    }
}

async fn get(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    cx.trail.enter("registry")?;
    let obj = stored.engine().get(&stored.target)?;
    let obj = plan.one_to_request(scope.shared, obj).await?;
    cx.trail.enter("encode")?;
    scope.encode(200, &obj)
}

/// A list's items converted in one review, the list in the request's version.
async fn list_to_request(
    scope: &Scope<'_>,
    plan: &Plan,
    mut list: crate::engine::ListResult,
) -> ApiResult<Reply> {
    list.items = plan.to_request(scope.shared, list.items).await?;
    list.api_version = plan.request.api_version();
    render::list(
        scope.engine(),
        &scope.rt,
        scope.negotiated,
        scope.include,
        &list,
    )
    .map(reply::rendered)
}

async fn list(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    let opts = options::list(&scope.query)?;
    cx.trail.enter("registry")?;
    let list = stored.engine().list(&stored.target, &opts)?;
    cx.trail.enter("encode")?;
    list_to_request(scope, plan, list).await
}

fn watch(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    let stream = super::watch::open(stored, cx)?;
    let stream = crate::endpoints::watch::convert_events(
        stream,
        Arc::new(plan),
        scope.shared.services.clone(),
    );
    super::watch::encode(scope, cx, stream)
}

/// A body decoded in the request's version, admitted by the built-in plugins, pruned,
/// defaulted and validated by the request version's schema (`old`: the stored object in
/// the request's version, for an update), converted to the storage version.
async fn decoded_body(
    scope: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
    opts: &mut WriteOptions,
    old: Option<&Value>,
) -> ApiResult<Value> {
    cx.trail.enter("decode")?;
    let mut value = decode::object(&cx.parts.headers, &cx.body, false, opts)?;
    admit(scope, cx, opts.dry_run, Some(&mut value))?;
    admit_in_request_version(scope, &mut value, old, opts)?;
    plan.to_storage(scope.shared, value).await
}

/// kube-apiserver prunes, defaults and validates a custom resource with the schema of the
/// request's version (the `crdHandler`'s storage of that version) and converts it for
/// storage only after: errors and unknown-field warnings name the request version's
/// fields. The storage version's schema admits the converted object again in the engine.
fn admit_in_request_version(
    scope: &Scope<'_>,
    obj: &mut Value,
    old: Option<&Value>,
    opts: &WriteOptions,
) -> ApiResult<()> {
    let schema_scope = if scope.target.subresource.as_deref() == Some("status") {
        crate::schema::Scope::Status
    } else {
        crate::schema::Scope::Main
    };
    scope
        .engine()
        .admit(&scope.rt, obj, old, schema_scope, opts)
}

/// The stored object `scope` addresses, in the request's version.
async fn current_in_request_version(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
) -> ApiResult<Arc<Value>> {
    let current = stored.engine().get(&stored.target)?;
    plan.one_to_request(scope.shared, current).await
}

async fn create(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    if scope.target.subresource.is_some() {
        return super::create::create(stored, cx).await;
    }
    if scope.target.name.is_some() {
        return Err(Scope::method_not_allowed());
    }
    let mut opts = options::write(
        scope.engine(),
        &scope.query,
        "CreateOptions",
        &cx.parts.headers,
        false,
    )?;
    let value = decoded_body(scope, plan, cx, &mut opts, None).await?;
    opts.guard = escalation_guard(stored, cx, Some(&value))?;
    cx.trail.enter("registry")?;
    let obj = if crate::admission::dynamic::configured(scope.engine()) {
        super::admitted::create(stored, cx, &stored.target, value, &opts).await?
    } else {
        stored.engine().create(&stored.target, value, &opts)?
    };
    let obj = plan.one_to_request(scope.shared, obj).await?;
    cx.trail.enter("encode")?;
    Ok(reply::with_warnings(
        scope.encode(201, &obj)?,
        &opts.fields.warnings,
    ))
}

async fn update(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    if scope.target.name.is_none() {
        return Err(Scope::method_not_allowed());
    }
    let mut opts = options::write(
        scope.engine(),
        &scope.query,
        "UpdateOptions",
        &cx.parts.headers,
        false,
    )?;
    let old = current_in_request_version(scope, stored, plan).await?;
    let value = decoded_body(scope, plan, cx, &mut opts, Some(&old)).await?;
    opts.guard = escalation_guard(stored, cx, Some(&value))?;
    cx.trail.enter("registry")?;
    let obj = write(stored, cx, value, &opts).await?;
    let obj = plan.one_to_request(scope.shared, obj).await?;
    cx.trail.enter("encode")?;
    Ok(reply::with_warnings(
        scope.encode(200, &obj)?,
        &opts.fields.warnings,
    ))
}

/// The registry's update of the stored object (admitted when dynamic admission is
/// configured).
async fn write(
    stored: &Scope<'_>,
    cx: &mut RequestContext,
    value: Value,
    opts: &WriteOptions,
) -> ApiResult<Arc<Value>> {
    if crate::admission::dynamic::configured(stored.engine()) {
        super::admitted::update(stored, cx, value, opts).await
    } else {
        stored.engine().update(&stored.target, value, opts)
    }
}

async fn patch(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    if scope.target.name.is_none() {
        return Err(Scope::method_not_allowed());
    }
    let ct = cx
        .parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let patch_type = PatchType::from_content_type(ct)?;
    if let Some(json) = crate::patch::apply_cbor_as_json(ct, &cx.body)? {
        cx.body = json;
    }
    // a custom resource takes no strategic merge patch; a built-in served through a plan
    // (events.k8s.io Event) does
    if patch_type == PatchType::Strategic && !scope.rt.builtin {
        return Err(super::patching::strategic_unsupported());
    }
    let apply = patch_type == PatchType::Apply;
    let mut opts = options::write(
        scope.engine(),
        &scope.query,
        "PatchOptions",
        &cx.parts.headers,
        apply,
    )?;
    cx.trail.enter("decode")?;
    opts.fields.origin = if apply {
        BodyOrigin::Object
    } else {
        BodyOrigin::JsonPatch
    };
    admit(scope, cx, opts.dry_run, None)?;
    opts.guard = escalation_guard(stored, cx, None)?;
    cx.trail.enter("registry")?;
    let (code, obj) = if apply {
        apply_converted(scope, stored, plan, cx, &opts).await?
    } else {
        (
            200,
            patch_converted(scope, stored, plan, cx, patch_type, &opts).await?,
        )
    };
    let obj = plan.one_to_request(scope.shared, obj).await?;
    cx.trail.enter("encode")?;
    Ok(reply::with_warnings(
        scope.encode(code, &obj)?,
        &opts.fields.warnings,
    ))
}

/// A JSON or merge patch applied to the object in the request's version; the stored
/// object it was read as is the precondition of the write, read again when it moved on.
async fn patch_converted(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
    patch_type: PatchType,
    opts: &WriteOptions,
) -> ApiResult<Arc<Value>> {
    let engine = stored.engine();
    let body = cx.body.clone();
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let current = engine.get(&stored.target)?;
        let read_rv = meta::resource_version(&current).to_string();
        let shown = plan.one_to_request(scope.shared, current).await?;
        let mut patched = apply_json_or_merge(&shown, patch_type, &body)?;
        if !patched.is_object() {
            return Err(ApiError::bad_request("the patch produced a non-object"));
        }
        let name = meta::name(&patched);
        if scope.target.subresource.is_none() && name != meta::name(&shown) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({})",
                meta::name(&shown)
            )));
        }
        // A resourceVersion the patch sets is the client's precondition; otherwise the
        // one read is ours.
        let patched_rv = meta::resource_version(&patched);
        let client_precondition = !patched_rv.is_empty() && patched_rv != read_rv;
        if !client_precondition {
            meta::meta_mut(&mut patched)
                .insert("resourceVersion".into(), Value::String(read_rv.clone()));
        }
        admit_in_request_version(scope, &mut patched, Some(&shown), opts)?;
        let value = plan.to_storage(scope.shared, patched).await?;
        match write(stored, cx, value, opts).await {
            Err(err)
                if err.code == 409
                    && !client_precondition
                    && engine
                        .get(&stored.target)
                        .is_ok_and(|c| meta::resource_version(&c) != read_rv) =>
            {
                tracing::debug!(%err, "patched object moved on; patching again");
                last = Some(err);
            }
            other => return other,
        }
    }
    Err(last.unwrap_or_else(|| ApiError::internal("patch retries exhausted")))
}

/// A server-side apply: the configuration converted to the storage version (it names
/// the request's `apiVersion` and `kind`, as an object does) and applied there.
async fn apply_converted(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
    opts: &WriteOptions,
) -> ApiResult<(u16, Arc<Value>)> {
    let intent: Value = match serde_json::from_slice(&cx.body) {
        Ok(v) => v,
        Err(_) => {
            let text = std::str::from_utf8(&cx.body)
                .map_err(|_| ApiError::bad_request("apply body is not UTF-8"))?;
            serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
        }
    };
    if !intent.is_object() {
        return Err(ApiError::bad_request("apply body must be an object"));
    }
    let intent = plan.to_storage(scope.shared, intent).await?;
    let body = serde_json::to_vec(&intent).map_err(|e| ApiError::internal(e.to_string()))?;
    if crate::admission::dynamic::configured(stored.engine()) {
        super::admitted::patch(stored, cx, PatchType::Apply, &body, opts).await
    } else {
        super::patching::apply_patch(
            stored.engine(),
            &stored.target,
            PatchType::Apply,
            &body,
            opts,
        )
    }
}

async fn delete(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    cx.trail.enter("decode")?;
    let opts = options::delete(&scope.query, &cx.parts.headers, &cx.body)?;
    admit(scope, cx, opts.dry_run, None)?;
    cx.trail.enter("registry")?;
    let obj = if crate::admission::dynamic::configured(scope.engine()) {
        super::admitted::delete(stored, cx, &stored.target, &opts).await?
    } else {
        stored.engine().delete(&stored.target, &opts)?
    };
    if meta::is_deleting(&obj) || scope.rt.strategy.returns_deleted_object() {
        let obj = plan.one_to_request(scope.shared, obj).await?;
        cx.trail.enter("encode")?;
        scope.encode(200, &obj)
    } else {
        cx.trail.enter("encode")?;
        Ok(reply::json(200, &reply::deleted_status(&scope.rt, &obj)))
    }
}

async fn delete_collection(
    scope: &Scope<'_>,
    stored: &Scope<'_>,
    plan: &Plan,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    cx.trail.enter("decode")?;
    let opts = options::delete(&scope.query, &cx.parts.headers, &cx.body)?;
    let list_opts = options::list(&scope.query)?;
    admit(scope, cx, opts.dry_run, None)?;
    cx.trail.enter("registry")?;
    let list = if crate::admission::dynamic::configured(scope.engine()) {
        super::admitted::delete_collection(stored, cx, &list_opts, &opts).await?
    } else {
        stored
            .engine()
            .delete_collection(&stored.target, &list_opts, &opts)?
    };
    cx.trail.enter("encode")?;
    list_to_request(scope, plan, list).await
}
