//! `batch/v1`: marked aliases of k8s-openapi's batch v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=batch

/// `CronJob` (batch/v1, `cronjobs`, namespaced).
///
/// +genclient
pub type CronJob = k8s_openapi::api::batch::v1::CronJob;

/// `Job` (batch/v1, `jobs`, namespaced).
///
/// +genclient
pub type Job = k8s_openapi::api::batch::v1::Job;
