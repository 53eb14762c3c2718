//! `networking.k8s.io` (kube-apiserver's `pkg/registry/networking/<resource>/storage`),
//! printers.go's Ingress printer.

use serde_json::Value;

use super::printers::{AGE, NAME, arr, col, computed};
use super::{Builtin, row};
use crate::registry::Cell;

/// The API group.
pub(super) const GROUP: &str = "networking.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        short: &["netpol"],
        generation: true,
        ..row("networkpolicies")
    },
    Builtin {
        short: &["ing"],
        generation: true,
        columns: &[
            NAME,
            col(
                "Class",
                "string",
                0,
                Cell::PathOrNone(".spec.ingressClassName"),
            ),
            computed("Hosts", ing_hosts),
            computed("Address", ing_address),
            computed("Ports", ing_ports),
            AGE,
        ],
        ..row("ingresses")
    },
    Builtin {
        short: &["ip"],
        ..row("ipaddresses")
    },
    row("ingressclasses"),
    row("servicecidrs"),
];

// ---------------------------------------------------------------- cells (printers.go)

fn ing_hosts(o: &Value) -> Value {
    let hosts: Vec<&str> = arr(o, "/spec/rules")
        .iter()
        .filter_map(|r| r.get("host").and_then(Value::as_str))
        .collect();
    Value::String(if hosts.is_empty() {
        "*".into()
    } else {
        hosts.join(",")
    })
}

fn ing_address(o: &Value) -> Value {
    let a: Vec<&str> = arr(o, "/status/loadBalancer/ingress")
        .iter()
        .filter_map(|i| {
            i.get("ip")
                .or_else(|| i.get("hostname"))
                .and_then(Value::as_str)
        })
        .collect();
    Value::String(a.join(","))
}

fn ing_ports(o: &Value) -> Value {
    Value::String(if arr(o, "/spec/tls").is_empty() {
        "80".into()
    } else {
        "80, 443".into()
    })
}
