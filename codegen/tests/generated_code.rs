//! Compiles the committed golden output of the test API tree (`testdata/apis`) and
//! exercises the generated `kube_core::Resource` and `DeepCopy` impls.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

#[path = "../testdata/apis/mod.rs"]
#[allow(dead_code)]
mod apis;

use apis::samplecontroller::{v1, v1alpha1};
use apis::widgets::{v1 as widgets_v1, v2beta1};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube_core::Resource;
use kubegen::deepcopy::DeepCopy;

fn namespaced<K: Resource<DynamicType = (), Scope = NamespaceResourceScope>>() {}
fn cluster<K: Resource<DynamicType = (), Scope = ClusterResourceScope>>() {}
fn object<K: kubegen::Object>() {}

#[test]
fn resource_impls_carry_group_version_kind_and_plural() {
    assert_eq!(v1alpha1::Foo::group(&()), "samplecontroller.k8s.io");
    assert_eq!(v1alpha1::Foo::version(&()), "v1alpha1");
    assert_eq!(v1alpha1::Foo::kind(&()), "Foo");
    assert_eq!(
        v1alpha1::Foo::api_version(&()),
        "samplecontroller.k8s.io/v1alpha1"
    );
    assert_eq!(v1alpha1::Foo::plural(&()), "foos");
    assert_eq!(v1::Foo::version(&()), "v1");
    assert_eq!(v1alpha1::Bar::plural(&()), "bars");
    assert_eq!(v1alpha1::Baz::plural(&()), "bazes");
    assert_eq!(widgets_v1::Gadget::plural(&()), "gadgets");
    assert_eq!(
        v2beta1::Cactus::plural(&()),
        "cacti",
        "--plural-exceptions applies"
    );
}

#[test]
fn url_paths_follow_scope() {
    assert_eq!(
        v1alpha1::Foo::url_path(&(), Some("team-a")),
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/team-a/foos"
    );
    assert_eq!(
        widgets_v1::Widget::url_path(&(), None),
        "/apis/widgets.example.com/v1/widgets"
    );
    namespaced::<v1alpha1::Foo>();
    namespaced::<v1alpha1::Bar>();
    namespaced::<widgets_v1::Gadget>();
    namespaced::<v2beta1::Cactus>();
    cluster::<widgets_v1::Widget>();
    cluster::<v2beta1::Widget>();
}

#[test]
fn generated_types_satisfy_the_runtime_object_bound() {
    object::<v1alpha1::Foo>();
    object::<v1::Foo>();
    object::<widgets_v1::Widget>();
    object::<v2beta1::Sprocket>();
}

#[test]
fn a_type_deriving_resource_gets_its_impls_from_the_derive() {
    assert_eq!(v2beta1::Sprocket::plural(&()), "sprockets");
    assert_eq!(
        v2beta1::Sprocket::api_version(&()),
        "widgets.example.com/v2beta1"
    );
    let s = v2beta1::Sprocket {
        metadata: ObjectMeta {
            name: Some("s".into()),
            ..ObjectMeta::default()
        },
    };
    assert_eq!(s.deep_copy(), s);
}

#[test]
fn a_type_deriving_only_deep_copy_gets_a_generated_resource_impl() {
    assert_eq!(v2beta1::Cog::plural(&()), "cogs");
    namespaced::<v2beta1::Cog>();
    let cog = v2beta1::Cog {
        teeth: 12,
        ..Default::default()
    };
    assert_eq!(cog.deep_copy(), cog);
}

#[test]
fn meta_accessors_reach_the_metadata_field() {
    let mut foo = v1alpha1::Foo::default();
    foo.meta_mut().name = Some("foo".into());
    assert_eq!(foo.meta().name.as_deref(), Some("foo"));
    assert_eq!(foo.metadata.name.as_deref(), Some("foo"));
}

fn sample_foo() -> v1alpha1::Foo {
    v1alpha1::Foo {
        metadata: ObjectMeta {
            name: Some("example".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: v1alpha1::FooSpec {
            deployment_name: "example-deploy".into(),
            replicas: Some(3),
            settings: [("k".to_string(), "v".to_string())].into_iter().collect(),
            phases: vec![
                v1alpha1::Phase::Pending,
                v1alpha1::Phase::Running {
                    since: "2026-01-01T00:00:00Z".into(),
                    nodes: vec!["n1".into()],
                },
                v1alpha1::Phase::Failed("oom".into(), 137),
            ],
        },
        status: Some(v1alpha1::FooStatus {
            available_replicas: 2,
        }),
    }
}

#[test]
fn deep_copy_equals_the_original_and_is_independent() {
    let foo = sample_foo();
    let mut copy = foo.deep_copy();
    assert_eq!(copy, foo);
    copy.spec.phases.clear();
    copy.spec.settings.clear();
    assert_eq!(foo.spec.phases.len(), 3);
    assert_eq!(foo.spec.settings.len(), 1);
}

#[test]
fn deep_copy_into_reuses_the_targets_allocations() {
    let foo = sample_foo();
    let mut target = v1alpha1::Foo::default();
    target.spec.deployment_name = String::with_capacity(256);
    target.spec.phases = Vec::with_capacity(64);
    target.spec.phases.push(v1alpha1::Phase::Running {
        since: String::with_capacity(128),
        nodes: Vec::with_capacity(32),
    });
    let (name_cap, phases_cap) = (
        target.spec.deployment_name.capacity(),
        target.spec.phases.capacity(),
    );
    let name_ptr = target.spec.deployment_name.as_ptr();

    foo.deep_copy_into(&mut target);

    assert_eq!(target, foo);
    assert_eq!(target.spec.deployment_name.capacity(), name_cap);
    assert_eq!(target.spec.deployment_name.as_ptr(), name_ptr);
    assert_eq!(target.spec.phases.capacity(), phases_cap);
}

#[test]
fn deep_copy_into_same_enum_variant_updates_in_place() {
    let src = v1alpha1::Phase::Running {
        since: "t1".into(),
        nodes: vec!["a".into(), "b".into()],
    };
    let mut dst = v1alpha1::Phase::Running {
        since: String::with_capacity(100),
        nodes: Vec::with_capacity(50),
    };
    src.deep_copy_into(&mut dst);
    assert_eq!(dst, src);
    let v1alpha1::Phase::Running { since, nodes } = &dst else {
        panic!("variant changed: {dst:?}");
    };
    assert!(since.capacity() >= 100);
    assert!(nodes.capacity() >= 50);
    let other = v1alpha1::Phase::Failed("x".into(), 1);
    other.deep_copy_into(&mut dst);
    assert_eq!(dst, other);
}

#[test]
fn tuple_generic_and_nested_module_types_are_copied() {
    let scale = v1alpha1::Scale(5, Some("s".into()));
    assert_eq!(scale.deep_copy(), scale);
    let holder = v1alpha1::Holder {
        values: vec![scale.clone(), v1alpha1::Scale(1, None)],
    };
    let mut target = v1alpha1::Holder::default();
    holder.deep_copy_into(&mut target);
    assert_eq!(target, holder);
    let note = v1alpha1::extra::Note { text: "n".into() };
    assert_eq!(note.deep_copy(), note);
    let widget = widgets_v1::Widget {
        spec: widgets_v1::WidgetSpec {
            color: "red".into(),
            size: Some(Box::new(4)),
        },
        ..Default::default()
    };
    assert_eq!(widget.deep_copy(), widget);
}
