#[derive(serde::Deserialize, kubegen::Schema)]
#[serde(untagged)]
pub enum Maybe {
    Nothing,
    Number(i32),
}

#[derive(kubegen::Schema)]
pub enum Mixed {
    Plain,
    Data { value: String },
}

#[derive(kubegen::Schema)]
pub struct Pair(i32, String);

#[derive(kubegen::Schema)]
pub struct Odd {
    pub when: std::time::Instant,
    pub pair: (i32, i32),
}

fn main() {}
