use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(kubegen::Resource)]
#[resource(group = 5, version = "v1")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
