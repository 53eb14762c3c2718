use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// +genclient:nonNamespaced
#[derive(kubegen::Resource)]
#[resource(group = "example.com", version = "v1", namespaced)]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
