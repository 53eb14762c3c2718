use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// +kubebuilder:printcolumn:name="Level",type=integer
/// +kubebuilder:printcolumn:name="Size",type=bytes,JSONPath=".spec.size"
/// +kubebuilder:resource:scope=Galaxy
#[derive(kubegen::Schema)]
#[resource(group = "example.com", version = "v1")]
pub struct Gauge {
    pub metadata: ObjectMeta,
    pub spec: GaugeSpec,
}

#[derive(kubegen::Schema)]
pub struct GaugeSpec {
    /// +kubebuilder:validation:Minimum=ten
    pub level: i32,
    /// +kubebuilder:validation:MinLength=1
    pub count: i64,
    /// +kubebuilder:validation:Minimun=1
    pub typo: i32,
    /// +kubebuilder:validation:XValidation:message="no rule"
    pub rule: String,
    /// +listType=bag
    pub items: Vec<String>,
    /// +genclient:noStatus
    pub misplaced: String,
}

fn main() {}
