//! `coordination.k8s.io` (`pkg/registry/coordination/lease/storage`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "coordination.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[row("leases")];
