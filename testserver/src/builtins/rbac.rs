//! `rbac.authorization.k8s.io` (kube-apiserver's `pkg/registry/rbac/<resource>/storage`;
//! names are path segments, `ValidateRBACName`), printers.go's binding printers.

use serde_json::Value;

use super::printers::{AGE, DEFAULT, NAME, arr, col, computed, s};
use super::{Builtin, row};
use crate::registry::{Cell, NameRule, PrinterColumn};
use crate::strategy::{
    StrategyRef,
    rbac::{Bindings, Roles},
};

/// The API group.
pub(super) const GROUP: &str = "rbac.authorization.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        name_rule: NameRule::PathSegment,
        columns: DEFAULT,
        strategy: || StrategyRef::new(Roles { namespaced: true }),
        ..row("roles")
    },
    Builtin {
        name_rule: NameRule::PathSegment,
        columns: DEFAULT,
        strategy: || StrategyRef::new(Roles { namespaced: false }),
        ..row("clusterroles")
    },
    Builtin {
        name_rule: NameRule::PathSegment,
        columns: BINDING_COLUMNS,
        strategy: || StrategyRef::new(Bindings { namespaced: true }),
        ..row("rolebindings")
    },
    Builtin {
        name_rule: NameRule::PathSegment,
        columns: BINDING_COLUMNS,
        strategy: || StrategyRef::new(Bindings { namespaced: false }),
        ..row("clusterrolebindings")
    },
];

/// A RoleBinding's and a ClusterRoleBinding's columns.
const BINDING_COLUMNS: &[PrinterColumn] = &[
    NAME,
    computed("Role", binding_role),
    AGE,
    col("Users", "string", 1, Cell::Computed(binding_users)),
    col("Groups", "string", 1, Cell::Computed(binding_groups)),
    col("ServiceAccounts", "string", 1, Cell::Computed(binding_sas)),
];

// ---------------------------------------------------------------- cells (printers.go)

fn binding_role(o: &Value) -> Value {
    Value::String(format!(
        "{}/{}",
        s(o, "/roleRef/kind"),
        s(o, "/roleRef/name")
    ))
}

fn subjects(o: &Value, kind: &str) -> Value {
    let names: Vec<String> = arr(o, "/subjects")
        .iter()
        .filter(|sub| sub.get("kind").and_then(Value::as_str) == Some(kind))
        .map(|sub| {
            let name = sub.get("name").and_then(Value::as_str).unwrap_or_default();
            match sub.get("namespace").and_then(Value::as_str) {
                Some(ns) if kind == "ServiceAccount" => format!("{ns}/{name}"),
                _ => name.to_string(),
            }
        })
        .collect();
    Value::String(names.join(", "))
}

fn binding_users(o: &Value) -> Value {
    subjects(o, "User")
}

fn binding_groups(o: &Value) -> Value {
    subjects(o, "Group")
}

fn binding_sas(o: &Value) -> Value {
    subjects(o, "ServiceAccount")
}
