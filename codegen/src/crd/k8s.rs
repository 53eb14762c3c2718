//! Kubernetes' own schemas for the k8s-openapi types a field embeds
//! (`PodTemplateSpec`, `Condition`, `Quantity`, `Time` ...).
//!
//! The source is k8s-openapi's `schemars` impls (which k8s-openapi generates from
//! Kubernetes' OpenAPI document): `k8s_definitions.json` holds the definitions of a set
//! of root types and everything they refer to, regenerated and checked by
//! `tests/k8s_definitions.rs`. The generator reads Rust source, where a field only names
//! a type, so it cannot call `JsonSchema` itself; the committed definitions are the same
//! for the CLI and the derive.
//!
//! A definition's `$ref`s are inlined (a CRD schema has no references); a reference's own
//! `description` wins over the target's, as in the published documents. An embedded
//! `ObjectMeta` (a pod template's `metadata`) keeps its full schema: controller-gen's
//! default there, a bare `type: object`, makes kube-apiserver prune the template's labels
//! and annotations (controller-tools issue 462); only the root `metadata` is `type:
//! object` ([`super::manifest`]), as kube-apiserver handles it itself.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

const DEFINITIONS: &str = include_str!("k8s_definitions.json");

/// Every committed definition, by name (`io.k8s.api.apps.v1.Deployment`).
pub fn definitions() -> &'static Map<String, Value> {
    static DEFS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFS.get_or_init(|| match serde_json::from_str(DEFINITIONS) {
        Ok(Value::Object(m)) => m,
        // The file is checked by tests/k8s_definitions.rs; an unreadable copy has no types.
        _ => Map::new(),
    })
}

/// The definition name for a Rust type path: a full `k8s_openapi::a::b::v1::T` path maps
/// to `io.k8s.a.b.v1.T`; a bare `T` (imported by `use`) to the one definition whose
/// last component is `T`. `Err` lists the candidates when a bare name is ambiguous.
pub fn resolve(path: &[String]) -> Result<Option<String>, Vec<String>> {
    let defs = definitions();
    let Some(last) = path.last() else {
        return Ok(None);
    };
    if path.len() > 1 && path[0] == "k8s_openapi" {
        let want = path[1..].join("::");
        return Ok(defs.keys().find(|k| rust_path(k) == want).cloned());
    }
    let matches: Vec<&String> = defs
        .keys()
        .filter(|k| k.rsplit('.').next() == Some(last.as_str()))
        .collect();
    match matches.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some((*one).clone())),
        many => Err(many.iter().map(|s| (*s).clone()).collect()),
    }
}

const SINCE: &str = include_str!("k8s_since.json");

/// The definitions whose k8s-openapi type is newer than k8s-openapi's earliest supported
/// Kubernetes version, with the version that introduced it (`"1_36"`), as
/// `k8s_openapi::k8s_if_ge_1_36!` spells it; checked by `tests/k8s_definitions.rs`.
pub fn since() -> &'static BTreeMap<String, String> {
    static SINCE_MAP: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    SINCE_MAP.get_or_init(|| serde_json::from_str(SINCE).unwrap_or_default())
}

/// The path of definition `name` below `k8s_openapi`: `io.k8s.api.apps.v1.Deployment` →
/// `api::apps::v1::Deployment`, `io.k8s.kube-aggregator.pkg...` → `kube_aggregator::pkg...`.
pub fn rust_path(name: &str) -> String {
    name.strip_prefix("io.k8s.")
        .unwrap_or(name)
        .replace('-', "_")
        .replace('.', "::")
}

/// The inlined schema of definition `name` (`None` when it is not known).
pub fn schema(name: &str) -> Option<Value> {
    let defs = definitions();
    let def = defs.get(name)?;
    let mut stack = vec![name.to_owned()];
    Some(inline(def, defs, &mut stack))
}

fn inline(schema: &Value, defs: &Map<String, Value>, stack: &mut Vec<String>) -> Value {
    let Value::Object(obj) = schema else {
        return schema.clone();
    };
    if let Some(Value::String(target)) = obj.get("$ref") {
        let mut out = if stack.contains(target) {
            // A recursive type: Kubernetes' own CRD schemas stop the recursion with an
            // open object.
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        } else if let Some(def) = defs.get(target) {
            stack.push(target.clone());
            let v = inline(def, defs, stack);
            stack.pop();
            v
        } else {
            json!({"x-kubernetes-preserve-unknown-fields": true})
        };
        if let (Value::Object(out), Some(d)) = (&mut out, obj.get("description")) {
            out.insert("description".into(), d.clone());
        }
        return out;
    }
    let mut out = Map::new();
    for (k, v) in obj {
        let v = match k.as_str() {
            "properties" => match v {
                Value::Object(props) => Value::Object(
                    props
                        .iter()
                        .map(|(p, s)| (p.clone(), inline(s, defs, stack)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" | "additionalProperties" => inline(v, defs, stack),
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(s: &str) -> Vec<String> {
        s.split("::").map(str::to_owned).collect()
    }

    #[test]
    fn full_and_bare_paths_resolve_to_definitions() {
        assert_eq!(
            resolve(&path("k8s_openapi::api::core::v1::PodTemplateSpec")),
            Ok(Some("io.k8s.api.core.v1.PodTemplateSpec".into()))
        );
        assert_eq!(
            resolve(&path("Condition")),
            Ok(Some(
                "io.k8s.apimachinery.pkg.apis.meta.v1.Condition".into()
            ))
        );
        assert_eq!(resolve(&path("NoSuchType")), Ok(None));
    }

    #[test]
    fn references_are_inlined_and_embedded_object_meta_keeps_its_fields() {
        let s = schema("io.k8s.api.core.v1.PodTemplateSpec").expect("known");
        assert_eq!(
            s.pointer("/properties/metadata/properties/labels/additionalProperties/type"),
            Some(&json!("string"))
        );
        let containers = s
            .pointer("/properties/spec/properties/containers/items/properties/name/type")
            .expect("inlined");
        assert_eq!(containers, &json!("string"));
        assert!(!serde_json::to_string(&s).expect("json").contains("$ref"));
        let c = schema("io.k8s.apimachinery.pkg.apis.meta.v1.Condition").expect("known");
        assert_eq!(
            c.pointer("/properties/lastTransitionTime/format"),
            Some(&json!("date-time"))
        );
        let q = schema("io.k8s.apimachinery.pkg.api.resource.Quantity").expect("known");
        assert_eq!(q.get("x-kubernetes-int-or-string"), Some(&json!(true)));
    }
}
