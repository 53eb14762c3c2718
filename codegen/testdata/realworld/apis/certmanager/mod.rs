//! The `cert-manager.io` group.

pub mod v1;
