//! The `gateway.networking.k8s.io` group (Gateway API).

pub mod v1;
