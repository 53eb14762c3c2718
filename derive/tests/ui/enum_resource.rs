#[derive(kubegen::Resource)]
#[resource(group = "example.com", version = "v1")]
pub enum Foo {
    A,
    B,
}

fn main() {}
