//! The `--demo` walk-through, the sample controller's story told through the operator's
//! finalizer and `Ready` condition: create a Foo, scale it, meet a Deployment owned by
//! someone else, delete the Foo. Each step waits (bounded) with
//! [`kubegen::controllerutil::await_condition`] and prints what it saw.
//!
//! The embedded server is a cluster in a process: its Deployment and ReplicaSet
//! controllers, scheduler and kubelets make the Deployment's pods run, so the Foo's
//! `Ready` condition follows the Deployment's real `status.availableReplicas`.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kubegen::client::params::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubegen::client::{Client, ResourceClient};
use kubegen::controllerutil::wait::{WaitError, await_condition, is_deleted};
use kubegen::controllerutil::{contains_finalizer, is_condition_false, is_condition_true};
use serde_json::json;

use crate::Foo;
use crate::operator::{ERR_RESOURCE_EXISTS, FINALIZER, READY};

/// How long each step may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(20);

/// A step that did not happen in time, or an API call that failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// Waiting for an object's state failed or timed out.
    #[error(transparent)]
    Wait(#[from] WaitError),
    /// No event with this reason showed up in time.
    #[error("timed out waiting for a {0} event")]
    NoEvent(String),
    /// An API call failed.
    #[error(transparent)]
    Api(#[from] kubegen::client::Error),
}

fn ready_is(foo: Option<&Foo>, want: bool, available: i32) -> bool {
    let Some(status) = foo.and_then(|f| f.status.as_ref()) else {
        return false;
    };
    let condition = if want {
        is_condition_true(&status.conditions, READY)
    } else {
        is_condition_false(&status.conditions, READY)
    };
    condition && status.available_replicas == available
}

/// Waits for an event with `reason` about the object `name`; returns its message.
async fn event(
    events: &ResourceClient<Event>,
    reason: &str,
    name: &str,
) -> Result<String, DemoError> {
    let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
    while tokio::time::Instant::now() < deadline {
        let list = events.list(&ListParams::default()).await?;
        let found = list.items.into_iter().find(|e| {
            e.reason.as_deref() == Some(reason) && e.involved_object.name.as_deref() == Some(name)
        });
        if let Some(event) = found {
            return Ok(event.message.unwrap_or_default());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(DemoError::NoEvent(reason.to_owned()))
}

/// Runs the walk-through in `namespace`, printing progress with `say`.
pub async fn run(
    client: Client,
    namespace: &str,
    mut say: impl FnMut(&str),
) -> Result<(), DemoError> {
    let foos = ResourceClient::<Foo>::namespaced(client.clone(), namespace);
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), namespace);
    let events = ResourceClient::<Event>::namespaced(client, namespace);
    let pp = PostParams::default();

    // Someone else's Deployment, created first: the operator's Deployment watch delivers
    // in resourceVersion order, so by step 3 (after it has seen its own later writes) its
    // cache holds this object and the intruder is refused from the cache, not by a 409.
    say("0. creating Deployment not-mine by hand (owned by no Foo)");
    let mut foreign = Deployment::default();
    foreign.metadata.name = Some("not-mine".into());
    let labels = std::collections::BTreeMap::from([("app".to_owned(), "other".to_owned())]);
    foreign.spec.selector.match_labels = Some(labels.clone());
    let template = foreign.spec.template.metadata.get_or_insert_default();
    template.labels = Some(labels);
    foreign.spec.template.spec = Some(k8s_openapi::api::core::v1::PodSpec {
        containers: vec![k8s_openapi::api::core::v1::Container {
            name: "app".into(),
            image: Some("busybox".into()),
            ..Default::default()
        }],
        ..Default::default()
    });
    deployments.create(&pp, &foreign).await?;

    say("1. creating Foo example-foo (deploymentName example-foo, replicas 1)");
    let created = foos
        .create(&pp, &Foo::for_deployment("example-foo", "example-foo", 1))
        .await?;
    let uid = created.metadata.uid.clone().unwrap_or_default();
    let owned = |d: Option<&Deployment>| {
        d.and_then(|d| kubegen::controllerutil::controller_of(d))
            .is_some_and(|owner| owner.uid == uid)
    };
    await_condition(deployments.clone(), "example-foo", owned, STEP_TIMEOUT).await?;
    let with_finalizer = |f: Option<&Foo>| f.is_some_and(|f| contains_finalizer(f, FINALIZER));
    await_condition(foos.clone(), "example-foo", with_finalizer, STEP_TIMEOUT).await?;
    say(&format!(
        "   the operator added finalizer {FINALIZER} and created Deployment example-foo, controlled by the Foo"
    ));
    let ready_1 = |f: Option<&Foo>| ready_is(f, true, 1);
    await_condition(foos.clone(), "example-foo", ready_1, STEP_TIMEOUT).await?;
    say("   Foo example-foo: Ready=True, availableReplicas 1");

    say("2. scaling Foo example-foo to 3 replicas");
    let scale = Patch::Merge(json!({"spec": {"replicas": 3}}));
    foos.patch("example-foo", &PatchParams::default(), &scale)
        .await?;
    let scaled = |d: Option<&Deployment>| d.is_some_and(|d| d.spec.replicas == Some(3));
    await_condition(deployments.clone(), "example-foo", scaled, STEP_TIMEOUT).await?;
    // The Foo is Ready=False while fewer than 3 replicas are available, but how long that
    // lasts is the cluster's business (pods can start before the operator writes a status
    // in between), so the walk-through waits for the outcome only.
    say("   the operator scaled Deployment example-foo to 3");
    let ready_3 = |f: Option<&Foo>| ready_is(f, true, 3);
    await_condition(foos.clone(), "example-foo", ready_3, STEP_TIMEOUT).await?;
    say("   Foo example-foo: Ready=True, availableReplicas 3");

    say("3. creating Foo intruder that wants Deployment not-mine");
    foos.create(&pp, &Foo::for_deployment("intruder", "not-mine", 1))
        .await?;
    let message = event(&events, ERR_RESOURCE_EXISTS, "intruder").await?;
    let refused = |f: Option<&Foo>| ready_is(f, false, 0);
    await_condition(foos.clone(), "intruder", refused, STEP_TIMEOUT).await?;
    say(&format!(
        "   the operator refused: Warning {ERR_RESOURCE_EXISTS}: {message}; Foo intruder Ready=False"
    ));

    say("4. deleting Foo example-foo");
    foos.delete("example-foo", &DeleteParams::default()).await?;
    let cleaned = event(&events, "CleanedUp", "example-foo").await?;
    await_condition(foos.clone(), "example-foo", is_deleted(&uid), STEP_TIMEOUT).await?;
    say(&format!(
        "   the operator cleaned up ({cleaned}) and removed its finalizer; the Foo is gone"
    ));
    let deployment_uid = deployments
        .get("example-foo")
        .await
        .ok()
        .and_then(|d| d.metadata.uid);
    if let Some(deployment_uid) = deployment_uid {
        await_condition(
            deployments,
            "example-foo",
            is_deleted(&deployment_uid),
            STEP_TIMEOUT,
        )
        .await?;
    }
    say("   garbage collection removed Deployment example-foo");
    say("demo finished");
    Ok(())
}
