//! stable.example.com/v1: CronTab (the CustomResourceDefinition example of the
//! Kubernetes documentation) and the cluster-scoped CronClass.
//!
//! +k8s:deepcopy-gen=package
//! +groupName=stable.example.com

mod types;

pub use types::*;
