use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(kubegen::Resource)]
#[resource(group = "example.com", version = "v1")]
pub struct FooList {
    pub metadata: ObjectMeta,
    pub items: Vec<String>,
}

fn main() {}
