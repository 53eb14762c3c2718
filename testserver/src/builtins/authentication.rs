//! `authentication.k8s.io`: create-only reviews, answered and never stored
//! (`pkg/registry/authentication/*`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "authentication.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[row("selfsubjectreviews"), row("tokenreviews")];
