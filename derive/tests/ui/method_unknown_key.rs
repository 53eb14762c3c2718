use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// +genclient:method=Scale,verb=get,colour=red
#[derive(kubegen::Resource)]
#[resource(group = "example.com", version = "v1")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
