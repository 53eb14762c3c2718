use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// +genclient:onlyVerbs=get,fetch
/// +genclient:method=Remove,verb=delete
/// +k8s:deepcopy-gen=maybe
#[derive(Clone, serde::Serialize, serde::Deserialize, kubegen::Resource)]
#[resource(version = "v1", shortname = "f")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn needs_object<K: kubegen::Object>() {}

#[allow(dead_code)]
fn uses_it() {
    needs_object::<Foo>();
    let foo = Foo { metadata: ObjectMeta::default() };
    let _copy = kubegen::deepcopy::DeepCopy::deep_copy(&foo);
}

fn main() {}
