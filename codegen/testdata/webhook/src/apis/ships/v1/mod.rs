//! ships.kubegen.dev/v1: the served-but-not-stored version of a two-version kind
//! (golden output of `kubegen-codegen crd` and `webhook` in `../../../config/`).
//!
//! +groupName=ships.kubegen.dev

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// A Ship, as v1 spells it.
///
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ship {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    pub spec: ShipSpec,
}

/// The desired state of a v1 Ship.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShipSpec {
    /// The crew, as one number.
    /// +kubebuilder:validation:Minimum=0
    pub crew: i32,
}

/// A list of Ships.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShipList {
    /// List metadata.
    #[serde(default)]
    pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta,
    /// The Ships.
    pub items: Vec<Ship>,
}
