//! The `core (legacy, empty-named)` API group.

pub mod v1;
