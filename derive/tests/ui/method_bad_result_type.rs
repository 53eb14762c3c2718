use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// +genclient:method=Scale,verb=get,result=not a type
#[derive(kubegen::Resource)]
#[resource(group = "example.com", version = "v1")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
