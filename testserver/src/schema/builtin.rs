//! Schemas of built-in kinds, for their unknown and duplicate fields (fieldValidation):
//! k8s-openapi's `schemars` impls generate the same definitions kube-apiserver publishes at
//! `/openapi/v3` (`io.k8s.api.apps.v1.Deployment`, ...), and [`super::refs`] inlines their
//! `$ref`s into one tree. Nothing is hand-written: a field k8s-openapi's type lacks is
//! unknown, as it is to kube-apiserver's decoder.

use std::{any::TypeId, collections::HashMap, sync::Mutex};

use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
use serde_json::Value;

use super::{CrdSchema, refs};

/// Compiled schemas by type, for the life of the process: a few dozen kinds at most,
/// shared by every server in it (tests start many).
static CACHE: Mutex<Option<HashMap<TypeId, Option<&'static CrdSchema>>>> = Mutex::new(None);

/// `T`'s schema, compiled on the first call in this process.
pub fn schema<T: JsonSchema + 'static>() -> Option<&'static CrdSchema> {
    let id = TypeId::of::<T>();
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let map = cache.get_or_insert_with(HashMap::new);
    *map.entry(id)
        .or_insert_with(|| compile::<T>().map(|s| &*Box::leak(Box::new(s))))
}

/// `T`'s definitions as `/openapi/v3` publishes them: the root schema, and every
/// definition it refers to under `components.schemas` (references rewritten to point
/// there), so `kubectl explain` can walk them.
pub fn published<T: JsonSchema>() -> (Value, serde_json::Map<String, Value>) {
    let mut doc = SchemaGenerator::default()
        .into_root_schema_for::<T>()
        .to_value();
    let mut defs = serde_json::Map::new();
    if let Value::Object(top) = &mut doc {
        if let Some(Value::Object(d)) = top.remove("$defs") {
            defs = d;
        }
        top.remove("$schema");
    }
    rewrite_refs(&mut doc);
    for def in defs.values_mut() {
        rewrite_refs(def);
    }
    (doc, defs)
}

/// `#/$defs/X` → `#/components/schemas/X`, everywhere in `v`.
fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get_mut("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                *r = format!("#/components/schemas/{name}");
            }
            m.values_mut().for_each(rewrite_refs);
        }
        Value::Array(a) => a.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// The fields-only schema of `T` (see [`CrdSchema::fields_only`]), or `None` (logged) if
/// its document does not parse.
pub fn compile<T: JsonSchema>() -> Option<CrdSchema> {
    let name = T::schema_name().into_owned();
    let root = SchemaGenerator::default().into_root_schema_for::<T>();
    let mut doc = root.to_value();
    let mut defs = refs::definitions(&doc);
    if let Value::Object(top) = &mut doc {
        top.remove("$defs");
        top.remove("$schema");
    }
    defs.insert(name.clone(), doc);
    match refs::node_for(&defs, &name) {
        Ok(node) => Some(CrdSchema::fields_only(node)),
        Err(e) => {
            tracing::warn!(kind = %name, path = %e.path, message = %e.message, "built-in schema does not parse; its unknown fields are not checked");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::FieldValidation;
    use k8s_openapi::api::apps::v1::Deployment;
    use serde_json::json;

    /// field_validation.go e2e ("should detect unknown and duplicate fields of a typed
    /// object"): a Deployment's unknown fields are named by path, at any depth, through
    /// k8s-openapi's definitions; known fields, metadata and free-form fields stay.
    #[test]
    fn deployment_unknown_fields_from_k8s_openapi() {
        let s = compile::<Deployment>().expect("Deployment schema");
        let mut obj = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labels": {"a": "b"}},
            "spec": {"replicas": 1, "unknownField": true,
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "i", "foo": 1,
                        "resources": {"limits": {"cpu": "1"}}}]}}}});
        let ok = s
            .check_fields(&mut obj, &["spec.replicas".into()], FieldValidation::Warn)
            .expect("warn");
        assert_eq!(
            ok.warnings,
            vec![
                "unknown field \"spec.template.spec.containers[0].foo\"",
                "unknown field \"spec.unknownField\"",
                "duplicate field \"spec.replicas\"",
            ]
        );
        assert!(obj["spec"].get("unknownField").is_none());
        assert_eq!(
            obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            "1"
        );
    }
}
