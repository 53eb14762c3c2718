//! The scaffolded kubegen operator's reconcile (`kubegen-codegen init`), written with
//! kube-rs: a `Widget` custom resource; every Widget gets a finalizer, a ConfigMap of its
//! name holding `spec.message` (controlled by the Widget) and a `Ready` status condition.
//! Built by `hack/bench-build.sh` beside the scaffold to compare build time and binary
//! size; it is never run by the tests.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
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
/// The ConfigMap key holding the message.
const MESSAGE_KEY: &str = "message";

/// A Widget asks for a ConfigMap of its name holding its message.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1alpha1",
    kind = "Widget",
    namespaced
)]
#[kube(status = "WidgetStatus")]
#[kube(printcolumn = r#"{"name":"Message","type":"string","jsonPath":".spec.message"}"#)]
pub struct WidgetSpec {
    /// The message the controller writes into the Widget's ConfigMap.
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub message: String,
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

/// Brings the Widget's ConfigMap in line with its spec and reports `Ready`.
async fn apply(widget: &Widget, ctx: &Context) -> Result<Action, Error> {
    let namespace = widget.namespace().ok_or(Error::NoNamespace)?;
    let name = widget.name_any();
    let owner = widget.controller_owner_ref(&()).into_iter().collect();
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(namespace.clone()),
            owner_references: Some(owner),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            MESSAGE_KEY.to_owned(),
            widget.spec.message.clone(),
        )])),
        ..ConfigMap::default()
    };
    let params = PatchParams::apply(NAME).force();
    let config_maps: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &namespace);
    config_maps
        .patch(&name, &params, &Patch::Apply(&config_map))
        .await?;

    let ready = widget.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    });
    if !ready {
        let condition = Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "ConfigMapSynced".into(),
            message: "the ConfigMap holds the message".into(),
            observed_generation: widget.meta().generation,
            last_transition_time: "1970-01-01T00:00:00Z".into(),
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
    let config_maps: Api<ConfigMap> = Api::all(client.clone());
    let config = kube::runtime::controller::Config::default().concurrency(args.workers);
    Controller::new(widgets, watcher::Config::default())
        .owns(config_maps, watcher::Config::default())
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
