// A projection names its kind, keeps metadata, and reads each path once.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(Clone, kubegen::Projection)]
struct NoKind {
    metadata: ObjectMeta,
}

#[derive(Clone, kubegen::Projection)]
#[projection(of = k8s_openapi::api::core::v1::Pod)]
struct NoMetadata {
    #[projection(path = "spec")]
    spec: Option<String>,
    #[projection(path = "spec.nodeName")]
    node_name: Option<String>,
}

fn main() {}
