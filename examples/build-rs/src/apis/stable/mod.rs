//! The `stable.example.com` group.

pub mod v1;
