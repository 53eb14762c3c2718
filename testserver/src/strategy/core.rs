//! Strategies of the core group (`pkg/registry/core/*/strategy.go`).

use serde_json::{Value, json};

use super::Strategy;
use crate::meta;

/// The `kubernetes` finalizer the namespace controller removes once a namespace is empty
/// (`FinalizerKubernetes`, pkg/apis/core/types.go).
pub const KUBERNETES_FINALIZER: &str = "kubernetes";

/// `spec.finalizers` of a namespace.
pub fn spec_finalizers(ns: &Value) -> Vec<String> {
    meta::string_list(ns, "/spec/finalizers")
}

/// pkg/registry/core/namespace/strategy.go.
#[derive(Debug, Clone, Copy)]
pub struct Namespaces;

impl Strategy for Namespaces {
    fn name(&self) -> &'static str {
        "namespaces"
    }

    /// "on create, status is active"; "on create, we require the kubernetes value".
    fn prepare_for_create(&self, obj: &mut Value) {
        let mut finalizers = spec_finalizers(obj);
        if !finalizers.iter().any(|f| f == KUBERNETES_FINALIZER) {
            finalizers.push(KUBERNETES_FINALIZER.to_string());
        }
        let root = meta::ensure_object(obj);
        let spec = root.entry("spec").or_insert_with(|| json!({}));
        meta::ensure_object(spec).insert("finalizers".into(), json!(finalizers));
        root.insert("status".into(), json!({"phase": "Active"}));
    }

    /// Spec finalizers change only through `/finalize`, status only through `/status`.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let old_finalizers = old.pointer("/spec/finalizers").cloned();
        let root = meta::ensure_object(new);
        let spec = root.entry("spec").or_insert_with(|| json!({}));
        let spec = meta::ensure_object(spec);
        match old_finalizers {
            Some(f) => spec.insert("finalizers".into(), f),
            None => spec.remove("finalizers"),
        };
    }

    fn serves_subresource(&self, name: &str) -> bool {
        name == "finalize"
    }

    /// `/finalize` (namespace/storage/storage.go `FinalizeREST`): only `spec.finalizers`
    /// changes.
    fn update_subresource(&self, _name: &str, old: &Value, body: &Value) -> Value {
        let mut new = old.clone();
        let finalizers = body
            .pointer("/spec/finalizers")
            .cloned()
            .unwrap_or_else(|| json!([]));
        let root = meta::ensure_object(&mut new);
        let spec = root.entry("spec").or_insert_with(|| json!({}));
        meta::ensure_object(spec).insert("finalizers".into(), finalizers);
        new
    }

    fn begin_delete(&self, obj: &mut Value) {
        let root = meta::ensure_object(obj);
        let status = root.entry("status").or_insert_with(|| json!({}));
        meta::ensure_object(status).insert("phase".into(), json!("Terminating"));
    }

    fn holds_deletion(&self, obj: &Value) -> bool {
        !spec_finalizers(obj).is_empty()
    }
}

/// pkg/registry/core/pod/strategy.go.
#[derive(Debug, Clone, Copy)]
pub struct Pods;

impl Strategy for Pods {
    fn name(&self) -> &'static str {
        "pods"
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        meta::ensure_object(obj).insert("status".into(), json!({"phase": "Pending"}));
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_namespace_is_active_with_the_kubernetes_finalizer() {
        let mut ns = json!({"metadata": {"name": "a"}, "spec": {"finalizers": ["x/y"]}});
        Namespaces.prepare_for_create(&mut ns);
        assert_eq!(ns["spec"]["finalizers"], json!(["x/y", "kubernetes"]));
        assert_eq!(ns["status"]["phase"], "Active");
        let old = ns.clone();
        let mut new = json!({"metadata": {"name": "a"}, "spec": {"finalizers": []}});
        Namespaces.prepare_for_update(&mut new, &old);
        assert_eq!(new["spec"]["finalizers"], json!(["x/y", "kubernetes"]));
        assert!(Namespaces.holds_deletion(&new));
        Namespaces.begin_delete(&mut new);
        assert_eq!(new["status"]["phase"], "Terminating");
    }
}
