//! The committed golden clientset, listers, informers and fake clientset of the test API
//! tree (`testdata/client`, generated with `--input-module crate::apis
//! --output-module crate::client --with-fake`) compile and work against the test server.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

#[path = "../testdata/apis/mod.rs"]
#[allow(dead_code)]
mod apis;
#[path = "../testdata/client/mod.rs"]
#[allow(unused_imports, dead_code)] // a private module: not every item is used here
#[rustfmt::skip] // generated code stays as the generator formats it
mod client;

use std::time::Duration;

use apis::samplecontroller::v1alpha1::{Bar, Baz, Foo, FooSpec, FooStatus, Scale};
use apis::widgets::v1::{Activation, Gadget, Widget, WidgetSpec};
use apis::widgets::v2beta1::Sprocket;
use client::applyconfiguration::widgets::v1::{
    WidgetApplyConfiguration, WidgetSpecApplyConfiguration, extract_widget,
};
use client::clientset::versioned::{Clientset, fake};
use client::informers::externalversions::SharedInformerFactory;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::GroupVersionResource;
use kubegen::applyconfig::{ApplyParams, WholeObject};
use kubegen::client::params::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubegen::client::{Client, WatchEvent};
use kubegen_testserver::TestServer;
use kubegen_testserver::fake::Fake;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    }
}

fn foo(name: &str, replicas: i32) -> Foo {
    Foo {
        metadata: meta(name),
        spec: FooSpec {
            deployment_name: format!("{name}-deploy"),
            replicas: Some(replicas),
            ..FooSpec::default()
        },
        status: None,
    }
}

/// A test server serving the test tree's custom resources.
async fn server() -> (TestServer, Client) {
    let server = TestServer::start().await.unwrap();
    let fake = Fake::from_server(server.transport());
    fake.register::<Foo>(true);
    fake.register::<Bar>(false);
    fake.register::<Baz>(false);
    fake.register::<Widget>(true);
    fake.register::<Gadget>(false);
    fake.register::<Sprocket>(false);
    let client = server.client().unwrap();
    let namespaces: kubegen::client::ResourceClient<Namespace> =
        kubegen::client::ResourceClient::cluster(client.clone());
    for ns in ["team-a", "team-b"] {
        let namespace = Namespace {
            metadata: meta(ns),
            ..Namespace::default()
        };
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap();
    }
    (server, client)
}

#[tokio::test]
async fn typed_clients_round_trip_every_verb_over_http() {
    let (_server, client) = server().await;
    let cs = Clientset::new(client);
    let foos = cs.samplecontroller_v1alpha1().foos("team-a");

    let created = foos
        .create(&PostParams::default(), &foo("a", 1))
        .await
        .unwrap();
    assert_eq!(created.spec.deployment_name, "a-deploy");
    let mut with_status = created.clone();
    with_status.status = Some(FooStatus {
        available_replicas: 1,
    });
    let updated = foos
        .update_status(&PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(updated.status.unwrap().available_replicas, 1);

    let patched = foos
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.replicas, Some(3));
    let mut replaced = foos.get("a").await.unwrap();
    replaced.spec.deployment_name = "renamed".into();
    foos.update(&PostParams::default(), &replaced)
        .await
        .unwrap();

    foos.create(&PostParams::default(), &foo("b", 1))
        .await
        .unwrap();
    let every_namespace = cs.samplecontroller_v1alpha1().foos("");
    let all = every_namespace.list(&ListParams::default()).await.unwrap();
    assert_eq!(all.items.len(), 2, "\"\" lists every namespace");
    assert_eq!(
        foos.list_all(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );

    let mut events = foos.watch(&Default::default(), "0").await.unwrap();
    foos.delete("b", &DeleteParams::default()).await.unwrap();
    let mut deleted = false;
    while let Some(event) = futures::StreamExt::next(&mut events).await {
        if let Ok(WatchEvent::Deleted(f)) = event {
            assert_eq!(f.metadata.name.as_deref(), Some("b"));
            deleted = true;
            break;
        }
    }
    assert!(deleted);
    foos.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .unwrap();
    assert!(foos.get("a").await.unwrap_err().is_not_found());

    let widgets = cs.widgets_v1().widgets();
    let widget = Widget {
        metadata: meta("w"),
        spec: WidgetSpec {
            color: "red".into(),
            size: None,
        },
        status: None,
    };
    widgets
        .create(&PostParams::default(), &widget)
        .await
        .unwrap();
    assert_eq!(widgets.get("w").await.unwrap().spec.color, "red");
    // Typed server-side apply: only `spec.color` is sent, so only it becomes the manager's.
    let config = WidgetApplyConfiguration::new("w")
        .with_spec(WidgetSpecApplyConfiguration::new().with_color("blue"));
    let params = ApplyParams::new("kubegen-test").force();
    let applied = widgets.apply(&config, &params).await.unwrap();
    assert_eq!(applied.metadata.name.as_deref(), Some("w"));
    assert_eq!(applied.spec.color, "blue");
    let owned = extract_widget(&applied, "kubegen-test").unwrap();
    assert_eq!(owned, config);

    let bazes = cs.samplecontroller_v1alpha1().bazes("team-a");
    assert!(
        bazes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn informers_and_listers_come_from_the_typed_factory() {
    let (_server, client) = server().await;
    let cs = Clientset::new(client.clone());
    let foos = cs.samplecontroller_v1alpha1().foos("team-a");
    for name in ["a", "b"] {
        let mut f = foo(name, 1);
        f.metadata.labels = Some([("tier".to_owned(), name.to_owned())].into());
        foos.create(&PostParams::default(), &f).await.unwrap();
    }

    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let foo_informers = factory.samplecontroller().v1alpha1().foos();
    let informer = foo_informers.informer();
    let widgets = factory.widgets().v1().widgets();
    widgets.informer();
    factory.start();
    let stop = CancellationToken::new();
    let synced = factory.wait_for_cache_sync(&stop).await;
    assert_eq!(synced.len(), 2);
    assert!(synced.values().all(|s| *s));
    assert!(informer.has_synced());

    let lister = foo_informers.lister();
    assert_eq!(
        lister.foos("team-a").get("a").unwrap().spec.replicas,
        Some(1)
    );
    let err = lister.foos("team-b").get("a").unwrap_err();
    assert!(err.is_not_found());
    assert!(err.to_string().contains("foos.samplecontroller.k8s.io"));
    let selector: kubegen::cache::Selector =
        kube_core::Expression::Equal("tier".into(), "b".into()).into();
    assert_eq!(lister.list(&selector).len(), 1);
    assert!(widgets.lister().get("none").unwrap_err().is_not_found());

    // for_resource creates informers for generated resources on demand.
    let bars = GroupVersionResource::gvr("samplecontroller.k8s.io", "v1alpha1", "bars");
    assert_eq!(factory.for_resource(&bars).unwrap().gvr(), &bars);
    let unknown = GroupVersionResource::gvr("apps", "v1", "deployments");
    assert!(factory.for_resource(&unknown).is_err());
    factory.shutdown().await;
}

#[tokio::test]
async fn standalone_informer_constructors_filter_by_namespace() {
    let (_server, client) = server().await;
    let cs = Clientset::new(client.clone());
    for ns in ["team-a", "team-b"] {
        cs.samplecontroller_v1alpha1()
            .foos(ns)
            .create(&PostParams::default(), &foo("x", 1))
            .await
            .unwrap();
    }
    let informer = apis::widgets::v2beta1::new_sprocket_informer(
        client.clone(),
        "",
        Duration::ZERO,
        Default::default(),
    );
    drop(informer);
    let informer =
        client::informers::externalversions::samplecontroller::v1alpha1::new_foo_informer(
            client,
            "team-b",
            Duration::ZERO,
            kubegen::cache::namespace_indexers(),
        );
    let stop = CancellationToken::new();
    let (informer, run) = informer.spawn(stop.clone());
    assert!(kubegen::cache::wait_for_cache_sync(&stop, &[&informer]).await);
    assert_eq!(informer.indexer().list_keys(), vec!["team-b/x".to_owned()]);
    stop.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn fake_clientset_serves_seeded_objects_and_records_actions() {
    let cs = fake::new_simple_clientset();
    let mut seeded = foo("seeded", 2);
    seeded.metadata.namespace = Some("team-a".into());
    cs.add(&seeded).unwrap();

    let foos = cs.samplecontroller_v1alpha1().foos("team-a");
    assert_eq!(foos.get("seeded").await.unwrap().spec.replicas, Some(2));
    foos.create(&PostParams::default(), &foo("new", 1))
        .await
        .unwrap();
    let actions = cs.fake().actions();
    assert!(
        actions
            .iter()
            .any(|a| a.matches("get", "foos") && a.request.name == "seeded")
    );
    assert!(actions.iter().any(|a| a.matches("create", "foos")));

    // Extension methods reach their subresource; a reactor answers them.
    cs.fake().prepend_reactor("get", "foos", |action| {
        (action.request.subresource == "scale").then(|| Ok(json!([7, "scaled"])))
    });
    let scale: Scale = foos.get_scale("seeded").await.unwrap();
    assert_eq!(scale, Scale(7, Some("scaled".into())));
    cs.fake().prepend_reactor("update", "foos", |action| {
        (action.request.subresource == "scale").then(|| Ok(action.body.clone().unwrap_or_default()))
    });
    let updated = foos
        .update_scale("seeded", &PostParams::default(), &Scale(3, None))
        .await
        .unwrap();
    assert_eq!(updated, Scale(3, None));

    cs.fake().prepend_reactor("create", "gadgets", |action| {
        assert_eq!(action.request.subresource, "activate");
        assert_eq!(action.body.as_ref().unwrap()["by"], "me");
        Some(Ok(json!({
            "apiVersion": "widgets.example.com/v1",
            "kind": "Gadget",
            "metadata": {"name": action.request.name, "namespace": action.request.namespace},
        })))
    });
    let gadget: Gadget = cs
        .widgets_v1()
        .gadgets("team-a")
        .activate("g", &PostParams::default(), &Activation { by: "me".into() })
        .await
        .unwrap();
    assert_eq!(gadget.metadata.name.as_deref(), Some("g"));
}

/// Whether `manager` owns the field at `path` (`["f:spec", "f:color"]`) in `meta`'s
/// `managedFields` (kube-apiserver's `fieldsV1` encoding).
fn owns(meta: &ObjectMeta, manager: &str, path: &[&str]) -> bool {
    meta.managed_fields.iter().flatten().any(|e| {
        e.manager.as_deref() == Some(manager)
            && e.fields_v1.as_ref().is_some_and(|f| {
                path.iter()
                    .try_fold(&f.0, |node, step| node.get(*step))
                    .is_some()
            })
    })
}

/// Server-side apply through generated apply configurations, against the test server's
/// field ownership (kube-apiserver's documented behaviour:
/// kubernetes.io/docs/reference/using-api/server-side-apply/ — "Conflicts", "Merge
/// strategy"; a manager's applied configuration is its whole intent, so omitted fields are
/// left to others, and applying an unchanged intent is a no-op).
#[tokio::test]
async fn apply_configurations_claim_only_the_fields_they_set() {
    let (_server, client) = server().await;
    let widgets = Clientset::new(client).widgets_v1().widgets();
    let painter = ApplyParams::new("painter");
    let sizer = ApplyParams::new("sizer");

    let paint = WidgetApplyConfiguration::new("w")
        .with_spec(WidgetSpecApplyConfiguration::new().with_color("red"));
    widgets.apply(&paint, &painter).await.unwrap();

    // A second manager sets only the size: no conflict, the colour stays the painter's.
    let size = WidgetApplyConfiguration::new("w")
        .with_spec(WidgetSpecApplyConfiguration::new().with_size(3u32));
    let w = widgets.apply(&size, &sizer).await.unwrap();
    assert_eq!(w.spec.color, "red");
    assert_eq!(w.spec.size.as_deref(), Some(&3));
    assert!(owns(&w.metadata, "painter", &["f:spec", "f:color"]));
    assert!(owns(&w.metadata, "sizer", &["f:spec", "f:size"]));
    assert!(!owns(&w.metadata, "sizer", &["f:spec", "f:color"]));

    // extract_widget gives back exactly the manager's intent; applying it again changes
    // nothing, not even the resourceVersion.
    assert_eq!(extract_widget(&w, "sizer").unwrap(), size);
    assert_eq!(extract_widget(&w, "painter").unwrap(), paint);
    let again = widgets
        .apply(&extract_widget(&w, "sizer").unwrap(), &sizer)
        .await
        .unwrap();
    assert_eq!(again.metadata.resource_version, w.metadata.resource_version);

    // Changing a field another manager owns is a 409 Conflict unless forced.
    let recolor = size.clone().with_spec(
        WidgetSpecApplyConfiguration::new()
            .with_size(3u32)
            .with_color("blue"),
    );
    let err = widgets.apply(&recolor, &sizer).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");
    let w = widgets
        .apply(&recolor, &sizer.clone().force())
        .await
        .unwrap();
    assert_eq!(w.spec.color, "blue");
    assert!(!owns(&w.metadata, "painter", &["f:spec", "f:color"]));
    widgets
        .apply(&paint, &painter.clone().force())
        .await
        .unwrap();

    // The same change as a whole typed object: its `color: ""` (a String always
    // serializes) claims and resets the colour it never meant to touch.
    let whole = Widget {
        metadata: meta("w"),
        spec: WidgetSpec {
            color: String::new(),
            size: Some(Box::new(4)),
        },
        status: None,
    };
    let err = widgets
        .apply(&WholeObject(&whole), &ApplyParams::new("wholesale"))
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
    let w = widgets
        .apply(&WholeObject(&whole), &ApplyParams::new("wholesale").force())
        .await
        .unwrap();
    assert_eq!(
        w.spec.color, "",
        "whole-object apply reset the painter's colour"
    );
    assert!(!owns(&w.metadata, "painter", &["f:spec", "f:color"]));
}

/// The same through the generated fake clientset (the in-process test server).
#[tokio::test]
async fn apply_configurations_work_through_the_fake_clientset() {
    let cs = fake::new_simple_clientset();
    let widgets = cs.widgets_v1().widgets();
    let config = WidgetApplyConfiguration::new("f")
        .with_spec(WidgetSpecApplyConfiguration::new().with_color("green"));
    let created = widgets
        .apply(&config, &ApplyParams::new("ctrl"))
        .await
        .unwrap();
    assert_eq!(created.spec.color, "green");
    assert_eq!(extract_widget(&created, "ctrl").unwrap(), config);
    assert!(
        cs.fake()
            .actions()
            .iter()
            .any(|a| a.matches("patch", "widgets"))
    );
}
