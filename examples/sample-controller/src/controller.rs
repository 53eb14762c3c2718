//! The Foo controller (kubernetes/sample-controller's `controller.go`).
//!
//! Foo and Deployment informers feed a rate-limited workqueue of Foo keys: a Foo is
//! enqueued when it is added or changed, and a Deployment's change enqueues the Foo that
//! controls it (found through its controller ownerReference). Workers run
//! [`Controller::sync_handler`] on each key: create the Deployment when missing, refuse
//! (Warning event, error) when a Deployment of that name belongs to someone else, scale it
//! when the replicas differ, then write the Deployment's available replicas into the Foo's
//! status. A failed key is retried with the queue's backoff.
//!
//! Read-your-own-writes (Kubernetes 1.36's `ConsistencyStore`, KEP-5647): the
//! controller records the resourceVersion of every Foo status and Deployment it writes, and
//! a sync first waits (bounded) until the informers' caches have seen those writes. Without
//! it, the sync that the controller's own status write triggers reads a cache that lacks
//! the Deployment it just created and creates it again ("already exists"), or updates a
//! stale Foo (409 Conflict).
//!
//! Its permissions (`kubegen-codegen rbac` writes them to `config/rbac/role.yaml`):
//!
//! +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos,verbs=get;list;watch
//! +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos/status,verbs=update
//! +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update
//! +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube_core::Resource;
use kubegen::cache::{
    DeletedObject, InformerError, ResourceEventHandlerFuncs, SharedIndexInformer,
    meta_namespace_key, split_meta_namespace_key, wait_for_cache_sync,
};
use kubegen::client::params::PostParams;
use kubegen::controller::ConsistencyStore;
use kubegen::deepcopy::DeepCopy;
use kubegen::kubernetes::clientset::versioned::Clientset as KubeClientset;
use kubegen::kubernetes::informers::externalversions::SharedInformerFactory as KubeInformerFactory;
use kubegen::kubernetes::listers::apps::v1::DeploymentLister;
use kubegen::record::{EventRecorder, EventType};
use kubegen::workqueue::{QueueConfig, RateLimitingQueue, default_controller_rate_limiter};
use tokio_util::sync::CancellationToken;

use crate::apis::samplecontroller::v1alpha1::{Foo, FooStatus};
use crate::client::clientset::versioned::Clientset;
use crate::client::informers::externalversions::SharedInformerFactory;
use crate::client::listers::samplecontroller::v1alpha1::FooLister;

/// The controller's name: event source and field manager.
pub const CONTROLLER_AGENT_NAME: &str = "sample-controller";
/// Event reason when a Foo is synced.
pub const SUCCESS_SYNCED: &str = "Synced";
/// Event reason when the Deployment exists but is not owned by the Foo.
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Event message when a Foo is synced.
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";
/// How long a sync waits for the caches to see the controller's own last write.
pub const CONSISTENCY_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Why a key could not be synced (it is retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The key is not `namespace/name`.
    #[error("invalid resource key {0:?}")]
    InvalidKey(String),
    /// A Deployment of the Foo's name exists and is controlled by something else.
    #[error("Resource {0:?} already exists and is not managed by Foo")]
    NotOwned(String),
    /// The cache has not caught up with this controller's own write of the object yet.
    #[error("the cache has not caught up with our own write of {0}")]
    Stale(String),
    /// An API call failed.
    #[error(transparent)]
    Api(#[from] kubegen::client::Error),
}

/// Why the controller stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// Asked to stop before the caches synced.
    #[error("failed to wait for caches to sync")]
    CacheSync,
    /// Handlers could not be registered.
    #[error(transparent)]
    Informer(#[from] InformerError),
}

/// The Foo controller. Cheap to share (`Arc`).
pub struct Controller {
    kube: KubeClientset,
    sample: Clientset,
    deployments_informer: SharedIndexInformer<Deployment>,
    deployments: DeploymentLister,
    foos_informer: SharedIndexInformer<Foo>,
    foos: FooLister,
    queue: RateLimitingQueue<String>,
    recorder: EventRecorder,
    /// The controller's own writes of Foos and Deployments, so a sync never acts on a cache
    /// that has not seen them yet (read-your-own-writes, KEP-5647).
    foo_writes: Arc<ConsistencyStore<Foo>>,
    deployment_writes: Arc<ConsistencyStore<Deployment>>,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("queued", &self.queue.len())
            .finish_non_exhaustive()
    }
}

impl Controller {
    /// Sets up the handlers on the factories' Deployment and Foo informers (start the
    /// factories afterwards, as in Go).
    pub fn new(
        kube: KubeClientset,
        sample: Clientset,
        kube_factory: &KubeInformerFactory,
        sample_factory: &SharedInformerFactory,
        recorder: EventRecorder,
    ) -> Result<Arc<Self>, InformerError> {
        let deployment_informer = kube_factory.apps().v1().deployments();
        let deployments_informer = deployment_informer.informer();
        let foo_informer = sample_factory.samplecontroller().v1alpha1().foos();
        let foos_informer = foo_informer.informer();
        let queue = RateLimitingQueue::with_config(
            QueueConfig::new()
                .name("Foos")
                .rate_limiter(default_controller_rate_limiter()),
        );
        let foo_writes = ConsistencyStore::new(&foos_informer)?;
        let deployment_writes = ConsistencyStore::new(&deployments_informer)?;
        let controller = Arc::new(Self {
            foo_writes,
            deployment_writes,
            kube,
            sample,
            deployments: deployment_informer.lister(),
            deployments_informer,
            foos: foo_informer.lister(),
            foos_informer,
            queue,
            recorder,
        });
        tracing::info!("Setting up event handlers");
        let (on_add, on_update) = (Arc::downgrade(&controller), Arc::downgrade(&controller));
        controller.foos_informer.add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |foo: &Arc<Foo>, _| {
                    if let Some(c) = on_add.upgrade() {
                        c.enqueue_foo(foo);
                    }
                })
                .update_func(move |_, foo: &Arc<Foo>| {
                    if let Some(c) = on_update.upgrade() {
                        c.enqueue_foo(foo);
                    }
                }),
        )?;
        let (on_add, on_update, on_delete) = (
            Arc::downgrade(&controller),
            Arc::downgrade(&controller),
            Arc::downgrade(&controller),
        );
        controller.deployments_informer.add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |d: &Arc<Deployment>, _| {
                    if let Some(c) = on_add.upgrade() {
                        c.handle_object(d);
                    }
                })
                .update_func(move |old: &Arc<Deployment>, new: &Arc<Deployment>| {
                    // Periodic resyncs send identical objects: nothing changed.
                    if old.metadata.resource_version == new.metadata.resource_version {
                        return;
                    }
                    if let Some(c) = on_update.upgrade() {
                        c.handle_object(new);
                    }
                })
                .delete_func(move |deleted: &DeletedObject<Deployment>| {
                    let Some(d) = deleted.object() else {
                        tracing::error!("error decoding object tombstone, invalid type");
                        return;
                    };
                    if let Some(c) = on_delete.upgrade() {
                        c.handle_object(d);
                    }
                }),
        )?;
        Ok(controller)
    }

    /// The workqueue (tests watch its length).
    pub fn queue(&self) -> &RateLimitingQueue<String> {
        &self.queue
    }

    /// Waits for both caches, runs `workers` workers until `stop`, then drains the queue
    /// (items being processed finish) and returns.
    pub async fn run(
        self: &Arc<Self>,
        workers: usize,
        stop: CancellationToken,
    ) -> Result<(), ControllerError> {
        tracing::info!("Starting Foo controller");
        tracing::info!("Waiting for informer caches to sync");
        if !wait_for_cache_sync(&stop, &[&self.deployments_informer, &self.foos_informer]).await {
            return Err(ControllerError::CacheSync);
        }
        tracing::info!(count = workers, "Starting workers");
        let tasks: Vec<_> = (0..workers.max(1))
            .map(|_| {
                let c = Arc::clone(self);
                tokio::spawn(async move { while c.process_next_work_item().await {} })
            })
            .collect();
        tracing::info!("Started workers");
        stop.cancelled().await;
        tracing::info!("Shutting down workers");
        self.queue.shut_down_with_drain().await;
        for task in tasks {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "worker task failed");
            }
        }
        Ok(())
    }

    async fn process_next_work_item(&self) -> bool {
        let Some(key) = self.queue.get().await else {
            return false;
        };
        match self.sync_handler(&key).await {
            Ok(()) => {
                self.queue.forget(&key);
                tracing::info!(resource_name = %key, "Successfully synced");
            }
            Err(err) => {
                self.queue.add_rate_limited(key.clone());
                tracing::error!(resource_name = %key, error = %err, "Error syncing; requeuing");
            }
        }
        self.queue.done(&key);
        true
    }

    /// Converges the Foo named by `key` (`namespace/name`): see the module docs.
    pub async fn sync_handler(&self, key: &str) -> Result<(), SyncError> {
        let (namespace, name) = match split_meta_namespace_key(key) {
            Ok((ns, name)) if !ns.is_empty() => (ns.to_owned(), name.to_owned()),
            _ => return Err(SyncError::InvalidKey(key.to_owned())),
        };
        // Read-your-own-writes: the Foo as this controller last wrote it, or newer.
        if !self.foo_writes.ensure_ready(key, CONSISTENCY_WAIT).await {
            return Err(SyncError::Stale(key.to_owned()));
        }
        let foo = match self.foos.foos(&namespace).get(&name) {
            Ok(foo) => foo,
            Err(e) if e.is_not_found() => {
                tracing::info!(key, "Foo referenced by item in work queue no longer exists");
                return Ok(());
            }
            Err(e) => return Err(SyncError::InvalidKey(e.to_string())),
        };
        let deployment_name = foo.spec.deployment_name.as_str();
        if deployment_name.is_empty() {
            // Retrying cannot help: wait for the Foo to change.
            tracing::error!(key, "deployment name missing from object reference");
            return Ok(());
        }
        let deployments = self.kube.apps_v1().deployments(&namespace);
        let deployment_key = format!("{namespace}/{deployment_name}");
        if !self
            .deployment_writes
            .ensure_ready(&deployment_key, CONSISTENCY_WAIT)
            .await
        {
            return Err(SyncError::Stale(deployment_key));
        }
        let deployment = match self
            .deployments
            .deployments(&namespace)
            .get(deployment_name)
        {
            Ok(d) => d,
            Err(e) if e.is_not_found() => {
                match deployments
                    .create(&post_params(), &new_deployment(&foo))
                    .await
                {
                    Ok(created) => {
                        self.wrote(&self.deployment_writes, &deployment_key, &created.metadata);
                        Arc::new(created)
                    }
                    // Someone else created it after our cache last looked: use theirs.
                    Err(e) if e.is_already_exists() => {
                        Arc::new(deployments.get(deployment_name).await?)
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(SyncError::InvalidKey(e.to_string())),
        };
        if !is_controlled_by(&deployment.metadata, &foo) {
            let message =
                format!("Resource {deployment_name:?} already exists and is not managed by Foo");
            self.recorder.event(
                foo.as_ref(),
                EventType::Warning,
                ERR_RESOURCE_EXISTS,
                &message,
            );
            return Err(SyncError::NotOwned(deployment_name.to_owned()));
        }
        let replicas = deployment.spec.replicas;
        let deployment = match foo.spec.replicas {
            Some(want) if replicas != Some(want) => {
                tracing::info!(foo = %name, want, have = ?replicas, "Update deployment resource");
                let updated = deployments
                    .update(
                        &post_params(),
                        &new_deployment(&foo).with_meta_of(&deployment),
                    )
                    .await?;
                self.wrote(&self.deployment_writes, &deployment_key, &updated.metadata);
                Arc::new(updated)
            }
            _ => deployment,
        };
        self.update_foo_status(&foo, &deployment).await?;
        self.recorder.event(
            foo.as_ref(),
            EventType::Normal,
            SUCCESS_SYNCED,
            MESSAGE_RESOURCE_SYNCED,
        );
        Ok(())
    }

    async fn update_foo_status(&self, foo: &Foo, deployment: &Deployment) -> Result<(), SyncError> {
        let available = deployment
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        if foo.status.as_ref().map(|s| s.available_replicas) == Some(available) {
            return Ok(());
        }
        // Never mutate the cache: work on a deep copy.
        let mut copy = foo.deep_copy();
        copy.status = Some(FooStatus {
            available_replicas: available,
        });
        let namespace = foo.metadata.namespace.as_deref().unwrap_or_default();
        let written = self
            .sample
            .samplecontroller_v1alpha1()
            .foos(namespace)
            .update_status(&post_params(), &copy)
            .await?;
        let key = format!(
            "{namespace}/{}",
            foo.metadata.name.as_deref().unwrap_or_default()
        );
        self.wrote(&self.foo_writes, &key, &written.metadata);
        Ok(())
    }

    /// Records a write's resourceVersion, so the next sync of that object waits for it.
    fn wrote<K: kubegen::Object>(&self, store: &ConsistencyStore<K>, key: &str, meta: &ObjectMeta) {
        if let Some(rv) = meta.resource_version.as_deref() {
            store.wrote_at(key, rv);
        }
    }

    fn enqueue_foo(&self, foo: &Foo) {
        match meta_namespace_key(foo) {
            Ok(key) => self.queue.add(key),
            Err(e) => tracing::error!(error = %e, "cannot compute a key for a Foo"),
        }
    }

    /// Enqueues the Foo that controls `deployment`, if any.
    fn handle_object(&self, deployment: &Deployment) {
        let meta = &deployment.metadata;
        tracing::debug!(name = ?meta.name, "Processing object");
        let Some(owner) = controller_of(meta) else {
            return;
        };
        if owner.kind != "Foo" {
            return;
        }
        let namespace = meta.namespace.as_deref().unwrap_or_default();
        match self.foos.foos(namespace).get(&owner.name) {
            Ok(foo) => self.enqueue_foo(&foo),
            Err(_) => {
                tracing::debug!(owner = %owner.name, "Ignore orphaned object");
            }
        }
    }
}

fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(CONTROLLER_AGENT_NAME.to_owned()),
        ..PostParams::default()
    }
}

/// The controller ownerReference of an object (metav1.GetControllerOf).
pub fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// Whether `owner` is the controller of an object (metav1.IsControlledBy): same uid.
pub fn is_controlled_by(meta: &ObjectMeta, owner: &Foo) -> bool {
    controller_of(meta).is_some_and(|r| Some(&r.uid) == owner.metadata.uid.as_ref())
}

/// The Deployment a Foo asks for: nginx pods labelled `app=nginx, controller=<foo>`,
/// owned by the Foo (kubernetes/sample-controller's `newDeployment`).
pub fn new_deployment(foo: &Foo) -> Deployment {
    let labels: BTreeMap<String, String> = [
        ("app".to_owned(), "nginx".to_owned()),
        (
            "controller".to_owned(),
            foo.metadata.name.clone().unwrap_or_default(),
        ),
    ]
    .into();
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.metadata.namespace.clone(),
            owner_references: foo.controller_owner_ref(&()).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: foo.spec.replicas,
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
                        name: "nginx".into(),
                        image: Some("nginx:latest".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    }
}

/// Carries the live object's identity (name, resourceVersion, ...) onto a desired one
/// for an update.
trait WithMetaOf {
    fn with_meta_of(self, live: &Deployment) -> Self;
}

impl WithMetaOf for Deployment {
    fn with_meta_of(mut self, live: &Deployment) -> Self {
        let owners = self.metadata.owner_references.take();
        self.metadata = live.metadata.clone();
        self.metadata.owner_references = owners.or_else(|| live.metadata.owner_references.clone());
        self.status = live.status.clone();
        self
    }
}
