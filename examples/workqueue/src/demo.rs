//! The scripted demo: creates, updates and deletes pods, and waits until the controller has
//! reported each expected outcome.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Event, Pod, PodSpec};
use kube_core::{
    ObjectMeta,
    params::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use kubegen::client::{Client, ResourceClient};
use serde_json::json;
use tokio::sync::mpsc;

use crate::controller::{FAIL_ANNOTATION, Outcome, REASON_SYNC_FAILED};

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A request to the API server failed.
    #[error("API request failed: {0}")]
    Api(#[from] kubegen::client::Error),
    /// The controller stopped reporting before every outcome was seen.
    #[error("the controller stopped before the demo finished; still waiting for {0:?}")]
    ControllerStopped(Vec<Outcome>),
    /// The demo did not finish in time.
    #[error("the demo did not finish within {0} s")]
    Timeout(u64),
}

/// The script, run against `namespace`.
pub struct Demo {
    pods: ResourceClient<Pod>,
    events: ResourceClient<Event>,
    namespace: String,
}

fn pod(name: &str, fail: bool) -> Pod {
    let annotations =
        fail.then(|| BTreeMap::from([(FAIL_ANNOTATION.to_owned(), "true".to_owned())]));
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([("app".to_owned(), "demo".to_owned())])),
            annotations,
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("busybox".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

impl Demo {
    /// The demo for pods in `namespace`.
    pub fn new(client: Client, namespace: &str) -> Self {
        Self {
            pods: ResourceClient::namespaced(client.clone(), namespace),
            events: ResourceClient::namespaced(client, namespace),
            namespace: namespace.to_owned(),
        }
    }

    fn key(&self, name: &str) -> String {
        format!("{}/{}", self.namespace, name)
    }

    /// Runs the script, reading the controller's outcomes from `rx`.
    pub async fn run(self, mut rx: mpsc::UnboundedReceiver<Outcome>) -> Result<(), DemoError> {
        let mut processed = 0usize;
        let pp = PostParams::default();
        // client-go's example warms the informer's cache with a pod from "a previous run";
        // here only the informer writes its cache, so the pod comes and goes on the server.
        println!("demo: creating mypod, then deleting it");
        self.pods.create(&pp, &pod("mypod", false)).await?;
        processed += expect(&mut rx, [Outcome::Synced(self.key("mypod"))]).await?;
        self.pods.delete("mypod", &DeleteParams::default()).await?;
        processed += expect(&mut rx, [Outcome::Gone(self.key("mypod"))]).await?;

        println!("demo: creating pods web-1, web-2 and broken (which always fails its sync)");
        for (name, fail) in [("web-1", false), ("web-2", false), ("broken", true)] {
            self.pods.create(&pp, &pod(name, fail)).await?;
        }
        processed += expect(
            &mut rx,
            [
                Outcome::Synced(self.key("web-1")),
                Outcome::Synced(self.key("web-2")),
                Outcome::Dropped(self.key("broken")),
            ],
        )
        .await?;

        println!("demo: labelling web-1");
        let patch = Patch::Merge(json!({"metadata": {"labels": {"tier": "frontend"}}}));
        self.pods
            .patch("web-1", &PatchParams::default(), &patch)
            .await?;
        processed += expect(&mut rx, [Outcome::Synced(self.key("web-1"))]).await?;

        println!("demo: deleting web-2");
        self.pods.delete("web-2", &DeleteParams::default()).await?;
        processed += expect(&mut rx, [Outcome::Gone(self.key("web-2"))]).await?;

        // events are written asynchronously: wait for the Warning about the dropped pod
        let event = loop {
            let events = self.events.list(&ListParams::default()).await?.items;
            if let Some(e) = events.into_iter().find(|e| {
                e.reason.as_deref() == Some(REASON_SYNC_FAILED)
                    && e.involved_object.name.as_deref() == Some("broken")
            }) {
                break e;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        println!(
            "demo: {} event {} recorded for pod broken: {}",
            event.type_.as_deref().unwrap_or_default(),
            event.reason.as_deref().unwrap_or_default(),
            event.message.as_deref().unwrap_or_default(),
        );

        println!("demo: done, the controller processed {processed} keys");
        Ok(())
    }
}

/// Reads outcomes until every one of `wanted` was seen; returns how many were read.
async fn expect(
    rx: &mut mpsc::UnboundedReceiver<Outcome>,
    wanted: impl IntoIterator<Item = Outcome>,
) -> Result<usize, DemoError> {
    let mut wanted: Vec<Outcome> = wanted.into_iter().collect();
    let mut read = 0;
    while !wanted.is_empty() {
        let Some(outcome) = rx.recv().await else {
            return Err(DemoError::ControllerStopped(wanted));
        };
        read += 1;
        wanted.retain(|w| *w != outcome);
    }
    Ok(read)
}
