#[derive(kubegen::Resource)]
#[resource(group = "example.com", version = "v1")]
pub struct Foo {
    pub spec: String,
}

fn main() {}
