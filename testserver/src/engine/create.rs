//! Create (POST): the generic store's `Create` with the strategy's defaulting,
//! `PrepareForCreate` and validation, then schema admission.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Engine, Target, WriteOptions};
use crate::{
    errors::{ApiError, ApiResult, Cause},
    managed_fields, meta,
    registry::ResourceType,
    schema::Scope,
    store::{Write, WriteOutcome},
};

impl Engine {
    /// A POST to a subresource of an existing object (a pod's `binding`): the strategy
    /// decides what the object becomes (`Strategy::create_subresource`).
    pub fn create_subresource(
        &self,
        target: &Target,
        body: &Value,
        opts: &WriteOptions,
    ) -> ApiResult<Arc<Value>> {
        let rt = target.rt.clone();
        let sub = target.subresource.clone().unwrap_or_default();
        let main = Target {
            subresource: None,
            ..target.clone()
        };
        let not_served =
            || ApiError::method_not_allowed("create is not supported on this subresource");
        // Known before the object is read, so a missing subresource is a 405 for any name.
        if rt
            .strategy
            .create_subresource(&sub, &Value::Null, &Value::Null)
            .is_none()
        {
            return Err(not_served());
        }
        self.replace_with(&main, opts, |old| {
            match rt.strategy.create_subresource(&sub, old, body) {
                Some(Ok(new)) => Ok(Some((new, String::new()))),
                Some(Err(err)) => Err(err),
                None => Err(not_served()),
            }
        })
    }

    /// Creates an object (201), or reports AlreadyExists / Invalid / BadRequest.
    pub fn create(
        &self,
        target: &Target,
        body: Value,
        opts: &WriteOptions,
    ) -> ApiResult<Arc<Value>> {
        let rt = target.rt.clone();
        if target.subresource.is_some() {
            return Err(ApiError::method_not_allowed(
                "create is not supported on this subresource",
            ));
        }
        self.check_body(target, &body, true)?;
        let mut obj = body;
        rt.strategy.apply_defaults(&mut obj);
        meta::drop_empty_collections(&mut obj);
        if !meta::resource_version(&obj).is_empty() {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let ns = target.ns_key();
        {
            let m = meta::meta_mut(&mut obj);
            if rt.namespaced {
                m.insert("namespace".into(), Value::String(ns.clone()));
            } else {
                m.remove("namespace");
            }
            let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
            if name.is_empty()
                && let Some(base) = m.get("generateName").and_then(Value::as_str)
            {
                let generated = match &opts.preset {
                    Some(preset) if !preset.name.is_empty() => preset.name.clone(),
                    _ => format!("{base}{}", self.entropy.name_suffix()),
                };
                m.insert("name".into(), Value::String(generated));
            }
        }
        if let Some(guard) = &opts.guard {
            guard.check(&obj, None)?;
        }
        let name = meta::name(&obj).to_string();
        if name.is_empty() {
            return Err(ApiError::invalid(
                &rt.group,
                &rt.kind,
                "",
                vec![Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value: name or generateName is required".into(),
                    field: "metadata.name".into(),
                }],
            ));
        }
        let causes = crate::validation::validate_name(&name, rt.name_rule, "metadata.name");
        if !causes.is_empty() {
            return Err(ApiError::invalid(&rt.group, &rt.kind, &name, causes));
        }
        if let Some(path_name) = &target.name
            && *path_name != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({path_name})"
            )));
        }
        self.require_namespace(target, &name)?;
        let causes = rt.strategy.validate(&obj);
        if !causes.is_empty() {
            return Err(ApiError::invalid(&rt.group, &rt.kind, &name, causes));
        }
        {
            let api_version = rt.api_version();
            let root = meta::ensure_object(&mut obj);
            root.insert("apiVersion".into(), Value::String(api_version));
            root.insert("kind".into(), Value::String(rt.kind.clone()));
            if rt.status_subresource {
                root.remove("status");
            }
            let m = meta::meta_mut(&mut obj);
            let uid = match &opts.preset {
                Some(preset) if !preset.uid.is_empty() => preset.uid.clone(),
                _ => self.entropy.uid(),
            };
            m.insert("uid".into(), Value::String(uid));
            m.insert(
                "creationTimestamp".into(),
                Value::String(crate::clock::now_rfc3339()),
            );
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
            m.remove("selfLink");
            if rt.generation {
                m.insert("generation".into(), json!(1));
            } else {
                m.remove("generation");
            }
        }
        rt.strategy.prepare_for_create(&mut obj);
        let finish = rt
            .strategy
            .begin_create(&mut obj)
            .map_err(|causes| ApiError::invalid(&rt.group, &rt.kind, &name, causes))?;
        let result = self.admit_and_put(&rt, obj, ns, &name, opts);
        if let Some(finish) = finish {
            finish(result.as_ref().is_ok_and(|out| out.event.is_some()));
        }
        let out = result?;
        self.after_write(&rt, &out);
        Ok(self.present(&rt, out.object))
    }

    /// Admission, the field manager's entry and the store write of a prepared object.
    fn admit_and_put(
        &self,
        rt: &ResourceType,
        mut obj: Value,
        ns: String,
        name: &str,
        opts: &WriteOptions,
    ) -> ApiResult<WriteOutcome> {
        self.admit(rt, &mut obj, None, Scope::Main, opts)?;
        if let Some(manager) = &opts.field_manager {
            managed_fields::record_update(
                &mut obj,
                None,
                manager,
                &rt.api_version(),
                None,
                rt.builtin,
            );
        }
        let key = (ns, name.to_owned());
        self.store
            .write(&rt.group_resource(), &key, opts.dry_run, |current| {
                if current.is_some() {
                    Err(ApiError::already_exists(&rt.group, &rt.plural, name))
                } else {
                    Ok(Write::Put(obj))
                }
            })
    }
}
