//! shapes.kubegen.dev/v2: a newer Meter, merged with v1's into one CRD.
//!
//! +groupName=shapes.kubegen.dev

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A Meter with a unit.
/// +genclient
pub struct Meter {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The reading.
    #[serde(default)]
    pub value: i64,
    /// Its unit.
    #[serde(default)]
    pub unit: String,
}
