//! The built-in Kubernetes API groups as marked type aliases of k8s-openapi types: the
//! input tree of `hack/update-codegen.sh`, which generates [`crate::kubernetes`] from it.
//!
//! Each alias carries client-go's `+genclient` markers; the `Resource` and `DeepCopy`
//! impls live with the aliased k8s-openapi types. Only stable (`v1`, `v2`) resources that
//! every supported k8s-openapi version (1.33 and newer) serves are listed.

pub mod admissionregistration;
pub mod apiextensions;
pub mod apiregistration;
pub mod apps;
pub mod authentication;
pub mod authorization;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod coordination;
pub mod core;
pub mod discovery;
pub mod events;
pub mod flowcontrol;
pub mod networking;
pub mod node;
pub mod policy;
pub mod rbac;
pub mod scheduling;
pub mod storage;
