//! `scheduling.k8s.io` (`pkg/registry/scheduling/priorityclass/storage`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "scheduling.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[Builtin {
    short: &["pc"],
    ..row("priorityclasses")
}];
