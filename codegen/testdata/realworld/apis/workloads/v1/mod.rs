//! workloads.example.com/v1: a workload CRD embedding a `PodTemplateSpec` and the
//! scheduling types real workload operators carry
//! (`codegen/testdata/crds/workloads.example.com_batchworkloads.yaml`).
//!
//! +groupName=workloads.example.com
//! +k8s:deepcopy-gen=package

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{
    Affinity, EnvVar, LocalObjectReference, PodTemplateSpec, ResourceRequirements, SecretReference,
    Taint, Toleration, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, MicroTime, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};

#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_resource;

/// A batch of pods run from one template.
///
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchWorkload {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: BatchWorkloadSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BatchWorkloadStatus>,
}

/// The desired workload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchWorkloadSpec {
    /// Pods to run at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i32>,
    /// The pod template.
    pub template: PodTemplateSpec,
    /// Tolerations added to every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,
    /// Affinity added to every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// Resources of the main container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Extra environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    /// Extra volumes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    /// Pull secrets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// Credentials the workload reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<SecretReference>,
    /// Pods that may be down during an update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Scratch storage per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch: Option<Quantity>,
    /// Per-resource caps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<BTreeMap<String, Quantity>>,
    /// Taints the workload's dedicated nodes get.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_taints: Vec<Taint>,
    /// Free-form configuration handed to the workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
    /// An opaque seed (base64 on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<ByteString>,
    /// Do not start before this instant (a `jiff` type: another crate, `Clone` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<jiff::Timestamp>,
    /// Suspended until this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend_until: Option<Time>,
    /// What to do with failed pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
}

/// What to do with failed pods: an enum with data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FailurePolicy {
    /// Give up.
    Fail,
    /// Retry up to a limit, with a backoff.
    Retry {
        /// Retries.
        limit: i32,
        /// Backoff between retries (`10s`).
        backoff: String,
    },
    /// Ignore failures whose exit codes are listed.
    Ignore(Vec<i32>),
}

/// The observed workload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchWorkloadStatus {
    /// Conditions (metav1.Condition).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// When pods were last scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<MicroTime>,
    /// Running pods.
    #[serde(default)]
    pub active: i32,
}
