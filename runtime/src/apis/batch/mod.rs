//! The `batch` API group.

pub mod v1;
