//! Strategies of the `apps` group: the defaulters of `pkg/apis/apps/v1/defaults.go`
//! (replicas, update strategies, history limits, the pod template).

use serde_json::{Value, json};

use super::Strategy;
use super::defaults::{at, child, default, pod_template};

/// `apps/v1` Deployments.
#[derive(Debug, Clone, Copy)]
pub struct Deployments;

impl Strategy for Deployments {
    fn name(&self) -> &'static str {
        "deployments"
    }

    /// `SetDefaults_Deployment`.
    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(spec) = at(obj, &["spec"]) {
            default(spec, "replicas", json!(1));
            let strategy = child(spec, "strategy");
            default(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                let rolling = child(strategy, "rollingUpdate");
                default(rolling, "maxUnavailable", json!("25%"));
                default(rolling, "maxSurge", json!("25%"));
            }
            default(spec, "revisionHistoryLimit", json!(10));
            default(spec, "progressDeadlineSeconds", json!(600));
        }
        pod_template(obj, &["spec", "template"]);
    }
}

/// `apps/v1` ReplicaSets.
#[derive(Debug, Clone, Copy)]
pub struct ReplicaSets;

impl Strategy for ReplicaSets {
    fn name(&self) -> &'static str {
        "replicasets"
    }

    /// `SetDefaults_ReplicaSet`.
    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(spec) = at(obj, &["spec"]) {
            default(spec, "replicas", json!(1));
        }
        pod_template(obj, &["spec", "template"]);
    }
}

/// `apps/v1` StatefulSets.
#[derive(Debug, Clone, Copy)]
pub struct StatefulSets;

impl Strategy for StatefulSets {
    fn name(&self) -> &'static str {
        "statefulsets"
    }

    /// `SetDefaults_StatefulSet`.
    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(spec) = at(obj, &["spec"]) {
            default(spec, "podManagementPolicy", json!("OrderedReady"));
            let strategy = child(spec, "updateStrategy");
            default(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                default(child(strategy, "rollingUpdate"), "partition", json!(0));
            }
            let retention = child(spec, "persistentVolumeClaimRetentionPolicy");
            default(retention, "whenDeleted", json!("Retain"));
            default(retention, "whenScaled", json!("Retain"));
            default(spec, "replicas", json!(1));
            default(spec, "revisionHistoryLimit", json!(10));
        }
        pod_template(obj, &["spec", "template"]);
    }
}

/// `apps/v1` DaemonSets.
#[derive(Debug, Clone, Copy)]
pub struct DaemonSets;

impl Strategy for DaemonSets {
    fn name(&self) -> &'static str {
        "daemonsets"
    }

    /// `SetDefaults_DaemonSet`.
    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(spec) = at(obj, &["spec"]) {
            let strategy = child(spec, "updateStrategy");
            default(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                let rolling = child(strategy, "rollingUpdate");
                default(rolling, "maxUnavailable", json!(1));
                default(rolling, "maxSurge", json!(0));
            }
            default(spec, "revisionHistoryLimit", json!(10));
        }
        pod_template(obj, &["spec", "template"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pkg/apis/apps/v1/defaults.go `SetDefaults_Deployment`.
    #[test]
    fn a_bare_deployment_gets_kube_apiservers_defaults() {
        let mut d = json!({"spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
        Deployments.apply_defaults(&mut d);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(d["spec"]["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "Always"
        );
        let mut recreate = json!({"spec": {"strategy": {"type": "Recreate"}, "replicas": 3}});
        Deployments.apply_defaults(&mut recreate);
        assert_eq!(recreate["spec"]["strategy"], json!({"type": "Recreate"}));
        assert_eq!(recreate["spec"]["replicas"], 3);
    }

    #[test]
    fn statefulsets_and_daemonsets_default_their_update_strategies() {
        let mut s = json!({"spec": {}});
        StatefulSets.apply_defaults(&mut s);
        assert_eq!(s["spec"]["updateStrategy"]["rollingUpdate"]["partition"], 0);
        assert_eq!(s["spec"]["podManagementPolicy"], "OrderedReady");
        let mut d = json!({"spec": {}});
        DaemonSets.apply_defaults(&mut d);
        assert_eq!(
            d["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
            1
        );
    }
}
