//! The scaffolded kubegen operator's reconcile (`kubegen-codegen init`), written with
//! kube-rs: a `Widget` custom resource; every Widget gets a finalizer, a Deployment of its
//! name running `spec.replicas` pods of `spec.image` (controlled by the Widget, watched
//! with `owns`) and a `Ready` status condition that follows the Deployment's status.
//! Built by `hack/bench-build.sh` beside the scaffold to compare build time and binary
//! size; it is never run by the tests.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, Resource, ResourceExt};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event, finalizer};
use kube::runtime::watcher;
use kube::{Client, CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The controller's name: field manager of its writes.
const NAME: &str = "widget-controller";
/// The finalizer the controller puts on every Widget.
const FINALIZER: &str = "example.com/widget-cleanup";
/// The name of the pods' container.
const CONTAINER: &str = "widget";

/// A Widget asks for a Deployment of its name running `spec.replicas` pods of `spec.image`.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1alpha1",
    kind = "Widget",
    namespaced
)]
#[kube(status = "WidgetStatus")]
#[kube(printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#)]
#[kube(printcolumn = r#"{"name":"Image","type":"string","jsonPath":".spec.image"}"#)]
#[serde(default)]
pub struct WidgetSpec {
    /// How many pods the Deployment runs.
    #[schemars(range(min = 0, max = 100))]
    pub replicas: i32,
    /// The container image of the pods.
    #[schemars(length(min = 1))]
    pub image: String,
}

impl Default for WidgetSpec {
    fn default() -> Self {
        Self {
            replicas: 1,
            image: "nginx:1.27".into(),
        }
    }
}

/// What the controller observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    /// The latest observations (metav1.Condition's fields).
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// metav1.Condition, with a schema of its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition's type, `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase reason.
    pub reason: String,
    /// A human-readable message.
    pub message: String,
    /// The generation the condition was set for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// When the status last changed (RFC 3339).
    pub last_transition_time: String,
}

/// Why a reconcile failed (retried after a delay).
#[derive(Debug, thiserror::Error)]
enum Error {
    #[error(transparent)]
    Kube(#[from] kube::Error),
    #[error("finalizer: {0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
    #[error("the Widget has no namespace")]
    NoNamespace,
}

struct Context {
    client: Client,
}

async fn reconcile(widget: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, Error> {
    let namespace = widget.namespace().ok_or(Error::NoNamespace)?;
    let widgets: Api<Widget> = Api::namespaced(ctx.client.clone(), &namespace);
    finalizer(&widgets, FINALIZER, widget, |event| async {
        match event {
            Event::Apply(widget) => apply(&widget, &ctx).await,
            Event::Cleanup(_) => Ok(Action::await_change()),
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

/// Brings the Widget's Deployment in line with its spec and reports `Ready` from the
/// Deployment's status.
async fn apply(widget: &Widget, ctx: &Context) -> Result<Action, Error> {
    let namespace = widget.namespace().ok_or(Error::NoNamespace)?;
    let name = widget.name_any();
    let owner = widget.controller_owner_ref(&()).into_iter().collect();
    let labels = BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "widget".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), name.clone()),
    ]);
    let deployment = Deployment {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(namespace.clone()),
            owner_references: Some(owner),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(widget.spec.replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: CONTAINER.into(),
                        image: Some(widget.spec.image.clone()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    };
    let params = PatchParams::apply(NAME).force();
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &namespace);
    let deployment = deployments
        .patch(&name, &params, &Patch::Apply(&deployment))
        .await?;

    let want = widget.spec.replicas;
    let status = deployment.status.unwrap_or_default();
    let available = status.available_replicas.unwrap_or(0);
    let rolled_out = status.observed_generation >= deployment.metadata.generation
        && status.updated_replicas.unwrap_or(0) == want
        && status.replicas.unwrap_or(0) == want
        && available == want;
    let (state, reason) = if rolled_out {
        ("True", "DeploymentAvailable")
    } else {
        ("False", "DeploymentProgressing")
    };
    let message = format!("{available} of {want} replicas available");
    let current = widget
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"));
    let unchanged = current.is_some_and(|c| {
        c.status == state
            && c.reason == reason
            && c.message == message
            && c.observed_generation == widget.meta().generation
    });
    if !unchanged {
        let transition = match current {
            Some(c) if c.status == state => c.last_transition_time.clone(),
            _ => k8s_openapi::jiff::Timestamp::now().to_string(),
        };
        let condition = Condition {
            type_: "Ready".into(),
            status: state.into(),
            reason: reason.into(),
            message,
            observed_generation: widget.meta().generation,
            last_transition_time: transition,
        };
        let widgets: Api<Widget> = Api::namespaced(ctx.client.clone(), &namespace);
        let patch = Patch::Merge(json!({ "status": { "conditions": [condition] } }));
        widgets
            .patch_status(&name, &PatchParams::default(), &patch)
            .await?;
    }
    Ok(Action::requeue(Duration::from_secs(300)))
}

fn error_policy(_widget: Arc<Widget>, error: &Error, _ctx: Arc<Context>) -> Action {
    tracing::warn!(%error, "reconcile failed");
    Action::requeue(Duration::from_secs(5))
}

/// Command line.
#[derive(Debug, Parser)]
struct Args {
    /// Print the Widget CRD and exit.
    #[arg(long)]
    crd: bool,
    /// Concurrent reconciles.
    #[arg(long, default_value_t = 2)]
    workers: u16,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let args = Args::parse();
    if args.crd {
        println!("{}", serde_json::to_string_pretty(&Widget::crd())?);
        return Ok(());
    }
    let client = Client::try_default().await?;
    let widgets: Api<Widget> = Api::all(client.clone());
    let deployments: Api<Deployment> = Api::all(client.clone());
    let config = kube::runtime::controller::Config::default().concurrency(args.workers);
    Controller::new(widgets, watcher::Config::default())
        .owns(deployments, watcher::Config::default())
        .with_config(config)
        .shutdown_on_signal()
        .run(reconcile, error_policy, Arc::new(Context { client }))
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::warn!(%error, "reconcile");
            }
        })
        .await;
    Ok(())
}
