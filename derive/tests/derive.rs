//! `#[derive(kubegen::Resource)]` and `#[derive(kubegen::deepcopy::DeepCopy)]` on real
//! types: the impls compile and behave.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::Resource;
use kubegen::deepcopy::DeepCopy;
use serde::{Deserialize, Serialize};

/// +genclient:method=GetScale,verb=get,subresource=scale,result=Scale
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Resource)]
#[resource(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    plural = "foos",
    namespaced
)]
struct Foo {
    metadata: ObjectMeta,
    spec: FooSpec,
    status: Option<FooStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::deepcopy::DeepCopy)]
struct FooSpec {
    replicas: i32,
    labels: BTreeMap<String, String>,
    mode: Mode,
}

/// The result of Foo's `GetScale` extension method.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Scale {
    replicas: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::deepcopy::DeepCopy)]
struct FooStatus {
    ready: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::deepcopy::DeepCopy)]
enum Mode {
    #[default]
    Off,
    On(String),
}

/// A cluster-scoped resource configured through markers only.
///
/// +genclient:nonNamespaced
/// +groupName=widgets.example.com
/// +kubegen:version=v1
/// +resourceName=widgetry
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Resource)]
struct Widget {
    metadata: ObjectMeta,
}

/// Core group, snake-case keys, no DeepCopy.
#[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
#[resource(group = "", version = "v1", non_namespaced, deepcopy = false)]
struct Thing {
    metadata: ObjectMeta,
}

#[derive(Clone, Debug, PartialEq, kubegen::deepcopy::DeepCopy)]
struct Pair<A, B>(A, B);

fn object<K: kubegen::Object>() {}

#[test]
fn derived_resource_impl_has_the_attribute_values() {
    assert_eq!(Foo::kind(&()), "Foo");
    assert_eq!(Foo::plural(&()), "foos");
    assert_eq!(Foo::api_version(&()), "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(
        Foo::url_path(&(), Some("ns")),
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos"
    );
    object::<Foo>();
}

#[test]
fn doc_markers_alone_configure_a_derived_resource() {
    assert_eq!(Widget::group(&()), "widgets.example.com");
    assert_eq!(Widget::version(&()), "v1");
    assert_eq!(Widget::plural(&()), "widgetry");
    assert_eq!(
        Widget::url_path(&(), None),
        "/apis/widgets.example.com/v1/widgetry"
    );
}

#[test]
fn core_group_resources_use_the_legacy_api_prefix() {
    assert_eq!(Thing::api_version(&()), "v1");
    assert_eq!(Thing::url_path(&(), None), "/api/v1/things");
    object::<Thing>();
}

#[test]
fn derived_deep_copy_into_reuses_nested_allocations() {
    let foo = Foo {
        metadata: ObjectMeta {
            name: Some("a".into()),
            ..ObjectMeta::default()
        },
        spec: FooSpec {
            replicas: 2,
            labels: [("k".to_string(), "v".to_string())].into_iter().collect(),
            mode: Mode::On("fast".into()),
        },
        status: Some(FooStatus { ready: true }),
    };
    let mut target = Foo::default();
    target.spec.mode = Mode::On(String::with_capacity(64));
    foo.deep_copy_into(&mut target);
    assert_eq!(target, foo);
    let Mode::On(text) = &target.spec.mode else {
        panic!("mode not copied: {:?}", target.spec.mode);
    };
    assert!(text.capacity() >= 64);
    assert_eq!(foo.deep_copy(), foo);
}

#[test]
fn derived_deep_copy_handles_generic_tuple_structs() {
    let pair = Pair("x".to_string(), vec![1u8, 2]);
    assert_eq!(pair.deep_copy(), pair);
}

#[tokio::test]
async fn derived_types_get_a_typed_client_lister_and_informer() {
    let fake = kubegen_testserver::fake::Fake::new();
    fake.register::<Foo>(true);
    let foos = FooClient::new(fake.client(), "team-a");
    let mut foo = Foo::default();
    foo.metadata.name = Some("a".into());
    foo.spec.replicas = 2;
    foos.create(&Default::default(), &foo).await.unwrap();
    assert_eq!(foos.get("a").await.unwrap().spec.replicas, 2);

    fake.prepend_reactor("get", "foos", |action| {
        (action.subresource == "scale").then(|| Ok(serde_json::json!({"replicas": 5})))
    });
    assert_eq!(foos.get_scale("a").await.unwrap(), Scale { replicas: 5 });

    let factory = kubegen::informers::SharedInformerFactory::new(fake.client(), Default::default());
    let informer = FooInformer::new(factory.clone());
    let lister: FooLister = informer.lister();
    factory.start();
    let stop = tokio_util::sync::CancellationToken::new();
    assert!(
        factory
            .wait_for_cache_sync(&stop)
            .await
            .values()
            .all(|s| *s)
    );
    assert_eq!(lister.foos("team-a").get("a").unwrap().spec.replicas, 2);
    assert!(lister.foos("team-b").get("a").unwrap_err().is_not_found());
    factory.shutdown().await;
}
