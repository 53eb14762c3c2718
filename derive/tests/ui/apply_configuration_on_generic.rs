use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::ApplyConfiguration)]
pub struct Wrapper<T> {
    pub inner: T,
}

fn main() {}
