//! The sample controller's Foo → Deployment logic on kubegen's controller builder.
//!
//! `examples/sample-controller` wires informers, handlers, a workqueue and workers by hand,
//! as client-go's sample-controller does. This crate states the same controller to
//! [`kubegen::controller`]: a [`Controller`](kubegen::controller::Controller) for `Foo` that
//! owns Deployments, and a reconcile function ([`operator::reconcile`]) that adds a
//! finalizer, creates or updates the Foo's Deployment, reports a `Ready` condition and the
//! available replicas in the Foo's status, records events, and cleans up when the Foo is
//! deleted.
//!
//! * [`Foo`]: the custom resource (`samplecontroller.k8s.io/v1alpha1`), derived.
//! * [`operator`]: the reconcile function and [`operator::manager`].
//! * [`demo`]: the scripted walk-through that `--demo` runs against the embedded server.

// The resource is called Foo, as in kubernetes/sample-controller.
#![allow(clippy::disallowed_names)]

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};

pub mod demo;
pub mod operator;
pub mod webhook;

/// The CRD of the Foo resource: [`Foo::crd()`] as YAML, written by `foo-operator crd`
/// into `config/crd/samplecontroller.k8s.io_foos.yaml` (checked by
/// `hack/verify-codegen.sh`).
pub const CRD_YAML: &str = include_str!("../config/crd/samplecontroller.k8s.io_foos.yaml");

/// A Foo asks for a Deployment with a name and a replica count.
///
/// +kubebuilder:subresource:status
/// +kubebuilder:resource:singular=foo
/// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"
/// +kubebuilder:printcolumn:name="Deployment",type=string,JSONPath=".spec.deploymentName"
/// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas"
/// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Resource, kubegen::Schema,
)]
#[resource(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    plural = "foos",
    namespaced,
    deepcopy = false
)]
pub struct Foo {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired Deployment.
    #[serde(default)]
    pub spec: FooSpec,
    /// What the operator observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FooStatus>,
}

impl Foo {
    /// A Foo named `name` (no namespace: the client's) that wants Deployment
    /// `deployment_name` with `replicas` replicas.
    pub fn for_deployment(name: &str, deployment_name: &str, replicas: i32) -> Foo {
        Foo {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            spec: FooSpec {
                deployment_name: deployment_name.into(),
                replicas: Some(replicas),
            },
            status: None,
        }
    }
}

/// The desired Deployment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The name of the Deployment the Foo owns (the Foo's own name when left out, set by
    /// the mutating webhook).
    /// +kubebuilder:validation:MinLength=1
    #[serde(default)]
    pub deployment_name: String,
    /// Desired replicas of the Deployment (0 to 10, checked by the validating webhook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// What the operator observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Available replicas of the owned Deployment.
    #[serde(default)]
    pub available_replicas: i32,
    /// `Ready`: the Deployment exists, is the Foo's, and has every replica available.
    /// +listType=map
    /// +listMapKey=type
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
