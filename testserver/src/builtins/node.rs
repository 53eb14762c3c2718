//! `node.k8s.io` (`pkg/registry/node/runtimeclass/storage`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "node.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[row("runtimeclasses")];
