//! The `DefaultTolerationSeconds` admission plugin, on by default in kube-apiserver
//! (`plugin/pkg/admission/defaulttolerationseconds/admission.go`): a pod created without
//! a toleration for the `node.kubernetes.io/not-ready` or `node.kubernetes.io/unreachable`
//! `NoExecute` taint gets one for 300 seconds
//! (`--default-not-ready-toleration-seconds`, `--default-unreachable-toleration-seconds`),
//! so its pods leave a dead node five minutes after the node lifecycle controller taints
//! it, rather than at once.

use serde_json::{Value, json};

use super::Attributes;
use kubegen::catalog::Verb;

/// How long a pod tolerates a not-ready or unreachable node by default.
pub(crate) const DEFAULT_SECONDS: i64 = 300;

/// The two taints the plugin adds tolerations for.
const KEYS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

/// Adds the default tolerations to a pod being created (any other write is left alone).
pub(crate) fn admit(attributes: &Attributes<'_>, object: Option<&mut Value>) {
    let request = attributes.request;
    let is_pod_create = request.verb == Verb::Create
        && request.group.is_empty()
        && request.resource == "pods"
        && request.subresource.is_empty();
    if let (true, Some(pod)) = (is_pod_create, object) {
        add_tolerations(pod);
    }
}

/// The plugin on one pod: a toleration is added for each key no existing toleration
/// covers (one with that key or an empty key, and the `NoExecute` effect or none).
fn add_tolerations(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let existing = spec
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let covered = |key: &str| {
        existing.iter().any(|t| {
            let t_key = t.get("key").and_then(Value::as_str).unwrap_or_default();
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or_default();
            (t_key == key || t_key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        })
    };
    let added: Vec<Value> = KEYS
        .iter()
        .filter(|key| !covered(key))
        .map(|key| {
            json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                   "tolerationSeconds": DEFAULT_SECONDS})
        })
        .collect();
    if added.is_empty() {
        return;
    }
    let mut tolerations = existing;
    tolerations.extend(added);
    spec.insert("tolerations".into(), Value::Array(tolerations));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `admission_test.go` `TestForgivenessAdmission`: both tolerations are added unless
    /// one for the key (or for every key) with `NoExecute` (or every effect) is there.
    #[test]
    fn pods_get_both_default_tolerations_unless_they_have_their_own() {
        let mut pod = json!({"spec": {"containers": []}});
        add_tolerations(&mut pod);
        let keys: Vec<_> = pod["spec"]["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| (t["key"].clone(), t["tolerationSeconds"].clone()))
            .collect();
        assert_eq!(
            keys,
            [
                (json!("node.kubernetes.io/not-ready"), json!(300)),
                (json!("node.kubernetes.io/unreachable"), json!(300))
            ]
        );
        let mut own = json!({"spec": {"tolerations": [
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "effect": "NoExecute", "tolerationSeconds": 700}]}});
        add_tolerations(&mut own);
        assert_eq!(own["spec"]["tolerations"].as_array().map(Vec::len), Some(2));
        assert_eq!(own["spec"]["tolerations"][0]["tolerationSeconds"], 700);
        let mut everything = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        add_tolerations(&mut everything);
        assert_eq!(
            everything["spec"]["tolerations"].as_array().map(Vec::len),
            Some(1)
        );
        let mut no_schedule = json!({"spec": {"tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}]}});
        add_tolerations(&mut no_schedule);
        assert_eq!(
            no_schedule["spec"]["tolerations"].as_array().map(Vec::len),
            Some(3)
        );
    }
}
