//! Foo and friends.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};
use serde::{Deserialize, Serialize};

/// Foo is a specification for a Foo resource: namespaced, with a status subresource and
/// two scale extension methods.
///
/// +genclient
/// +genclient:method=GetScale,verb=get,subresource=scale,result=Scale
/// +genclient:method=UpdateScale,verb=update,subresource=scale,input=Scale,result=Scale
/// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Foo {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: FooSpec,
    /// Observed state.
    pub status: Option<FooStatus>,
}

/// FooSpec is the spec for a Foo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FooSpec {
    /// The deployment to manage.
    pub deployment_name: String,
    /// Desired replicas.
    pub replicas: Option<i32>,
    /// Free-form settings.
    pub settings: BTreeMap<String, String>,
    /// Rollout phases.
    pub phases: Vec<Phase>,
}

/// FooStatus is the status for a Foo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FooStatus {
    /// Available replicas.
    pub available_replicas: i32,
}

/// FooList is a list of Foo resources (never `+genclient`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FooList {
    /// List metadata.
    pub metadata: ListMeta,
    /// The items.
    pub items: Vec<Foo>,
}

/// Scale is the scale subresource (a tuple struct).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Scale(pub i32, pub Option<String>);

/// Phase of a rollout: every enum variant shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Phase {
    /// Not started.
    Pending,
    /// Running since a time, on some nodes.
    Running {
        /// RFC 3339 time.
        since: String,
        /// Node names.
        nodes: Vec<String>,
    },
    /// Failed with a reason and a code.
    Failed(String, i32),
}

/// Bar has a status field but `+genclient:noStatus`: no UpdateStatus.
///
/// +genclient
/// +genclient:noStatus
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bar {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Free-form status that is not a subresource.
    pub status: Option<String>,
}

/// Baz is read-only: get, list and watch.
///
/// +genclient
/// +genclient:readonly
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Baz {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
}

/// Opted out of the package-wide deepcopy.
///
/// +k8s:deepcopy-gen=false
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NotCopied {
    /// Anything.
    pub value: String,
}

/// A generic holder: its DeepCopy impl bounds `T: DeepCopy`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Holder<T> {
    /// The held values.
    pub values: Vec<T>,
}

/// Types in a public inline module are reachable from the generated files.
pub mod extra {
    /// A struct in an inline module.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Note {
        /// The text.
        pub text: String,
    }
}
