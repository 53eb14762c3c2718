//! `apiextensions.k8s.io` (apiextensions-apiserver's `pkg/registry/customresourcedefinition`).

use crate::strategy::{StrategyRef, apiextensions};

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "apiextensions.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[Builtin {
    short: &["crd", "crds"],
    categories: &["api-extensions"],
    generation: true,
    strategy: || StrategyRef::new(apiextensions::CustomResourceDefinitions),
    ..row("customresourcedefinitions")
}];
