use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(kubegen::Resource)]
#[resource(group = "example.com", version = "v1", skip_verbs = "watch,stream")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
