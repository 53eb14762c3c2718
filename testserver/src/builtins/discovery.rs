//! `discovery.k8s.io` (`pkg/registry/discovery/endpointslice/storage`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "discovery.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[row("endpointslices")];
