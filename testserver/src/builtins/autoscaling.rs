//! `autoscaling` (`pkg/registry/autoscaling/horizontalpodautoscaler/storage`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "autoscaling";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[Builtin {
    short: &["hpa"],
    categories: super::ALL,
    ..row("horizontalpodautoscalers")
}];
