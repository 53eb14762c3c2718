//! Strategies of the `batch` group: the defaulters of `pkg/apis/batch/v1/defaults.go`.

use serde_json::{Value, json};

use super::Strategy;
use super::defaults::{at, default, pod_template};

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
