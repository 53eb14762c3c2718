//! The `monitoring.coreos.com` group (Prometheus Operator).

pub mod v1;
