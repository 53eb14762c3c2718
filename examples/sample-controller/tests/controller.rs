//! The sample controller in-process against the embedded test server: the Deployment is
//! created with the controller ownerReference, scaled with the Foo, the Foo's status
//! follows the Deployment, a foreign Deployment gets a Warning event and an error, and
//! deleting the Foo garbage-collects its Deployment.

#![allow(clippy::unwrap_used, clippy::disallowed_names)]

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kube_core::ObjectMeta;
use kubegen::client::params::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubegen::client::{Client, ResourceClient};
use kubegen_testserver::TestServer;
use sample_controller::apis::samplecontroller::v1alpha1::{Foo, FooSpec};
use sample_controller::client::clientset::versioned::{Clientset, fake};
use sample_controller::controller::{ERR_RESOURCE_EXISTS, SUCCESS_SYNCED, new_deployment};
use sample_controller::demo::wait_for;
use sample_controller::{CRD_YAML, runner};
use serde_json::json;

fn foo(name: &str, deployment: &str, replicas: i32) -> Foo {
    Foo {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: FooSpec {
            deployment_name: deployment.into(),
            replicas: Some(replicas),
        },
        status: None,
    }
}

async fn server() -> (TestServer, Client) {
    let server = TestServer::start().await.unwrap();
    server.load_crd_yaml(CRD_YAML).unwrap();
    let client = server.client().unwrap();
    (server, client)
}

async fn find_deployment(d: &ResourceClient<Deployment>, name: &str) -> Option<Deployment> {
    d.get(name).await.ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_creates_scales_reports_and_is_garbage_collected_with_its_foo() {
    let (_server, client) = server().await;
    let running = runner::start(client.clone(), 2).unwrap();
    let foos = Clientset::new(client.clone())
        .samplecontroller_v1alpha1()
        .foos("default");
    let deployments: ResourceClient<Deployment> =
        ResourceClient::namespaced(client.clone(), "default");

    let created = foos
        .create(&PostParams::default(), &foo("web", "web-deploy", 2))
        .await
        .unwrap();
    let deployment = wait_for("deployment", || async {
        Ok(find_deployment(&deployments, "web-deploy").await)
    })
    .await
    .unwrap();
    let owner = &deployment.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(owner.kind, "Foo");
    assert_eq!(owner.api_version, "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(owner.name, "web");
    assert_eq!(Some(&owner.uid), created.metadata.uid.as_ref());
    assert_eq!(owner.controller, Some(true));
    assert_eq!(deployment.spec.replicas, Some(2));
    let labels = deployment.spec.selector.match_labels.as_ref().unwrap();
    assert_eq!(labels.get("controller").map(String::as_str), Some("web"));

    // Scale the Foo: the Deployment follows.
    foos.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    wait_for("scaled deployment", || async {
        Ok(find_deployment(&deployments, "web-deploy")
            .await
            .filter(|d| d.spec.replicas == Some(4)))
    })
    .await
    .unwrap();

    // The test server's Deployment controller, scheduler and kubelets run the four pods:
    // the Foo's status follows the Deployment's available replicas.
    wait_for("foo status", || async {
        Ok(foos
            .get("web")
            .await?
            .status
            .filter(|s| s.available_replicas == 4))
    })
    .await
    .unwrap();

    // A Normal Synced event was recorded for the Foo.
    let events: ResourceClient<Event> = ResourceClient::namespaced(client.clone(), "default");
    wait_for("synced event", || async {
        let list = events.list(&ListParams::default()).await?;
        Ok(list.items.into_iter().find(|e| {
            e.reason.as_deref() == Some(SUCCESS_SYNCED) && e.type_.as_deref() == Some("Normal")
        }))
    })
    .await
    .unwrap();

    // Deleting the Foo garbage-collects the Deployment.
    foos.delete("web", &DeleteParams::default()).await.unwrap();
    wait_for("garbage collection", || async {
        Ok(find_deployment(&deployments, "web-deploy")
            .await
            .is_none()
            .then_some(()))
    })
    .await
    .unwrap();
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_owned_by_someone_else_gets_a_warning_and_is_left_alone() {
    let (_server, client) = server().await;
    let deployments: ResourceClient<Deployment> =
        ResourceClient::namespaced(client.clone(), "default");
    let mut foreign = new_deployment(&foo("other", "taken", 1));
    foreign.metadata.owner_references = None;
    deployments
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();

    let running = runner::start(client.clone(), 1).unwrap();
    Clientset::new(client.clone())
        .samplecontroller_v1alpha1()
        .foos("default")
        .create(&PostParams::default(), &foo("greedy", "taken", 3))
        .await
        .unwrap();
    let events: ResourceClient<Event> = ResourceClient::namespaced(client, "default");
    let warning = wait_for("warning event", || async {
        let list = events.list(&ListParams::default()).await?;
        Ok(list
            .items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some(ERR_RESOURCE_EXISTS)))
    })
    .await
    .unwrap();
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(warning.involved_object.kind.as_deref(), Some("Foo"));
    assert_eq!(warning.involved_object.name.as_deref(), Some("greedy"));
    assert_eq!(
        warning.message.as_deref(),
        Some("Resource \"taken\" already exists and is not managed by Foo")
    );
    // The error requeues the key with backoff; the Deployment is never touched.
    wait_for("a requeue", || async {
        Ok((running
            .controller
            .queue()
            .num_requeues(&"default/greedy".to_owned())
            > 0)
        .then_some(()))
    })
    .await
    .unwrap();
    let untouched = deployments.get("taken").await.unwrap();
    assert_eq!(untouched.spec.replicas, Some(1));
    assert!(untouched.metadata.owner_references.is_none());
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_controller_works_against_the_generated_fake_clientset() {
    let fake = fake::new_simple_clientset();
    let mut seeded = foo("seeded", "seeded-deploy", 1);
    seeded.metadata.namespace = Some("default".into());
    fake.add(&seeded).unwrap();
    let client = fake.fake().client();
    let running = runner::start(client.clone(), 1).unwrap();
    let deployments: ResourceClient<Deployment> = ResourceClient::namespaced(client, "default");
    wait_for("deployment from the fake", || async {
        Ok(find_deployment(&deployments, "seeded-deploy").await)
    })
    .await
    .unwrap();
    running.shutdown().await.unwrap();
    let actions = fake.fake().actions();
    // The informers' initial state comes from a streaming list: a watch, no list.
    assert!(actions.iter().any(|a| a.matches("watch", "foos")));
    assert!(actions.iter().any(|a| a.matches("watch", "deployments")));
    assert!(actions.iter().any(|a| a.matches("create", "deployments")));
}

/// Read-your-own-writes (KEP-5647): with watch events arriving 500 ms late (the test
/// server's delivery-delay fault; responses are not delayed), the whole demo converges and
/// the controller's client never gets a 409 (Conflict or AlreadyExists): every sync waited
/// for the caches to see the controller's own last writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_watch_delivery_delayed_the_controller_converges_with_zero_409s() {
    let server = TestServer::start().await.unwrap();
    server.load_crd_yaml(CRD_YAML).unwrap();
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = Arc::new(kubegen::metrics::PrometheusMetrics::new(&mut registry));
    let client = Client::builder_from_config(server.config().unwrap())
        .unwrap()
        .metrics(metrics)
        .build();
    server.set_watch_delivery_delay(Some(std::time::Duration::from_millis(500)));
    let running = sample_controller::runner::start(client.clone(), 2).expect("start");
    let result = sample_controller::demo::run(server.client().unwrap(), "default", |_| {}).await;
    running.shutdown().await.expect("shutdown");
    result.expect("the demo converged");
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    let requests: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("rest_client_requests_total"))
        .collect();
    assert!(
        !requests.is_empty(),
        "the client's requests were counted:\n{text}"
    );
    assert!(
        requests.iter().all(|l| !l.contains(r#"code="409""#)),
        "409s: {requests:#?}"
    );
}
