//! `codegen/src/crd/k8s_definitions.json` is k8s-openapi's own schemas (its `schemars`
//! impls, generated from Kubernetes' OpenAPI document) for the types a CRD field may
//! embed, with every definition they refer to. The CRD generator reads Rust source and
//! cannot call `JsonSchema` on a type it only names, so the definitions are committed;
//! this test regenerates them and fails when the committed file differs (after a
//! k8s-openapi upgrade, `KUBEGEN_UPDATE_DEFINITIONS=1 cargo test -p kubegen-codegen --test
//! k8s_definitions` rewrites it). Roots: the types CRDs commonly embed; everything they
//! refer to comes along.

use std::path::Path;

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

/// Adds `T`'s definition and every definition it refers to.
fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

fn definitions() -> Map<String, Value> {
    let mut generator = SchemaGenerator::default();
    add::<core::PodTemplateSpec>(&mut generator);
    add::<core::PodSpec>(&mut generator);
    add::<core::ResourceRequirements>(&mut generator);
    add::<core::ObjectReference>(&mut generator);
    add::<core::LocalObjectReference>(&mut generator);
    add::<core::TypedLocalObjectReference>(&mut generator);
    add::<core::SecretReference>(&mut generator);
    add::<core::PersistentVolumeClaimSpec>(&mut generator);
    add::<core::PersistentVolumeClaimTemplate>(&mut generator);
    add::<core::ServicePort>(&mut generator);
    add::<core::ServiceSpec>(&mut generator);
    add::<core::NodeSpec>(&mut generator);
    add::<core::SecretKeySelector>(&mut generator);
    add::<core::ConfigMapKeySelector>(&mut generator);
    add::<apps::DeploymentStrategy>(&mut generator);
    add::<batch::JobSpec>(&mut generator);
    add::<meta::Condition>(&mut generator);
    add::<meta::LabelSelector>(&mut generator);
    add::<meta::OwnerReference>(&mut generator);
    add::<meta::MicroTime>(&mut generator);
    generator
        .take_definitions(true)
        .into_iter()
        .map(|(k, v)| (k, strip_refs_prefix(v)))
        .collect()
}

/// `#/$defs/X` → `X` (the generator resolves plain definition names).
fn strip_refs_prefix(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get_mut("$ref")
                    && let Some(name) = r.strip_prefix("#/$defs/")
                {
                    *r = name.to_owned();
                }
                m.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

#[test]
fn committed_definitions_are_k8s_openapis() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/crd/k8s_definitions.json");
    let mut want = serde_json::to_string_pretty(&Value::Object(definitions())).expect("json");
    want.push('\n');
    if std::env::var_os("KUBEGEN_UPDATE_DEFINITIONS").is_some() {
        std::fs::write(&path, &want).expect("write definitions");
    }
    let have = std::fs::read_to_string(&path).expect("read definitions");
    assert!(
        have == want,
        "{} is stale: run KUBEGEN_UPDATE_DEFINITIONS=1 cargo test -p kubegen-codegen --test k8s_definitions",
        path.display()
    );
}
