//! widgets.example.com/v1: cluster-scoped and verb-restricted resources.
//!
//! +groupName=widgets.example.com
//! +k8s:deepcopy-gen=package

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_resource;

/// Widget: cluster-scoped, with status, without deleteCollection and patch.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:skipVerbs=deleteCollection,patch
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Widget {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: WidgetSpec,
    /// Observed state.
    pub status: Option<WidgetStatus>,
}

/// WidgetSpec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WidgetSpec {
    /// Colour.
    pub color: String,
    /// Size, boxed.
    pub size: Option<Box<u32>>,
}

/// WidgetStatus.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WidgetStatus {
    /// Ready.
    pub ready: bool,
}

/// Gadget: no verbs at all (a type served only through extension methods), namespaced.
///
/// +genclient
/// +genclient:noVerbs
/// +genclient:method=Activate,verb=create,subresource=activate,input=Activation,result=Gadget
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gadget {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
}

/// The input of Gadget's `Activate` method.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Activation {
    /// Who activates.
    pub by: String,
}
