//! widgets.example.com/v2beta1: no package-wide deepcopy (only opted-in types), a type
//! that derives its impls instead of having them generated, and a plural exception.
//!
//! +groupName=widgets.example.com

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_resource;

/// Widget v2beta1, cluster-scoped, opted into deepcopy.
///
/// +genclient
/// +genclient:nonNamespaced
/// +k8s:deepcopy-gen=true
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Widget {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Colour.
    pub color: Option<String>,
}

/// Not opted in: no DeepCopy impl.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Unlisted {
    /// Anything.
    pub value: String,
}

/// Sprocket derives `kubegen::Resource`: the CLI leaves both of its impls to the derive.
///
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Resource)]
#[resource(group = "widgets.example.com", version = "v2beta1")]
pub struct Sprocket {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
}

/// Its plural comes from `--plural-exceptions Cactus:cacti`.
///
/// +genclient
/// +k8s:deepcopy-gen=true
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cactus {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
}

/// Cog derives only `DeepCopy`: the CLI still generates its `Resource` impl.
///
/// +genclient
/// +k8s:deepcopy-gen=true
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::deepcopy::DeepCopy)]
pub struct Cog {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Teeth.
    pub teeth: u32,
}
