//! The `--demo` walk-through: create a Foo, watch the controller create its Deployment,
//! scale the Foo, meet a Deployment owned by someone else, delete the Foo and watch
//! garbage collection remove the Deployment. Each step waits (bounded) for the
//! controller's effect and prints what it saw.
//!
//! The embedded server is a cluster in a process: its Deployment and ReplicaSet
//! controllers, scheduler and kubelets run the Deployment's pods, and the sample controller
//! copies the Deployment's real `status.availableReplicas` into the Foo's status.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kubegen::client::params::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubegen::client::{Client, ResourceClient};
use serde_json::json;

use crate::apis::samplecontroller::v1alpha1::{Foo, FooSpec};
use crate::client::clientset::versioned::Clientset;
use crate::controller::{ERR_RESOURCE_EXISTS, is_controlled_by};

/// A demo step that did not happen in time, or an API call that failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The controller did not produce the expected state in time.
    #[error("timed out waiting for {0}")]
    Timeout(String),
    /// An API call failed.
    #[error(transparent)]
    Api(#[from] kubegen::client::Error),
}

/// How long each step may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(20);

/// Polls `check` until it yields `Some`, or fails after [`STEP_TIMEOUT`].
pub async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> Result<T, DemoError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>, kubegen::client::Error>>,
{
    let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
    loop {
        if let Some(v) = check().await? {
            return Ok(v);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(DemoError::Timeout(what.to_owned()));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn foo(name: &str, deployment: &str, replicas: i32) -> Foo {
    Foo {
        metadata: kube_core::ObjectMeta {
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

async fn get_optional<K: kubegen::Object>(
    client: &ResourceClient<K>,
    name: &str,
) -> Result<Option<K>, kubegen::client::Error> {
    match client.get(name).await {
        Ok(o) => Ok(Some(o)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Runs the walk-through in `namespace`, printing progress with `say`.
pub async fn run(
    client: Client,
    namespace: &str,
    mut say: impl FnMut(&str),
) -> Result<(), DemoError> {
    let foos = Clientset::new(client.clone())
        .samplecontroller_v1alpha1()
        .foos(namespace);
    let deployments: ResourceClient<Deployment> =
        ResourceClient::namespaced(client.clone(), namespace);
    let events: ResourceClient<Event> = ResourceClient::namespaced(client, namespace);

    // Someone else's Deployment, created first: the controller's Deployment watch delivers
    // in resourceVersion order, so by step 3 (after it has seen its own later writes) its
    // cache holds this object and the intruder is refused from the cache, not by a 409.
    say("0. creating Deployment not-mine by hand (owned by no Foo)");
    let mut foreign = crate::controller::new_deployment(&foo("nobody", "not-mine", 1));
    foreign.metadata.owner_references = None;
    deployments.create(&PostParams::default(), &foreign).await?;

    say("1. creating Foo example-foo (deploymentName example-foo, replicas 1)");
    let created = foos
        .create(
            &PostParams::default(),
            &foo("example-foo", "example-foo", 1),
        )
        .await?;
    let deployment = wait_for("the Deployment example-foo", || async {
        Ok(get_optional(&deployments, "example-foo")
            .await?
            .filter(|d| is_controlled_by(&d.metadata, &created)))
    })
    .await?;
    say(&format!(
        "   the controller created Deployment example-foo (replicas {}), controlled by Foo example-foo",
        deployment.spec.replicas.unwrap_or_default()
    ));
    wait_for("Foo status.availableReplicas = 1", || async {
        Ok(foos
            .get("example-foo")
            .await?
            .status
            .filter(|s| s.available_replicas == 1))
    })
    .await?;
    say("   Foo example-foo status: availableReplicas 1");

    say("2. scaling Foo example-foo to 3 replicas");
    foos.patch(
        "example-foo",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await?;
    wait_for("the Deployment to be scaled to 3", || async {
        Ok(get_optional(&deployments, "example-foo")
            .await?
            .filter(|d| d.spec.replicas == Some(3)))
    })
    .await?;
    say("   the controller scaled Deployment example-foo to 3 replicas");
    wait_for("Foo status.availableReplicas = 3", || async {
        Ok(foos
            .get("example-foo")
            .await?
            .status
            .filter(|s| s.available_replicas == 3))
    })
    .await?;
    say("   Foo example-foo status: availableReplicas 3");

    say("3. creating Foo intruder that wants Deployment not-mine");
    foos.create(&PostParams::default(), &foo("intruder", "not-mine", 1))
        .await?;
    let warning = wait_for("a Warning ErrResourceExists event", || async {
        let list = events.list(&ListParams::default()).await?;
        Ok(list.items.into_iter().find(|e| {
            e.reason.as_deref() == Some(ERR_RESOURCE_EXISTS)
                && e.involved_object.name.as_deref() == Some("intruder")
        }))
    })
    .await?;
    say(&format!(
        "   the controller refused: Warning {}: {}",
        ERR_RESOURCE_EXISTS,
        warning.message.unwrap_or_default()
    ));

    say("4. deleting Foo example-foo");
    foos.delete("example-foo", &DeleteParams::default()).await?;
    wait_for("garbage collection of Deployment example-foo", || async {
        Ok(get_optional(&deployments, "example-foo")
            .await?
            .is_none()
            .then_some(()))
    })
    .await?;
    say("   garbage collection removed Deployment example-foo");
    say("demo finished");
    Ok(())
}
