// A path naming a field the kind does not have is a compile error at the path.
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(Clone, kubegen::Projection)]
#[projection(of = Pod)]
struct PodPlacement {
    metadata: ObjectMeta,
    #[projection(path = "spec.nodeNam")]
    node_name: Option<String>,
    #[projection(path = "stats.phase")]
    phase: Option<String>,
}

fn main() {}
