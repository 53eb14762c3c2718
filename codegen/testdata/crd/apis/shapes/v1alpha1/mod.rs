//! shapes.kubegen.dev/v1alpha1: the first Meter, kept in the CRD but no longer served.
//!
//! +groupName=shapes.kubegen.dev

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A Meter from before it had a value.
/// +genclient
/// +kubebuilder:unservedversion
pub struct Meter {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
}
