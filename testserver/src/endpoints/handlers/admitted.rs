//! The writes of a server with dynamic admission configured (admission webhooks or policy
//! bindings stored; `crate::admission::dynamic`). Webhooks are HTTP calls and must not be
//! made under the store's lock, so each write runs as kube-apiserver's `GuaranteedUpdate`
//! does: read the current object, admit (mutating admission on the requested object, a
//! dry run of the registry for the final object, validating admission on it), then write
//! only if the object is still at the resourceVersion admission saw, else start over.
//!
//! * create: mutating admission on the decoded body (a `generateName` unresolved, as in
//!   `handlers/create.go`), a dry-run create for the final object, validating admission,
//!   then the create with the name and uid the validating hooks saw.
//! * update, patch, apply: the requested object (a patch applied to the current object by
//!   a dry run), mutating admission with `oldObject`, a dry-run update for the final
//!   object, validating admission, then the update under the server's own
//!   resourceVersion precondition ([`WriteOptions::admitted_rv`]); an apply that creates
//!   is admitted as a create.
//! * delete, deletecollection: validating admission (mutating hooks get the DELETE with no
//!   object) with `oldObject`, then the delete under the same precondition.

use std::sync::Arc;

use serde_json::{Value, json};

use super::super::{context::RequestContext, scope::Scope};
use crate::{
    admission::{
        dynamic,
        request::{Operation, Request},
    },
    authn::UserInfo,
    engine::{DeleteOptions, ListOptions, ListResult, Preset, Target, WriteOptions},
    errors::{ApiError, ApiResult},
    meta,
    patch::PatchType,
};

/// How many times a write is admitted again after the object changed under it
/// (kube-apiserver's `GuaranteedUpdate` retries until its request times out).
const ATTEMPTS: usize = 5;

fn user(cx: &RequestContext) -> UserInfo {
    cx.user.clone().unwrap_or_else(UserInfo::anonymous)
}

/// CreateOptions or UpdateOptions as admission is told them.
fn write_options_json(kind: &str, opts: &WriteOptions) -> Value {
    let mut o = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if let Some(m) = o.as_object_mut() {
        if opts.dry_run {
            m.insert("dryRun".into(), json!(["All"]));
        }
        if let Some(manager) = &opts.field_manager {
            m.insert("fieldManager".into(), json!(manager));
        }
    }
    o
}

/// DeleteOptions as admission is told them.
fn delete_options_json(opts: &DeleteOptions) -> Value {
    let mut o = json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"});
    if let Some(m) = o.as_object_mut() {
        if opts.dry_run {
            m.insert("dryRun".into(), json!(["All"]));
        }
        if let Some(p) = &opts.propagation {
            m.insert("propagationPolicy".into(), json!(p));
        }
        if let Some(g) = opts.grace_period_seconds {
            m.insert("gracePeriodSeconds".into(), json!(g));
        }
        let mut pre = serde_json::Map::new();
        if let Some(uid) = &opts.precondition_uid {
            pre.insert("uid".into(), json!(uid));
        }
        if let Some(rv) = &opts.precondition_rv {
            pre.insert("resourceVersion".into(), json!(rv));
        }
        if !pre.is_empty() {
            m.insert("preconditions".into(), Value::Object(pre));
        }
    }
    o
}

/// The admission request of a write on `target`.
fn request(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
    target: &Target,
    operation: Operation,
    dry_run: bool,
    options: Value,
) -> Request {
    Request {
        operation,
        rt: target.rt.clone(),
        subresource: target.subresource.clone().unwrap_or_default(),
        namespace: if scope.rt.namespaced {
            target.namespace.clone().unwrap_or_default()
        } else {
            String::new()
        },
        name: target.name.clone().unwrap_or_default(),
        user: user(cx),
        dry_run,
        options,
        object: None,
        old_object: None,
        audit_annotations: Arc::default(),
    }
}

/// Moves the audit annotations admission added into the request's audit event.
fn record(cx: &mut RequestContext, req: &Request) {
    let added = std::mem::take(&mut *req.audit_annotations.lock());
    if let Some(pending) = cx.audit.as_mut() {
        pending.event.annotations.extend(added);
    }
}

/// The stored object a write on `target` replaces, if any.
fn current(scope: &Scope<'_>, target: &Target) -> Option<Arc<Value>> {
    let name = target.name.clone()?;
    scope
        .engine()
        .store()
        .get(&target.rt.group_resource(), &(target.ns_key(), name))
}

/// The current object as the request's (sub)resource shows it: a Scale for `scale`.
fn shown(scope: &Scope<'_>, target: &Target, obj: &Arc<Value>) -> ApiResult<Value> {
    if target.subresource.as_deref() == Some("scale") {
        return Ok((*crate::scale::to_scale(&target.rt, obj)?).clone());
    }
    Ok((*scope.engine().present(&target.rt, obj.clone())).clone())
}

/// Whether a failed write lost a race: the object moved on from `admitted_rv`.
fn lost_race(scope: &Scope<'_>, target: &Target, err: &ApiError, admitted_rv: &str) -> bool {
    err.code == 409
        && current(scope, target).is_none_or(|c| meta::resource_version(&c) != admitted_rv)
}

fn gave_up(target: &Target) -> ApiError {
    ApiError::conflict(
        &target.rt.group,
        &target.rt.plural,
        target.name.as_deref().unwrap_or_default(),
        "the object has been modified; please apply your changes to the latest version and try again",
    )
}

/// A create (POST, or an apply of a missing object: `object` is then the dry run's).
pub(super) async fn create(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
    target: &Target,
    object: Value,
    opts: &WriteOptions,
) -> ApiResult<Arc<Value>> {
    let engine = scope.engine();
    let warnings = &opts.fields.warnings;
    let mut req = request(
        scope,
        cx,
        target,
        Operation::Create,
        opts.dry_run,
        write_options_json("CreateOptions", opts),
    );
    req.name = meta::name(&object).to_string();
    req.object = Some(object);
    dynamic::mutate(scope.shared, &mut req, warnings).await?;
    record(cx, &req);
    let object = req.object.take().unwrap_or(Value::Null);
    let dry = WriteOptions {
        dry_run: true,
        ..opts.clone()
    };
    let admitted = engine.create(target, object.clone(), &dry)?;
    req.name = meta::name(&admitted).to_string();
    req.object = Some((*admitted).clone());
    dynamic::validate(scope.shared, &req, warnings).await?;
    record(cx, &req);
    if opts.dry_run {
        return Ok(admitted);
    }
    let real = WriteOptions {
        preset: Some(Preset {
            name: meta::name(&admitted).to_string(),
            uid: meta::uid(&admitted).to_string(),
        }),
        ..opts.clone()
    };
    engine.create(target, object, &real)
}

/// An update (PUT) of the object or its subresource.
pub(super) async fn update(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
    body: Value,
    opts: &WriteOptions,
) -> ApiResult<Arc<Value>> {
    let engine = scope.engine();
    let target = &scope.target;
    let warnings = &opts.fields.warnings;
    for _ in 0..ATTEMPTS {
        let Some(old) = current(scope, target) else {
            // The registry answers (404, or its error for the body).
            return engine.update(target, body, opts);
        };
        let admitted_rv = meta::resource_version(&old).to_string();
        let mut req = request(
            scope,
            cx,
            target,
            Operation::Update,
            opts.dry_run,
            write_options_json("UpdateOptions", opts),
        );
        req.old_object = Some(shown(scope, target, &old)?);
        req.object = Some(body.clone());
        dynamic::mutate(scope.shared, &mut req, warnings).await?;
        record(cx, &req);
        let object = req.object.take().unwrap_or(Value::Null);
        let dry = WriteOptions {
            dry_run: true,
            admitted_rv: Some(admitted_rv.clone()),
            ..opts.clone()
        };
        let admitted = match engine.update(target, object.clone(), &dry) {
            Err(err) if lost_race(scope, target, &err, &admitted_rv) => continue,
            other => other?,
        };
        req.object = Some((*admitted).clone());
        dynamic::validate(scope.shared, &req, warnings).await?;
        record(cx, &req);
        if opts.dry_run {
            return Ok(admitted);
        }
        let real = WriteOptions {
            admitted_rv: Some(admitted_rv.clone()),
            ..opts.clone()
        };
        match engine.update(target, object, &real) {
            Err(err) if lost_race(scope, target, &err, &admitted_rv) => continue,
            other => return other,
        }
    }
    Err(gave_up(target))
}

/// A patch of any type (an apply of a missing object is admitted as a create).
pub(super) async fn patch(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
    patch_type: PatchType,
    body: &[u8],
    opts: &WriteOptions,
) -> ApiResult<(u16, Arc<Value>)> {
    let engine = scope.engine();
    let target = &scope.target;
    let warnings = &opts.fields.warnings;
    for _ in 0..ATTEMPTS {
        let old = current(scope, target);
        let admitted_rv = old
            .as_deref()
            .map(|o| meta::resource_version(o).to_string());
        let dry = WriteOptions {
            dry_run: true,
            admitted_rv: admitted_rv.clone(),
            ..opts.clone()
        };
        let (code, patched) =
            match super::patching::apply_patch(engine, target, patch_type, body, &dry) {
                Err(err)
                    if lost_race(scope, target, &err, admitted_rv.as_deref().unwrap_or("")) =>
                {
                    continue;
                }
                other => other?,
            };
        let Some(old) = old.filter(|_| code != 201) else {
            // An apply that creates: the dry run's object, admitted as a create.
            let mut object = (*patched).clone();
            let m = meta::meta_mut(&mut object);
            for field in ["uid", "creationTimestamp", "resourceVersion", "generation"] {
                m.remove(field);
            }
            let creating = Target {
                name: None,
                ..target.clone()
            };
            let create_opts = WriteOptions {
                field_manager: None,
                admitted_rv: None,
                ..opts.clone()
            };
            return create(scope, cx, &creating, object, &create_opts)
                .await
                .map(|o| (201, o));
        };
        let admitted_rv = admitted_rv.unwrap_or_default();
        let mut req = request(
            scope,
            cx,
            target,
            Operation::Update,
            opts.dry_run,
            write_options_json("UpdateOptions", opts),
        );
        req.old_object = Some(shown(scope, target, &old)?);
        req.object = Some((*patched).clone());
        dynamic::mutate(scope.shared, &mut req, warnings).await?;
        record(cx, &req);
        let object = req.object.take().unwrap_or(Value::Null);
        // The patched object is written as a whole, its managedFields as the patch left
        // them.
        let whole = WriteOptions {
            field_manager: None,
            admitted_rv: Some(admitted_rv.clone()),
            ..opts.clone()
        };
        let admitted = if object == *patched {
            patched
        } else {
            let dry_whole = WriteOptions {
                dry_run: true,
                ..whole.clone()
            };
            match engine.update(target, object.clone(), &dry_whole) {
                Err(err) if lost_race(scope, target, &err, &admitted_rv) => continue,
                other => other?,
            }
        };
        req.object = Some((*admitted).clone());
        dynamic::validate(scope.shared, &req, warnings).await?;
        record(cx, &req);
        if opts.dry_run {
            return Ok((200, admitted));
        }
        match engine.update(target, object, &whole) {
            Err(err) if lost_race(scope, target, &err, &admitted_rv) => continue,
            other => return other.map(|o| (200, o)),
        }
    }
    Err(gave_up(target))
}

/// A delete of `target`'s object.
pub(super) async fn delete(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
    target: &Target,
    opts: &DeleteOptions,
) -> ApiResult<Arc<Value>> {
    let engine = scope.engine();
    let warnings = crate::engine::Warnings::default();
    for _ in 0..ATTEMPTS {
        let Some(old) = current(scope, target) else {
            return engine.delete(target, opts);
        };
        let admitted_rv = meta::resource_version(&old).to_string();
        let mut req = request(
            scope,
            cx,
            target,
            Operation::Delete,
            opts.dry_run,
            delete_options_json(opts),
        );
        req.old_object = Some(shown(scope, target, &old)?);
        dynamic::mutate(scope.shared, &mut req, &warnings).await?;
        record(cx, &req);
        dynamic::validate(scope.shared, &req, &warnings).await?;
        record(cx, &req);
        let real = DeleteOptions {
            admitted_rv: Some(admitted_rv.clone()),
            ..opts.clone()
        };
        match engine.delete(target, &real) {
            Err(err) if lost_race(scope, target, &err, &admitted_rv) => continue,
            other => return other,
        }
    }
    Err(gave_up(target))
}

/// A deletecollection: each selected object deleted as [`delete`] deletes it.
pub(super) async fn delete_collection(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
    list_opts: &ListOptions,
    opts: &DeleteOptions,
) -> ApiResult<ListResult> {
    let engine = scope.engine();
    let all = ListOptions {
        limit: None,
        continue_token: None,
        ..list_opts.clone()
    };
    let listed = engine.list(&scope.target, &all)?;
    let mut deleted = Vec::new();
    for item in &listed.items {
        let target = Target {
            rt: scope.target.rt.clone(),
            namespace: Some(meta::namespace(item).to_string()),
            name: Some(meta::name(item).to_string()),
            subresource: None,
        };
        match delete(scope, cx, &target, opts).await {
            Ok(obj) => deleted.push(obj),
            Err(err) if err.code == 404 => {}
            Err(err) => return Err(err),
        }
    }
    Ok(ListResult {
        list_kind: listed.list_kind,
        api_version: listed.api_version,
        items: deleted,
        resource_version: engine.store().current_rv().to_string(),
        continue_token: None,
        remaining_item_count: None,
    })
}
