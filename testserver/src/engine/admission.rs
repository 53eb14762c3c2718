//! Schema admission of writes and defaulting of reads: where the engine calls
//! [`crate::schema`]. A write's object (created, updated, patched, applied, or written
//! through `/status` or `/scale`) is admitted against its registry entry's schema before it
//! is stored: `fieldValidation` on unknown and duplicate fields for every kind with a
//! schema; pruning, defaulting, OpenAPI validation and CEL rules for custom resources
//! (apiextensions-apiserver `customresource_handler.go` and `strategy.go`). A read adds
//! defaults the schema gained since the object was written (CRD docs "Defaulting": "when
//! reading from etcd"), and costs nothing when the schema has no defaults.

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;

use super::{Engine, WriteOptions};
use crate::{
    errors::{ApiError, ApiResult},
    meta,
    registry::ResourceType,
    schema::{CrdSchema, FieldError, FieldValidation, Invalid, Refused, Scope},
};

/// Where a request's warnings go (kube-apiserver's per-request recorder,
/// `k8s.io/apiserver/pkg/warning.AddWarning`); the handler answers each as a
/// `Warning: 299 - "..."` header. Clones share the list.
#[derive(Clone, Default)]
pub struct Warnings(Arc<Mutex<Vec<String>>>);

impl Warnings {
    /// Records a warning (once: the same text twice is one header, as in kube-apiserver).
    pub fn add(&self, text: String) {
        let mut list = self.0.lock();
        if !list.contains(&text) {
            list.push(text);
        }
    }

    /// The warnings recorded so far, in order, leaving none.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock())
    }
}

impl std::fmt::Debug for Warnings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Warnings({})", self.0.lock().len())
    }
}

/// How a write's body arrived, which decides how a `Strict` failure is answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum BodyOrigin {
    /// A whole object (create, update, apply): 400 BadRequest `Deployment in version "v1"
    /// cannot be handled as a Deployment: strict decoding error: ...` (`handlers/create.go`,
    /// `update.go` through `transformDecodeError`; `patch.go`'s `applyPatcher` answers 400
    /// too).
    #[default]
    Object,
    /// A JSON or merge patch: 422 on field `patch` with the patched object as its value
    /// (`handlers/patch.go` `jsonPatcher.applyPatchToCurrentObject`).
    JsonPatch,
    /// A strategic merge patch: 422 on field `patch` with the patch map as Go prints it
    /// (`%+v`, [`crate::schema::go_print`]; `patch.go` `strategicPatchObject`).
    StrategicPatch(String),
}

/// The `fieldValidation` side of a write.
#[derive(Debug, Clone, Default)]
pub struct FieldCheck {
    /// `Strict`, `Warn` (the default) or `Ignore`.
    pub mode: FieldValidation,
    /// Paths of the fields the body repeated (`spec.y`).
    pub duplicates: Vec<String>,
    /// How the body arrived.
    pub origin: BodyOrigin,
    /// Where `Warn` reports go.
    pub warnings: Warnings,
}

impl Engine {
    /// Admits `obj` (what is about to be stored; `old` is the stored object on updates)
    /// against `rt`'s schema, leaving it pruned and, for custom resources, defaulted.
    pub(crate) fn admit(
        &self,
        rt: &ResourceType,
        obj: &mut Value,
        old: Option<&Value>,
        scope: Scope,
        opts: &WriteOptions,
    ) -> ApiResult<()> {
        let Some(schema) = self.schema_of(rt) else {
            return Ok(());
        };
        let check = &opts.fields;
        // The patched object as sent, for a strict patch failure's message.
        let sent = (check.mode == FieldValidation::Strict && check.origin == BodyOrigin::JsonPatch)
            .then(|| obj.to_string());
        let result = if rt.builtin {
            schema.check_fields(obj, &check.duplicates, check.mode)
        } else {
            schema.admit(obj, old, &check.duplicates, check.mode, scope)
        };
        match result {
            Ok(admitted) => {
                for w in admitted.warnings {
                    check.warnings.add(w);
                }
                Ok(())
            }
            Err(Refused::Strict(message)) => Err(strict_error(rt, &check.origin, sent, message)),
            Err(Refused::Invalid(invalid)) => {
                let name = old.map_or_else(|| meta::name(obj), meta::name);
                Err(invalid.to_api_error(&rt.group, &rt.kind, name))
            }
        }
    }

    /// `obj` as a read returns it: with the defaults of `rt`'s schema it lacks (a copy only
    /// then). Built-in kinds are never touched.
    pub(crate) fn read_back(&self, rt: &ResourceType, obj: Arc<Value>) -> Arc<Value> {
        if rt.builtin {
            return obj;
        }
        // Written after the schema was served: defaulted on the write path already.
        let written_after = meta::resource_version(&obj)
            .parse::<u64>()
            .is_ok_and(|rv| rv > rt.read_defaults_through);
        if written_after {
            return obj;
        }
        match self.schema_of(rt) {
            Some(schema) if schema.needs_read_back(&obj) => {
                let mut v = (*obj).clone();
                schema.read_back(&mut v);
                Arc::new(v)
            }
            _ => obj,
        }
    }

    fn schema_of<'a>(&self, rt: &'a ResourceType) -> Option<&'a CrdSchema> {
        if !self.config.schema_validation {
            return None;
        }
        rt.schema.as_ref().and_then(|s| s.get())
    }
}

fn strict_error(
    rt: &ResourceType,
    origin: &BodyOrigin,
    sent: Option<String>,
    message: String,
) -> ApiError {
    let value = match origin {
        BodyOrigin::Object => {
            return ApiError::bad_request(format!(
                "{kind} in version {:?} cannot be handled as a {kind}: {message}",
                rt.version,
                kind = rt.kind
            ));
        }
        BodyOrigin::JsonPatch => sent.unwrap_or_default(),
        BodyOrigin::StrategicPatch(patch) => patch.clone(),
    };
    Invalid {
        errors: vec![FieldError::invalid("patch", &Value::String(value), message)],
    }
    .to_api_error("", "", "")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::EngineConfig;

    const CRD: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Foo", "plural": "foos"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer", "default": 1}}}}}}}]}}"#;

    /// The read path (get, list, watch) copies nothing unless an object lacks a default:
    /// objects written under the schema are served as stored, so lists and watches pay one
    /// walk of a defaulted schema and nothing for schemas without defaults or built-ins.
    #[test]
    fn reads_copy_only_objects_missing_a_default() {
        let engine = crate::apiserver::new_engine(EngineConfig::default());
        crate::load_crds(&engine, "crd", CRD).expect("CRD installs");
        let rt = engine
            .registry()
            .get("example.com", "v1", "foos")
            .expect("served");
        let foo = |spec: Value| {
            Arc::new(json!({"apiVersion": "example.com/v1", "kind": "Foo",
                "metadata": {"name": "a", "namespace": "default"}, "spec": spec}))
        };
        let defaulted = foo(json!({"replicas": 3}));
        assert!(Arc::ptr_eq(
            &engine.present(&rt, defaulted.clone()),
            &defaulted
        ));
        let old = foo(json!({}));
        let shown = engine.present(&rt, old.clone());
        assert!(!Arc::ptr_eq(&shown, &old));
        assert_eq!(shown["spec"]["replicas"], 1);
        let off = crate::apiserver::new_engine(EngineConfig::default().schema_validation(false));
        crate::load_crds(&off, "crd", CRD).expect("CRD installs");
        let rt_off = off
            .registry()
            .get("example.com", "v1", "foos")
            .expect("served");
        assert!(Arc::ptr_eq(&off.present(&rt_off, old.clone()), &old));
    }
}
