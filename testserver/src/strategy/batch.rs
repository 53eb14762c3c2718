//! Strategies of the `batch` group: the defaulters of `pkg/apis/batch/v1/defaults.go`.

use serde_json::{Value, json};

use super::Strategy;
use super::defaults::{at, child, default, pod_template};
use crate::meta;

/// The label that selects a Job's pods (`batch.ControllerUidLabel`).
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";

/// The labels a generated selector puts on the pod template: the job's name under the
/// legacy and the prefixed key, its uid likewise (`generateSelector`,
/// pkg/registry/batch/job/strategy.go).
const TEMPLATE_LABELS: [(&str, bool); 4] = [
    ("job-name", false),
    ("batch.kubernetes.io/job-name", false),
    ("controller-uid", true),
    (CONTROLLER_UID_LABEL, true),
];

/// `batch/v1` Jobs.
#[derive(Debug, Clone, Copy)]
pub struct Jobs;

impl Strategy for Jobs {
    fn name(&self) -> &'static str {
        "jobs"
    }

    /// `SetDefaults_Job`.
    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(spec) = at(obj, &["spec"]) {
            let unset = |v: Option<&Value>| v.is_none_or(Value::is_null);
            if unset(spec.get("completions")) && unset(spec.get("parallelism")) {
                spec.insert("completions".into(), json!(1));
            }
            default(spec, "parallelism", json!(1));
            if unset(spec.get("backoffLimitPerIndex")) {
                default(spec, "backoffLimit", json!(6));
            }
            default(spec, "completionMode", json!("NonIndexed"));
            default(spec, "suspend", json!(false));
            let replacement = if unset(spec.get("podFailurePolicy")) {
                "TerminatingOrFailed"
            } else {
                "Failed"
            };
            default(spec, "podReplacementPolicy", json!(replacement));
        }
        pod_template(obj, &["spec", "template"]);
    }

    /// `generateSelectorIfNeeded`: unless `spec.manualSelector` is true, the pod template
    /// gets the job's name and uid as labels (keeping labels the user set) and the selector
    /// matches the uid.
    fn prepare_for_create(&self, obj: &mut Value) {
        if obj.pointer("/spec/manualSelector") == Some(&json!(true)) {
            return;
        }
        let name = meta::name(obj).to_owned();
        let uid = meta::uid(obj).to_owned();
        let Some(spec) = at(obj, &["spec"]) else {
            return;
        };
        let template = child(spec, "template");
        let labels = child(child(template, "metadata"), "labels");
        for (key, is_uid) in TEMPLATE_LABELS {
            let value = if is_uid { &uid } else { &name };
            default(labels, key, json!(value));
        }
        let selector = child(spec, "selector");
        let match_labels = child(selector, "matchLabels");
        default(match_labels, CONTROLLER_UID_LABEL, json!(uid));
    }
}

/// `batch/v1` CronJobs.
#[derive(Debug, Clone, Copy)]
pub struct CronJobs;

impl Strategy for CronJobs {
    fn name(&self) -> &'static str {
        "cronjobs"
    }

    /// `SetDefaults_CronJob`, and the job template's pod template.
    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(spec) = at(obj, &["spec"]) {
            default(spec, "concurrencyPolicy", json!("Allow"));
            default(spec, "suspend", json!(false));
            default(spec, "successfulJobsHistoryLimit", json!(3));
            default(spec, "failedJobsHistoryLimit", json!(1));
        }
        pod_template(obj, &["spec", "jobTemplate", "spec", "template"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pkg/registry/batch/job/strategy.go `generateSelector`; a manual selector is left
    /// alone.
    #[test]
    fn jobs_get_a_generated_selector() {
        let mut job = json!({"metadata": {"name": "pi", "uid": "u-1"},
            "spec": {"template": {"metadata": {"labels": {"app": "pi"}}, "spec": {}}}});
        Jobs.prepare_for_create(&mut job);
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"],
            json!({"app": "pi", "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
                "controller-uid": "u-1", "batch.kubernetes.io/controller-uid": "u-1"})
        );
        let mut manual = json!({"metadata": {"name": "m", "uid": "u-2"},
            "spec": {"manualSelector": true, "selector": {"matchLabels": {"a": "b"}}}});
        let before = manual.clone();
        Jobs.prepare_for_create(&mut manual);
        assert_eq!(manual, before);
    }

    /// pkg/apis/batch/v1/defaults.go.
    #[test]
    fn jobs_and_cronjobs_get_their_defaults() {
        let mut job = json!({"spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "a", "image": "busybox:1"}]}}}});
        Jobs.apply_defaults(&mut job);
        assert_eq!(job["spec"]["completions"], 1);
        assert_eq!(job["spec"]["parallelism"], 1);
        assert_eq!(job["spec"]["backoffLimit"], 6);
        assert_eq!(job["spec"]["completionMode"], "NonIndexed");
        assert_eq!(job["spec"]["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
        let mut parallel = json!({"spec": {"parallelism": 3}});
        Jobs.apply_defaults(&mut parallel);
        assert!(
            parallel["spec"].get("completions").is_none(),
            "work-queue jobs keep no completions"
        );
        let mut cron = json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template":
            {"spec": {"containers": [{"name": "a", "image": "busybox"}]}}}}}});
        CronJobs.apply_defaults(&mut cron);
        assert_eq!(cron["spec"]["concurrencyPolicy"], "Allow");
        assert_eq!(cron["spec"]["successfulJobsHistoryLimit"], 3);
        assert_eq!(
            cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
            "ClusterFirst"
        );
    }
}
