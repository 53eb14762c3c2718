//! Strategies of the core group (`pkg/registry/core/*/strategy.go`).

use serde_json::{Value, json};

use super::Strategy;
use super::defaults::{at, child, default, pod_spec, pod_template};
use crate::meta;

/// The label every namespace carries with its own name (`SetDefaults_Namespace`,
/// pkg/apis/core/v1/defaults.go; KEP-2161).
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

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

    /// `SetDefaults_Namespace`: the `kubernetes.io/metadata.name` label, always equal to
    /// the name.
    fn apply_defaults(&self, obj: &mut Value) {
        let name = meta::name(obj).to_owned();
        if name.is_empty() {
            return;
        }
        let labels = child(meta::meta_mut(obj), "labels");
        labels.insert(NAMESPACE_NAME_LABEL.into(), json!(name));
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

    /// `SetDefaults_Pod` and `SetDefaults_PodSpec`.
    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(spec) = at(obj, &["spec"]) {
            pod_spec(spec);
            default(spec, "enableServiceLinks", json!(true));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        meta::ensure_object(obj).insert("status".into(), json!({"phase": "Pending"}));
    }

    /// `CheckGracefulDelete`: the requested period, else the pod's
    /// `terminationGracePeriodSeconds`; 0 for a pod no node runs (unscheduled) or one that
    /// has finished; a negative period becomes 1.
    fn grace_period(&self, obj: &Value, requested: Option<i64>) -> Option<i64> {
        let mut period = requested
            .or_else(|| {
                obj.pointer("/spec/terminationGracePeriodSeconds")
                    .and_then(Value::as_i64)
            })
            .unwrap_or(0);
        let scheduled = obj
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let finished = matches!(
            obj.pointer("/status/phase").and_then(Value::as_str),
            Some("Succeeded" | "Failed")
        );
        if !scheduled || finished {
            period = 0;
        }
        Some(if period < 0 { 1 } else { period })
    }

    /// `binding` (pkg/registry/core/pod/storage/storage.go `BindingREST`, `assignPod`):
    /// the scheduler's assignment of the pod to `target.name`, once; the pod gets
    /// `spec.nodeName` and `PodScheduled=True`.
    fn create_subresource(
        &self,
        name: &str,
        old: &Value,
        body: &Value,
    ) -> Option<crate::errors::ApiResult<Value>> {
        (name == "binding").then(|| bind(old, body))
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }
}

fn bind(old: &Value, body: &Value) -> crate::errors::ApiResult<Value> {
    use crate::errors::{ApiError, Cause};
    let pod = meta::name(old).to_string();
    let Some(node) = body
        .pointer("/target/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    else {
        return Err(ApiError::invalid(
            "",
            "Binding",
            &pod,
            vec![Cause::required("target.name")],
        ));
    };
    let refuse = |why: String| Err(ApiError::conflict("", "pods/binding", &pod, &why));
    if meta::is_deleting(old) {
        return refuse(format!(
            "pod {pod} is being deleted, cannot be assigned to a host"
        ));
    }
    if let Some(current) = old
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        return refuse(format!("pod {pod} is already assigned to node {current:?}"));
    }
    let mut new = old.clone();
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("nodeName".into(), Value::String(node.to_string()));
    }
    let status = meta::ensure_object(&mut new)
        .entry("status")
        .or_insert_with(|| json!({}));
    if let Some(status) = status.as_object_mut() {
        let conditions = status.entry("conditions").or_insert_with(|| json!([]));
        if let Some(list) = conditions.as_array_mut() {
            list.retain(|c| c.get("type").and_then(Value::as_str) != Some("PodScheduled"));
            list.push(json!({
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": null,
                "lastTransitionTime": crate::clock::now_rfc3339(),
            }));
        }
    }
    Ok(new)
}

/// Secrets: `SetDefaults_Secret`.
#[derive(Debug, Clone, Copy)]
pub struct Secrets;

impl Strategy for Secrets {
    fn name(&self) -> &'static str {
        "secrets"
    }

    fn apply_defaults(&self, obj: &mut Value) {
        default(meta::ensure_object(obj), "type", json!("Opaque"));
    }
}

/// PersistentVolumeClaims: `SetDefaults_PersistentVolumeClaimSpec`.
#[derive(Debug, Clone, Copy)]
pub struct PersistentVolumeClaims;

impl Strategy for PersistentVolumeClaims {
    fn name(&self) -> &'static str {
        "persistentvolumeclaims"
    }

    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(spec) = at(obj, &["spec"]) {
            default(spec, "volumeMode", json!("Filesystem"));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        meta::ensure_object(obj).insert("status".into(), json!({"phase": "Pending"}));
    }
}

/// ReplicationControllers: `SetDefaults_ReplicationController` (selector and labels from
/// the template, one replica) and the template's pod spec.
#[derive(Debug, Clone, Copy)]
pub struct ReplicationControllers;

impl Strategy for ReplicationControllers {
    fn name(&self) -> &'static str {
        "replicationcontrollers"
    }

    fn apply_defaults(&self, obj: &mut Value) {
        let template_labels = obj
            .pointer("/spec/template/metadata/labels")
            .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
            .cloned();
        if let Some(labels) = template_labels {
            if let Some(spec) = at(obj, &["spec"])
                && spec
                    .get("selector")
                    .is_none_or(|s| s.as_object().is_none_or(|m| m.is_empty()))
            {
                spec.insert("selector".into(), labels.clone());
            }
            let m = meta::meta_mut(obj);
            if m.get("labels")
                .is_none_or(|l| l.as_object().is_none_or(|m| m.is_empty()))
            {
                m.insert("labels".into(), labels);
            }
        }
        if let Some(spec) = at(obj, &["spec"]) {
            default(spec, "replicas", json!(1));
        }
        pod_template(obj, &["spec", "template"]);
    }
}

/// PodTemplates: the template's pod spec.
#[derive(Debug, Clone, Copy)]
pub struct PodTemplates;

impl Strategy for PodTemplates {
    fn name(&self) -> &'static str {
        "podtemplates"
    }

    fn apply_defaults(&self, obj: &mut Value) {
        pod_template(obj, &["template"]);
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

    /// pkg/apis/core/v1/defaults.go `SetDefaults_Namespace`.
    #[test]
    fn namespaces_are_labelled() {
        let mut ns = json!({"metadata": {"name": "demo", "labels": {"team": "a"}}});
        Namespaces.apply_defaults(&mut ns);
        assert_eq!(
            ns["metadata"]["labels"],
            json!({"team": "a", "kubernetes.io/metadata.name": "demo"})
        );
    }

    #[test]
    fn replication_controllers_take_selector_and_labels_from_the_template() {
        let mut rc = json!({"metadata": {"name": "rc"}, "spec": {"template": {"metadata": {"labels": {"app": "x"}},
            "spec": {"containers": [{"name": "a", "image": "nginx:1"}]}}}});
        ReplicationControllers.apply_defaults(&mut rc);
        assert_eq!(rc["spec"]["selector"], json!({"app": "x"}));
        assert_eq!(rc["metadata"]["labels"], json!({"app": "x"}));
        assert_eq!(rc["spec"]["replicas"], 1);
    }
}
