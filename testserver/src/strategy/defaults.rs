//! The scheme defaulters of built-in kinds (`pkg/apis/<group>/v1/defaults.go`): the values
//! kube-apiserver fills in when a body leaves them out, so objects read back as they do
//! from a real cluster. Shared by the strategies of the kinds that embed a pod template.

use serde_json::{Map, Value, json};

use crate::meta;

/// Sets `key` to `value` unless the object already has a non-null value there.
pub fn default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_owned(), value);
    }
}

/// The object at `key`, created empty when missing or null.
pub fn child<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map.entry(key).or_insert_with(|| json!({}));
    meta::ensure_object(slot)
}

/// `obj[path...]` as a map, when every step exists and is an object.
pub fn at<'a>(obj: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = obj;
    for key in path {
        cur = cur.get_mut(*key)?;
    }
    cur.as_object_mut()
}

/// `SetDefaults_Container`'s pull policy: `Always` for `:latest` or an untagged image,
/// else `IfNotPresent` (a digest counts as pinned).
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

/// `SetDefaults_Probe` and `SetDefaults_HTTPGetAction`.
fn probe(p: &mut Map<String, Value>) {
    default(p, "timeoutSeconds", json!(1));
    default(p, "periodSeconds", json!(10));
    default(p, "successThreshold", json!(1));
    default(p, "failureThreshold", json!(3));
    if let Some(http) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
        default(http, "path", json!("/"));
        default(http, "scheme", json!("HTTP"));
    }
}

/// `SetDefaults_Container` (and its ports and probes).
fn container(c: &mut Map<String, Value>) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let policy = pull_policy(image);
    default(c, "imagePullPolicy", json!(policy));
    default(c, "terminationMessagePath", json!("/dev/termination-log"));
    default(c, "terminationMessagePolicy", json!("File"));
    default(c, "resources", json!({}));
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            default(port, "protocol", json!("TCP"));
        }
    }
    for key in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(key).and_then(Value::as_object_mut) {
            probe(p);
        }
    }
}

/// `SetDefaults_PodSpec` and the container defaulters, for a pod's or a template's spec.
pub fn pod_spec(spec: &mut Map<String, Value>) {
    default(spec, "restartPolicy", json!("Always"));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "securityContext", json!({}));
    default(spec, "schedulerName", json!("default-scheduler"));
    for key in ["initContainers", "containers"] {
        if let Some(list) = spec.get_mut(key).and_then(Value::as_array_mut) {
            for c in list.iter_mut().filter_map(Value::as_object_mut) {
                container(c);
            }
        }
    }
}

/// The pod template at `obj[path...]` (`spec.template`), if present.
pub fn pod_template(obj: &mut Value, path: &[&str]) {
    if let Some(spec) = at(obj, path).and_then(|t| t.get_mut("spec")?.as_object_mut()) {
        pod_spec(spec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pkg/apis/core/v1/defaults.go `SetDefaults_Container`.
    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(pull_policy("nginx"), "Always");
        assert_eq!(pull_policy("nginx:latest"), "Always");
        assert_eq!(pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(pull_policy("registry:5000/team/app"), "Always");
        assert_eq!(pull_policy("registry:5000/team/app:v2"), "IfNotPresent");
        assert_eq!(pull_policy("app@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn pod_spec_defaults_fill_only_what_is_missing() {
        let mut spec = json!({
            "restartPolicy": "Never",
            "containers": [{"name": "a", "image": "busybox:1",
                            "ports": [{"containerPort": 80}],
                            "readinessProbe": {"httpGet": {"port": 80}}}]
        });
        pod_spec(spec.as_object_mut().expect("object"));
        assert_eq!(spec["restartPolicy"], "Never");
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(spec["terminationGracePeriodSeconds"], 30);
        let c = &spec["containers"][0];
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c["terminationMessagePolicy"], "File");
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        assert_eq!(c["readinessProbe"]["periodSeconds"], 10);
        assert_eq!(c["readinessProbe"]["httpGet"]["scheme"], "HTTP");
    }
}
