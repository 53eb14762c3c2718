//! The `workloads.example.com` group: a workload CRD embedding a pod template.

pub mod v1;
