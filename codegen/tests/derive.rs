//! `#[derive(kubegen::Resource)]` and `#[derive(kubegen::deepcopy::DeepCopy)]` on real
//! types: the impls compile and behave. (Beside the generator rather than in derive/tests,
//! whose trybuild UI tests rebuild every dev-dependency of that crate: this file needs the
//! test server.)

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
        (action.request.subresource == "scale").then(|| Ok(serde_json::json!({"replicas": 5})))
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

mod apply_configuration {
    //! `#[derive(kubegen::ApplyConfiguration)]`: the configuration serializes only what
    //! was set, and extraction reads a manager's fields back.
    use k8s_openapi::api::core::v1::PodTemplateSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        FieldsV1, ManagedFieldsEntry, ObjectMeta,
    };
    use kubegen::applyconfig::ApplyConfiguration as _;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(
        Clone,
        Debug,
        Default,
        PartialEq,
        Serialize,
        Deserialize,
        kubegen::Resource,
        kubegen::ApplyConfiguration,
    )]
    #[resource(group = "example.com", version = "v1")]
    pub struct Gizmo {
        pub metadata: ObjectMeta,
        pub spec: GizmoSpec,
    }

    #[derive(
        Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::ApplyConfiguration,
    )]
    #[serde(rename_all = "camelCase")]
    pub struct GizmoSpec {
        pub replicas: i32,
        pub paused: bool,
        pub mode: Mode,
        pub template: Option<PodTemplateSpec>,
        pub ports: Vec<u16>,
    }

    #[derive(
        Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::ApplyConfiguration,
    )]
    pub enum Mode {
        #[default]
        Fast,
        Careful,
    }

    #[test]
    fn only_what_was_set_is_sent() {
        let config = GizmoApplyConfiguration::new("g", "ns").with_spec(
            GizmoSpecApplyConfiguration::new()
                .with_replicas(3)
                .with_mode(Mode::Careful)
                .with_ports([80u16])
                .with_ports([443u16]),
        );
        assert_eq!(config.name(), Some("g"));
        assert_eq!(config.namespace(), Some("ns"));
        assert_eq!(
            serde_json::to_value(&config).unwrap(),
            json!({
                "apiVersion": "example.com/v1",
                "kind": "Gizmo",
                "metadata": {"name": "g", "namespace": "ns"},
                "spec": {"replicas": 3, "mode": "Careful", "ports": [80, 443]}
            })
        );
    }

    #[test]
    fn extraction_keeps_the_managers_fields() {
        let gizmo = Gizmo {
            metadata: ObjectMeta {
                name: Some("g".into()),
                namespace: Some("ns".into()),
                managed_fields: Some(vec![ManagedFieldsEntry {
                    manager: Some("ctrl".into()),
                    operation: Some("Apply".into()),
                    fields_v1: Some(FieldsV1(json!({"f:spec": {"f:paused": {}}}))),
                    ..ManagedFieldsEntry::default()
                }]),
                ..ObjectMeta::default()
            },
            spec: GizmoSpec {
                replicas: 7,
                paused: true,
                ..GizmoSpec::default()
            },
        };
        let mine = extract_gizmo(&gizmo, "ctrl").unwrap();
        assert_eq!(
            mine,
            GizmoApplyConfiguration::new("g", "ns")
                .with_spec(GizmoSpecApplyConfiguration::new().with_paused(true))
        );
        let none = extract_gizmo(&gizmo, "someone-else").unwrap();
        assert_eq!(none, GizmoApplyConfiguration::new("g", "ns"));
    }
}
