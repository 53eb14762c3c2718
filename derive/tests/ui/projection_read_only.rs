// A projection's client has the read verbs only: a write does not compile.
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(Clone, kubegen::Projection)]
#[projection(of = Pod)]
struct PodPhase {
    metadata: ObjectMeta,
    #[projection(path = "status.phase")]
    phase: Option<String>,
}

async fn write(pods: kubegen::client::ReadClient<PodPhase>, pod: &PodPhase) {
    let _ = pods.create(&Default::default(), pod).await;
}

fn main() {}
