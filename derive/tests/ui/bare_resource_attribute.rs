use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(kubegen::Resource)]
#[resource]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
