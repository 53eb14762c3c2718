//! samplecontroller.k8s.io/v1alpha1: the Foo resource.
//!
//! +k8s:deepcopy-gen=package
//! +groupName=samplecontroller.k8s.io

mod types;
#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_resource;

pub use types::*;
