//! The controller: pod keys from the informer's handlers go on a rate-limited queue;
//! workers look each key up in the informer's indexer and print what they find. A key whose
//! sync fails is retried with backoff up to [`MAX_RETRIES`] times, then dropped.
//!
//! The controller reads a Pod's metadata, node and phase only, so its informer caches a
//! [`PodSummary`] projection: list and watch bodies are decoded straight into it, and the
//! rest of each Pod (containers, volumes, conditions, managedFields) is never built.

use std::sync::Arc;

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kubegen::{
    cache::{
        ReadOnlyIndexer, ResourceEventHandlerFuncs, SharedIndexInformer,
        deletion_handling_meta_namespace_key, meta_namespace_key,
    },
    record::{EventRecorder, EventType},
    workqueue::{QueueConfig, RateLimitingQueue, default_controller_rate_limiter},
};
use tokio::sync::mpsc;

/// How many times a failing key is retried before it is dropped (client-go's example uses 5).
pub const MAX_RETRIES: u32 = 5;

/// Pods carrying this annotation with the value `"true"` fail to sync: the demo's way of
/// showing retries and the final drop.
pub const FAIL_ANNOTATION: &str = "example.kubegen.io/fail-sync";

/// What the controller reads of a Pod (`#[derive(kubegen::Projection)]`).
#[derive(Clone, Debug, kubegen::Projection)]
#[projection(of = Pod)]
pub struct PodSummary {
    /// The Pod's metadata (without managedFields).
    pub metadata: ObjectMeta,
    /// The node the Pod is bound to.
    #[projection(path = "spec.nodeName")]
    pub node_name: Option<String>,
    /// The Pod's phase (`Pending`, `Running`, ...).
    #[projection(path = "status.phase")]
    pub phase: Option<String>,
}

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The pod asked to fail (see [`FAIL_ANNOTATION`]).
    #[error("pod {0} is annotated to fail its sync")]
    Injected(String),
}

/// What a worker did with a key: reported to whoever watches the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The pod is in the cache and was "synced".
    Synced(String),
    /// The pod is not in the cache any more.
    Gone(String),
    /// The sync failed and the key was requeued with backoff.
    Retrying(String),
    /// The sync failed [`MAX_RETRIES`] times; the key was dropped.
    Dropped(String),
}

/// The reason of the Warning event recorded on a pod whose key is dropped.
pub const REASON_SYNC_FAILED: &str = "SyncFailed";

/// The pod controller of client-go's workqueue example.
#[derive(Clone)]
pub struct Controller {
    indexer: ReadOnlyIndexer<PodSummary>,
    queue: RateLimitingQueue<String>,
    recorder: EventRecorder,
    outcomes: Option<mpsc::UnboundedSender<Outcome>>,
}

impl Controller {
    /// A controller fed by `informer`'s handlers, recording events with `recorder`; every
    /// outcome is also sent to `outcomes`.
    pub fn new(
        informer: &SharedIndexInformer<PodSummary>,
        recorder: EventRecorder,
        outcomes: Option<mpsc::UnboundedSender<Outcome>>,
    ) -> Result<Self, kubegen::cache::InformerError> {
        let queue: RateLimitingQueue<String> = RateLimitingQueue::with_config(
            QueueConfig::new()
                .name("pods")
                .rate_limiter(default_controller_rate_limiter()),
        );
        let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
        informer.add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |pod: &Arc<PodSummary>, _initial| {
                    if let Ok(key) = meta_namespace_key(pod.as_ref()) {
                        on_add.add(key);
                    }
                })
                .update_func(move |_old, new: &Arc<PodSummary>| {
                    if let Ok(key) = meta_namespace_key(new.as_ref()) {
                        on_update.add(key);
                    }
                })
                .delete_func(move |deleted| {
                    // a tombstone carries the key the cache knew the pod by
                    if let Ok(key) = deletion_handling_meta_namespace_key(deleted) {
                        on_delete.add(key);
                    }
                }),
        )?;
        Ok(Self {
            indexer: informer.indexer(),
            queue,
            recorder,
            outcomes,
        })
    }

    /// The queue (to shut it down).
    pub fn queue(&self) -> &RateLimitingQueue<String> {
        &self.queue
    }

    /// Takes keys until the queue is shut down and drained.
    pub async fn run_worker(self) {
        while self.process_next_item().await {}
    }

    async fn process_next_item(&self) -> bool {
        let Some(key) = self.queue.get().await else {
            return false;
        };
        let result = self.sync_to_stdout(&key);
        self.handle_err(result, &key);
        self.queue.done(&key);
        true
    }

    /// The business logic: print what the cache knows about the pod.
    fn sync_to_stdout(&self, key: &str) -> Result<Outcome, SyncError> {
        match self.indexer.get_by_key(key) {
            None => {
                println!("Pod {key} does not exist anymore");
                Ok(Outcome::Gone(key.to_owned()))
            }
            Some(pod) => {
                let fails = pod
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(FAIL_ANNOTATION))
                    .is_some_and(|v| v == "true");
                if fails {
                    return Err(SyncError::Injected(key.to_owned()));
                }
                let name = pod.metadata.name.as_deref().unwrap_or_default();
                let phase = pod.phase.as_deref().unwrap_or("unknown");
                println!("Sync/Add/Update for Pod {name} (phase {phase})");
                Ok(Outcome::Synced(key.to_owned()))
            }
        }
    }

    /// Forgets a key after a success; retries a failure with backoff up to
    /// [`MAX_RETRIES`] times, then drops it.
    fn handle_err(&self, result: Result<Outcome, SyncError>, key: &str) {
        let outcome = match result {
            Ok(outcome) => {
                self.queue.forget(&key.to_owned());
                outcome
            }
            Err(err) if self.queue.num_requeues(&key.to_owned()) < MAX_RETRIES => {
                tracing::info!("Error syncing pod {key}: {err}");
                self.queue.add_rate_limited(key.to_owned());
                Outcome::Retrying(key.to_owned())
            }
            Err(err) => {
                self.queue.forget(&key.to_owned());
                tracing::info!("Dropping pod {key:?} out of the queue: {err}");
                println!("Dropping pod {key} out of the queue after {MAX_RETRIES} retries");
                // not in client-go's example: tell the pod's users, with an event
                if let Some(pod) = self.indexer.get_by_key(key) {
                    self.recorder.eventf(
                        pod.as_ref(),
                        EventType::Warning,
                        REASON_SYNC_FAILED,
                        format_args!("dropped from the queue after {MAX_RETRIES} retries: {err}"),
                    );
                }
                Outcome::Dropped(key.to_owned())
            }
        };
        if let Some(tx) = &self.outcomes {
            let _ = tx.send(outcome);
        }
    }
}
