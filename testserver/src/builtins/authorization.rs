//! `authorization.k8s.io`: create-only reviews, answered and never stored
//! (`pkg/registry/authorization/*`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "authorization.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    row("localsubjectaccessreviews"),
    row("selfsubjectaccessreviews"),
    row("selfsubjectrulesreviews"),
    row("subjectaccessreviews"),
];
