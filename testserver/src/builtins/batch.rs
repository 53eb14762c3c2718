//! `batch` (kube-apiserver's `pkg/registry/batch/<resource>/storage`, printers.go's Job
//! and CronJob printers).

use serde_json::Value;

use super::printers::{
    AGE, CONTAINERS, IMAGES, NAME, SELECTOR, arr, col, computed, containers, human_duration, n, s,
    since,
};
use super::{ALL, Builtin, row};
use crate::registry::Cell;
use crate::strategy::{StrategyRef, batch};

/// The API group.
pub(super) const GROUP: &str = "batch";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        categories: ALL,
        generation: true,
        fields: &["status.successful"],
        strategy: || StrategyRef::new(batch::Jobs),
        columns: &[
            NAME,
            computed("Status", job_status),
            computed("Completions", job_completions),
            computed("Duration", job_duration),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        ..row("jobs")
    },
    Builtin {
        short: &["cj"],
        categories: ALL,
        generation: true,
        strategy: || StrategyRef::new(batch::CronJobs),
        columns: &[
            NAME,
            col("Schedule", "string", 0, Cell::Path(".spec.schedule")),
            col("Timezone", "string", 0, Cell::PathOrNone(".spec.timeZone")),
            col("Suspend", "boolean", 0, Cell::Computed(cj_suspend)),
            col("Active", "integer", 0, Cell::Computed(cj_active)),
            computed("Last Schedule", cj_last),
            AGE,
            col("Containers", "string", 1, Cell::Computed(cj_containers)),
            col("Images", "string", 1, Cell::Computed(cj_images)),
            SELECTOR,
        ],
        ..row("cronjobs")
    },
];

// ---------------------------------------------------------------- cells (printers.go)

fn job_status(o: &Value) -> Value {
    let has = |t: &str| {
        arr(o, "/status/conditions").iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some(t)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    };
    let status = if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if o.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    Value::String(status.into())
}

fn job_completions(o: &Value) -> Value {
    let succeeded = n(o, "/status/succeeded");
    match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => Value::String(format!("{succeeded}/{c}")),
        None => {
            let parallelism = o
                .pointer("/spec/parallelism")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if parallelism > 1 {
                Value::String(format!("{succeeded}/1 of {parallelism}"))
            } else {
                Value::String(format!("{succeeded}/1"))
            }
        }
    }
}

fn job_duration(o: &Value) -> Value {
    let start = s(o, "/status/startTime");
    if start.is_empty() {
        return Value::String(String::new());
    }
    let (Ok(a), end) = (
        start.parse::<jiff::Timestamp>(),
        s(o, "/status/completionTime"),
    ) else {
        return Value::String(String::new());
    };
    let b = end
        .parse::<jiff::Timestamp>()
        .unwrap_or_else(|_| crate::clock::now());
    Value::String(human_duration(b.as_second() - a.as_second()))
}

fn cj_suspend(o: &Value) -> Value {
    Value::String(
        o.pointer("/spec/suspend")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            .to_string()
            .replace("true", "True")
            .replace("false", "False"),
    )
}

fn cj_active(o: &Value) -> Value {
    Value::from(arr(o, "/status/active").len())
}

fn cj_last(o: &Value) -> Value {
    let t = s(o, "/status/lastScheduleTime");
    Value::String(if t.is_empty() {
        "<none>".into()
    } else {
        since(t)
    })
}

fn cj_containers(o: &Value) -> Value {
    containers(o, "/spec/jobTemplate/spec/template/spec/containers", "name")
}

fn cj_images(o: &Value) -> Value {
    containers(
        o,
        "/spec/jobTemplate/spec/template/spec/containers",
        "image",
    )
}
