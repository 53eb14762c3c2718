// A field type with neither `DeepCopy` nor `Clone` is reported at the field's type.
pub struct Opaque;

#[derive(kubegen::deepcopy::DeepCopy)]
pub struct Holder {
    pub name: String,
    pub inner: Opaque,
}

#[derive(kubegen::deepcopy::DeepCopy)]
pub enum Either {
    Left(Opaque),
    Right { value: Vec<Opaque> },
}

fn main() {}
