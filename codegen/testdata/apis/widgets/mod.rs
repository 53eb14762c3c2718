//! The `widgets.example.com` group.

pub mod v1;
pub mod v2beta1;
