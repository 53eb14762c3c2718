//! The `autoscaling` API group.

pub mod v1;
pub mod v2;
