//! Foo: a desired Deployment, by name and replica count.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};
use serde::{Deserialize, Serialize};

/// Foo is a specification for a Foo resource.
///
/// +genclient
/// +kubebuilder:subresource:status
/// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Foo {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired Deployment.
    #[serde(default)]
    pub spec: FooSpec,
    /// What the controller observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FooStatus>,
}

/// FooSpec is the spec for a Foo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The name of the Deployment the Foo owns.
    #[serde(default)]
    pub deployment_name: String,
    /// Desired replicas of the Deployment.
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=10
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// FooStatus is the status for a Foo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Available replicas of the owned Deployment.
    #[serde(default)]
    pub available_replicas: i32,
}

/// FooList is a list of Foo resources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FooList {
    /// List metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The Foos.
    pub items: Vec<Foo>,
}
