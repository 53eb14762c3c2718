//! ships.kubegen.dev/v2: the stored version (the hub) of a two-version kind whose CRD
//! converts through the operator's conversion webhook.
//!
//! +groupName=ships.kubegen.dev

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// A Ship, as v2 spells it. A webhook marker may sit on a type as well (controller-gen
/// reads every comment of a package):
///
/// +genclient
/// +kubebuilder:storageversion
/// +kubebuilder:webhook:conversion
/// +kubebuilder:webhook:path=/validate-ships-kubegen-dev-v2-ship,mutating=false,failurePolicy=fail,sideEffects=None,groups=ships.kubegen.dev,resources=ships,verbs=create;update;delete,versions=v2,name=vship-v2.kb.io,admissionReviewVersions=v1
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ship {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    pub spec: ShipSpec,
}

/// The desired state of a v2 Ship.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShipSpec {
    /// The crew by role.
    pub crew: Vec<String>,
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
