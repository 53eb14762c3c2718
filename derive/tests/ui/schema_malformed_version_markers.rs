use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// +kubebuilder:deprecatedversion:warnin="typo"
/// +kubebuilder:metadata:annotations="no-equals-sign"
/// +kubebuilder:metadata:labels="=b"
#[derive(kubegen::Schema)]
#[resource(group = "example.com", version = "v1")]
pub struct Widget {
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
}

/// Has no `kubegen::Schema`: only a `Schemaless` field may hold it.
pub struct Opaque;

#[derive(kubegen::Schema)]
pub struct WidgetSpec {
    /// Schemaless alone is non-structural (no type, nothing preserved).
    /// +kubebuilder:validation:Schemaless
    pub blob: Opaque,
    /// +kubebuilder:validation:Schemaless
    /// +kubebuilder:pruning:PreserveUnknownFields
    pub kept: Opaque,
}

fn main() {}
