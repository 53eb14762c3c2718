//! samplecontroller.k8s.io/v1: types in mod.rs itself.
//!
//! +groupName=samplecontroller.k8s.io
//! +k8s:deepcopy-gen=package

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_resource;

/// Foo v1: only create, get, list and watch; plural set explicitly.
///
/// +genclient
/// +genclient:onlyVerbs=create,get,list,watch
/// +resourceName=foos
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Foo {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: FooSpec,
}

/// FooSpec v1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FooSpec {
    /// Desired replicas.
    pub replicas: i32,
    /// Pause the rollout.
    pub paused: bool,
}

/// A private type in mod.rs is still visible to the generated modules.
#[derive(Clone, Debug, Default, PartialEq)]
#[allow(dead_code)]
struct Internal {
    counter: u64,
}
