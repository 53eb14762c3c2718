//! Update (PUT) and the core every patch shares: the resourceVersion precondition, the
//! status and scale subresource split, the strategy's `PrepareForUpdate` and validation,
//! schema admission (scoped to `status` for the status subresource), generation bumps and
//! no-op detection.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Engine, Target, WriteOptions};
use crate::{
    errors::{ApiError, ApiResult, Cause},
    managed_fields, meta,
    registry::ResourceType,
    schema::Scope,
    store::Write,
};

impl Engine {
    /// Replaces an object (PUT), honouring the resourceVersion precondition and the
    /// status subresource split.
    pub fn update(
        &self,
        target: &Target,
        body: Value,
        opts: &WriteOptions,
    ) -> ApiResult<Arc<Value>> {
        self.check_body(target, &body, false)?;
        let expected_rv = meta::resource_version(&body).to_string();
        self.replace_with(target, opts, move |_old| Ok(Some((body, expected_rv))))
    }

    /// Core of update and patch: `build` turns the current object into the requested one
    /// plus the resourceVersion precondition; `None` from `build` leaves the object as it is.
    pub(crate) fn replace_with<F>(
        &self,
        target: &Target,
        opts: &WriteOptions,
        build: F,
    ) -> ApiResult<Arc<Value>>
    where
        F: FnOnce(&Value) -> ApiResult<Option<(Value, String)>>,
    {
        let rt = target.rt.clone();
        let key = target.key()?;
        let sub = target.subresource.clone();
        if let Some(s) = sub.as_deref() {
            let allowed = match s {
                "status" => rt.status_subresource,
                "scale" => rt.scale.is_some(),
                other => rt.strategy.serves_subresource(other),
            };
            if !allowed {
                return Err(ApiError::not_found(
                    &rt.group,
                    &format!("{}/{s}", rt.plural),
                    target.name_or_empty(),
                ));
            }
        }
        let manager = opts.field_manager.clone();
        let name = key.1.clone();
        let mut finish = None;
        let result = self.store.write(&rt.group_resource(), &key, opts.dry_run, |current| {
            let Some(old) = current else {
                return Err(ApiError::not_found(&rt.group, &rt.plural, &name));
            };
            if let Some(admitted) = &opts.admitted_rv
                && admitted != meta::resource_version(old)
            {
                return Err(ApiError::conflict(
                    &rt.group,
                    &rt.plural,
                    &name,
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
            let Some((body, expected_rv)) = build(old)? else {
                return Ok(Write::Unchanged);
            };
            if !expected_rv.is_empty() && expected_rv != meta::resource_version(old) {
                return Err(ApiError::conflict(
                    &rt.group,
                    &rt.plural,
                    &name,
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
            let mut new = match sub.as_deref() {
                Some("status") => status_update(old, &body),
                Some("scale") => crate::scale::apply_scale(&rt, old, &body)?,
                Some(other) => rt.strategy.update_subresource(other, old, &body),
                None => {
                    if let Some(guard) = &opts.guard {
                        guard.check(&body, Some(old))?;
                    }
                    let mut body = body;
                    rt.strategy.apply_defaults(&mut body);
                    let mut new = main_update(&rt, old, body)?;
                    rt.strategy.prepare_for_update(&mut new, old);
                    let causes = rt.strategy.validate_update(&new, old);
                    if !causes.is_empty() {
                        return Err(ApiError::invalid(&rt.group, &rt.kind, meta::name(old), causes));
                    }
                    finish = rt
                        .strategy
                        .begin_update(&mut new, old)
                        .map_err(|c| ApiError::invalid(&rt.group, &rt.kind, meta::name(old), c))?;
                    new
                }
            };
            let scope = if sub.as_deref() == Some("status") {
                Scope::Status
            } else {
                Scope::Main
            };
            self.admit(&rt, &mut new, Some(old), scope, opts)?;
            if let Some(m) = &manager {
                managed_fields::record_update(
                    &mut new,
                    Some(old),
                    m,
                    &rt.api_version(),
                    sub.as_deref(),
                    rt.builtin,
                );
            }
            finish_update(&rt, old, new)
        });
        if let Some(finish) = finish {
            finish(result.as_ref().is_ok_and(|out| out.event.is_some()));
        }
        let out = result?;
        self.after_write(&rt, &out);
        if target.subresource.as_deref() == Some("scale") {
            return crate::scale::to_scale(&rt, &out.object);
        }
        Ok(self.present(&rt, out.object))
    }
}

/// Main-resource update: keeps server-owned metadata and, with a status subresource, the
/// old status.
fn main_update(rt: &ResourceType, old: &Value, body: Value) -> ApiResult<Value> {
    let mut new = body;
    let old_meta = old.get("metadata").cloned().unwrap_or_else(|| json!({}));
    {
        let root = meta::ensure_object(&mut new);
        root.insert(
            "apiVersion".into(),
            old.get("apiVersion").cloned().unwrap_or(Value::Null),
        );
        root.insert("kind".into(), Value::String(rt.kind.clone()));
        if rt.status_subresource {
            match old.get("status") {
                Some(s) => root.insert("status".into(), s.clone()),
                None => root.remove("status"),
            };
        }
    }
    let m = meta::meta_mut(&mut new);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(field) {
            Some(v) => m.insert(field.into(), v.clone()),
            None => m.remove(field),
        };
    }
    if !m.contains_key("managedFields")
        && let Some(mf) = old_meta.get("managedFields")
    {
        m.insert("managedFields".into(), mf.clone());
    }
    m.remove("resourceVersion");
    meta::drop_empty_collections(&mut new);
    if meta::is_deleting(old) {
        let old_f = meta::finalizers(old);
        let added: Vec<String> = meta::finalizers(&new)
            .into_iter()
            .filter(|f| !old_f.contains(f))
            .collect();
        if !added.is_empty() {
            return Err(ApiError::invalid(
                &rt.group,
                &rt.kind,
                meta::name(old),
                vec![Cause {
                    reason: "FieldValueForbidden".into(),
                    message:
                        "Forbidden: no new finalizers can be added if the object is being deleted"
                            .into(),
                    field: "metadata.finalizers".into(),
                }],
            ));
        }
    }
    let causes = crate::validation::validate_labels(&new);
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            &rt.group,
            &rt.kind,
            meta::name(old),
            causes,
        ));
    }
    Ok(new)
}

/// `/status` update: only the status changes.
fn status_update(old: &Value, body: &Value) -> Value {
    let mut new = old.clone();
    let root = meta::ensure_object(&mut new);
    match body.get("status") {
        Some(s) => root.insert("status".into(), s.clone()),
        None => root.remove("status"),
    };
    if let Some(mf) = body.pointer("/metadata/managedFields") {
        meta::meta_mut(&mut new).insert("managedFields".into(), mf.clone());
    }
    new
}

/// Generation bump, no-op detection and finalizer-driven removal.
fn finish_update(rt: &ResourceType, old: &Value, mut new: Value) -> ApiResult<Write> {
    if rt.generation && spec_changed(rt, old, &new) {
        let g = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta::meta_mut(&mut new).insert("generation".into(), json!(g + 1));
    }
    let mut old_cmp = old.clone();
    meta::meta_mut(&mut old_cmp).remove("resourceVersion");
    let mut new_cmp = new.clone();
    meta::meta_mut(&mut new_cmp).remove("resourceVersion");
    strip_managed_times(&mut old_cmp);
    strip_managed_times(&mut new_cmp);
    if old_cmp == new_cmp {
        return Ok(Write::Unchanged);
    }
    if meta::is_deleting(&new)
        && meta::finalizers(&new).is_empty()
        && !rt.strategy.holds_deletion(&new)
    {
        return Ok(Write::Delete);
    }
    Ok(Write::Put(new))
}

fn strip_managed_times(obj: &mut Value) {
    if let Some(Value::Array(entries)) = obj.pointer_mut("/metadata/managedFields") {
        for e in entries {
            if let Some(m) = e.as_object_mut() {
                m.remove("time");
            }
        }
    }
}

fn spec_changed(rt: &ResourceType, old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            m.remove("apiVersion");
            m.remove("kind");
            if rt.status_subresource {
                m.remove("status");
            }
        }
        v
    };
    strip(old) != strip(new)
}
