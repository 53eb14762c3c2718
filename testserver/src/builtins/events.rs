//! `events.k8s.io` (the core Event stored under a second group: `pkg/registry/core/event`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "events.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[Builtin {
    short: &["ev"],
    ..row("events")
}];
