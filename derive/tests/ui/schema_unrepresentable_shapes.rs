#[derive(serde::Deserialize, kubegen::Schema)]
#[serde(untagged)]
pub enum Maybe {
    Nothing,
    Number(i32),
}

#[derive(kubegen::Schema)]
pub struct Unit;

fn main() {}
