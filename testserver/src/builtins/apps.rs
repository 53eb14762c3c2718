//! `apps` (kube-apiserver's `pkg/registry/apps/<resource>/storage`, printers.go's
//! workload printers).

use serde_json::Value;

use super::printers::{
    AGE, CONTAINERS, IMAGES, NAME, SELECTOR, col, computed, map_selector, n, spec_replicas,
};
use super::{ALL, Builtin, row};
use crate::registry::{Cell, PrinterColumn};
use crate::strategy::{StrategyRef, apps};

/// The API group.
pub(super) const GROUP: &str = "apps";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        short: &["deploy"],
        categories: ALL,
        generation: true,
        scale: true,
        strategy: || StrategyRef::new(apps::Deployments),
        columns: &[
            NAME,
            computed("Ready", deploy_ready),
            col(
                "Up-to-date",
                "string",
                0,
                Cell::Number(".status.updatedReplicas"),
            ),
            col(
                "Available",
                "string",
                0,
                Cell::Number(".status.availableReplicas"),
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        ..row("deployments")
    },
    Builtin {
        short: &["rs"],
        categories: ALL,
        generation: true,
        fields: &["status.replicas"],
        scale: true,
        strategy: || StrategyRef::new(apps::ReplicaSets),
        columns: REPLICA_COLUMNS,
        ..row("replicasets")
    },
    Builtin {
        short: &["sts"],
        categories: ALL,
        generation: true,
        scale: true,
        strategy: || StrategyRef::new(apps::StatefulSets),
        columns: &[NAME, computed("Ready", sts_ready), AGE, CONTAINERS, IMAGES],
        ..row("statefulsets")
    },
    Builtin {
        short: &["ds"],
        categories: ALL,
        generation: true,
        strategy: || StrategyRef::new(apps::DaemonSets),
        columns: &[
            NAME,
            col(
                "Desired",
                "integer",
                0,
                Cell::Number(".status.desiredNumberScheduled"),
            ),
            col(
                "Current",
                "integer",
                0,
                Cell::Number(".status.currentNumberScheduled"),
            ),
            col("Ready", "integer", 0, Cell::Number(".status.numberReady")),
            col(
                "Up-to-date",
                "integer",
                0,
                Cell::Number(".status.updatedNumberScheduled"),
            ),
            col(
                "Available",
                "integer",
                0,
                Cell::Number(".status.numberAvailable"),
            ),
            computed("Node Selector", ds_node_selector),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        ..row("daemonsets")
    },
    row("controllerrevisions"),
];

/// A ReplicaSet's and a ReplicationController's columns (printers.go prints both alike).
pub(super) const REPLICA_COLUMNS: &[PrinterColumn] = &[
    NAME,
    col("Desired", "integer", 0, Cell::Computed(desired)),
    col("Current", "integer", 0, Cell::Number(".status.replicas")),
    col("Ready", "integer", 0, Cell::Number(".status.readyReplicas")),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

// ---------------------------------------------------------------- cells (printers.go)

fn deploy_ready(o: &Value) -> Value {
    Value::String(format!(
        "{}/{}",
        n(o, "/status/readyReplicas"),
        spec_replicas(o)
    ))
}

fn desired(o: &Value) -> Value {
    Value::from(spec_replicas(o))
}

fn ds_node_selector(o: &Value) -> Value {
    map_selector(o, "/spec/template/spec/nodeSelector")
}

fn sts_ready(o: &Value) -> Value {
    Value::String(format!(
        "{}/{}",
        n(o, "/status/readyReplicas"),
        spec_replicas(o)
    ))
}
