//! shapes.kubegen.dev/v1beta1: an older Meter, merged with v1's into one CRD.
//!
//! +groupName=shapes.kubegen.dev

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A Meter as it was.
/// +genclient
/// +kubebuilder:deprecatedversion:warning="shapes.kubegen.dev/v1beta1 Meter is deprecated; use shapes.kubegen.dev/v1"
pub struct Meter {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The reading, as text.
    #[serde(default)]
    pub value: String,
}
