//! `policy` (`pkg/registry/policy/poddisruptionbudget/storage`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "policy";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[Builtin {
    short: &["pdb"],
    generation: true,
    ..row("poddisruptionbudgets")
}];
