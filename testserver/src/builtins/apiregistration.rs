//! `apiregistration.k8s.io` (kube-aggregator's `pkg/registry/apiservice`).

use crate::registry::NameRule;

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "apiregistration.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[Builtin {
    categories: &["api-extensions"],
    name_rule: NameRule::PathSegment,
    ..row("apiservices")
}];
