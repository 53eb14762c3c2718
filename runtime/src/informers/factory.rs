//! [`SharedInformerFactory`]: one informer per type, shared by every controller that asks.

use std::{
    any::{Any, TypeId, type_name},
    collections::{BTreeMap, HashMap},
    fmt,
    sync::Arc,
    time::Duration,
};

use kube_core::{
    DynamicObject, GroupVersionResource, PartialObjectMeta,
    discovery::{ApiResource, Scope},
};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::generic::{Erased, ErasedInformer, GenericInformer};
use crate::{
    Cacheable, Object,
    cache::{
        CacheSynced, ListWatch, Lister, MetadataListWatch, SharedIndexInformer,
        SharedIndexInformerBuilder, TransformFunc, TweakListParams, namespace_indexers,
    },
    client::{Client, Discovery, DynamicClient, ResourceClient, Strip},
    metrics::CacheMetricsProvider,
};

/// A factory request that cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactoryError {
    /// No informer for this resource has been requested from the factory.
    #[error("no informer found for {0}")]
    UnknownResource(String),
}

/// Per-type settings are stored type-erased, keyed by `TypeId`.
type PerType = HashMap<TypeId, Box<dyn Any + Send + Sync>>;

/// What an informer caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    /// A typed `K`.
    Typed,
    /// `PartialObjectMeta<K>` (never what `for_resource` returns).
    Metadata,
    /// `DynamicObject`s of a resource described at run time.
    Dynamic,
    /// `PartialObjectMeta<DynamicObject>`s of a resource described at run time (never
    /// what `for_resource` returns).
    DynamicMetadata,
}

impl Flavor {
    /// The prefix of its metrics' `name` label.
    fn metrics_prefix(self) -> &'static str {
        match self {
            Self::Typed => "",
            Self::Metadata | Self::DynamicMetadata => "metadata/",
            Self::Dynamic => "dynamic/",
        }
    }
}

struct Entry {
    informer: Box<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
    gvr: GroupVersionResource,
    flavor: Flavor,
    /// Its key in `wait_for_cache_sync`'s result.
    name: String,
    /// Spawns the informer's run; taken (once) by `start`.
    run: Option<Box<dyn FnOnce(CancellationToken) -> JoinHandle<()> + Send + Sync>>,
}

impl Entry {
    fn started(&self) -> bool {
        self.run.is_none()
    }
}

struct Inner {
    client: Client,
    default_resync: Duration,
    namespace: Option<String>,
    tweak: Option<TweakListParams>,
    resync: HashMap<TypeId, Duration>,
    transforms: PerType,
    strip: Strip,
    strips: HashMap<TypeId, Strip>,
    metrics: Option<Arc<dyn CacheMetricsProvider>>,
    informers: Mutex<Vec<Entry>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    stop: CancellationToken,
}

/// One shared informer per type (client-go's `SharedInformerFactory`); cheap to clone.
///
/// Ask for informers with [`informer_for`](Self::informer_for) or
/// [`lister_for`](Self::lister_for) (the first request's settings win), then
/// [`start`](Self::start) them and [`wait_for_cache_sync`](Self::wait_for_cache_sync).
/// `start` only starts informers requested so far: call it again after requesting more.
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<Inner>,
}

impl fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .inner
            .informers
            .lock()
            .iter()
            .map(|e| e.name.clone())
            .collect();
        f.debug_struct("SharedInformerFactory")
            .field("namespace", &self.inner.namespace)
            .field("default_resync", &self.inner.default_resync)
            .field("informers", &names)
            .finish()
    }
}

/// Builds a [`SharedInformerFactory`] (client-go's `NewSharedInformerFactoryWithOptions`).
pub struct SharedInformerFactoryBuilder {
    client: Client,
    default_resync: Duration,
    namespace: Option<String>,
    tweak: Option<TweakListParams>,
    resync: HashMap<TypeId, Duration>,
    transforms: PerType,
    strip: Strip,
    strips: HashMap<TypeId, Strip>,
    metrics: Option<Arc<dyn CacheMetricsProvider>>,
}

impl fmt::Debug for SharedInformerFactoryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedInformerFactoryBuilder")
            .field("default_resync", &self.default_resync)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl SharedInformerFactoryBuilder {
    /// The resync period of informers without a per-type one (zero: no resync).
    #[must_use]
    pub fn default_resync(mut self, resync: Duration) -> Self {
        self.default_resync = resync;
        self
    }

    /// Watch only this namespace (cluster-scoped types are watched cluster-wide).
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Applies `tweak` to every list and watch of every informer (selectors, limits).
    #[must_use]
    pub fn tweak_list_params(
        mut self,
        tweak: impl Fn(&mut kube_core::params::ListParams) + Send + Sync + 'static,
    ) -> Self {
        self.tweak = Some(Arc::new(tweak));
        self
    }

    /// The resync period for `K`'s informer (for `DynamicObject`: every dynamic informer's).
    #[must_use]
    pub fn resync_for<K: Cacheable>(mut self, resync: Duration) -> Self {
        self.resync.insert(TypeId::of::<K>(), resync);
        self
    }

    /// Transforms `K` objects before they are cached (for example to drop
    /// `managedFields`); for `DynamicObject`, in every dynamic informer.
    #[must_use]
    pub fn transform_for<K: Cacheable>(
        mut self,
        transform: impl Fn(&mut K) + Send + Sync + 'static,
    ) -> Self {
        let f: TransformFunc<K> = Arc::new(transform);
        self.transforms.insert(TypeId::of::<K>(), Box::new(f));
        self
    }

    /// Leaves `strip`'s parts out of the objects of every informer while they are decoded
    /// (`Strip::MANAGED_FIELDS`: no cached object carries `metadata.managedFields`). The
    /// default is [`Strip::NONE`], as client-go's; a [`Manager`](crate::manager::Manager)'s
    /// factory strips managedFields unless told otherwise.
    #[must_use]
    pub fn strip(mut self, strip: Strip) -> Self {
        self.strip = strip;
        self
    }

    /// What `K`'s informers (typed and metadata-only; for `DynamicObject`, every dynamic
    /// informer) leave out, instead of the factory's [`strip`](Self::strip).
    #[must_use]
    pub fn strip_for<K: Cacheable>(mut self, strip: Strip) -> Self {
        self.strips.insert(TypeId::of::<K>(), strip);
        self
    }

    /// Records client-go's informer and reflector metrics for every informer, each labelled
    /// with its resource (`name="apps/v1/deployments"`, `name="v1/pods"`).
    #[must_use]
    pub fn metrics(mut self, provider: Arc<dyn CacheMetricsProvider>) -> Self {
        self.metrics = Some(provider);
        self
    }

    /// The factory.
    pub fn build(self) -> SharedInformerFactory {
        SharedInformerFactory {
            inner: Arc::new(Inner {
                client: self.client,
                default_resync: self.default_resync,
                namespace: self.namespace,
                tweak: self.tweak,
                resync: self.resync,
                transforms: self.transforms,
                strip: self.strip,
                strips: self.strips,
                metrics: self.metrics,
                informers: Mutex::new(Vec::new()),
                tasks: Mutex::new(Vec::new()),
                stop: CancellationToken::new(),
            }),
        }
    }
}

/// The `name` label of a factory informer's metrics: `group/version/resource`, or
/// `version/resource` for the core group.
fn informer_name(gvr: &GroupVersionResource) -> String {
    if gvr.group.is_empty() {
        format!("{}/{}", gvr.version, gvr.resource)
    } else {
        format!("{}/{}/{}", gvr.group, gvr.version, gvr.resource)
    }
}

fn gvr_of_resource(resource: &ApiResource) -> GroupVersionResource {
    GroupVersionResource::gvr(&resource.group, &resource.version, &resource.plural)
}

fn gvr_of<K: Object>() -> GroupVersionResource {
    GroupVersionResource::gvr(&K::group(&()), &K::version(&()), &K::plural(&()))
}

impl SharedInformerFactory {
    /// A factory over `client` with a default resync period (zero: no resync).
    pub fn new(client: Client, default_resync: Duration) -> Self {
        Self::builder(client).default_resync(default_resync).build()
    }

    /// A builder for a factory with options.
    pub fn builder(client: Client) -> SharedInformerFactoryBuilder {
        SharedInformerFactoryBuilder {
            client,
            default_resync: Duration::ZERO,
            namespace: None,
            tweak: None,
            resync: HashMap::new(),
            transforms: HashMap::new(),
            strip: Strip::NONE,
            strips: HashMap::new(),
            metrics: None,
        }
    }

    /// The shared informer for `K`, created on first request (with a namespace index).
    pub fn informer_for<K: Object>(&self) -> SharedIndexInformer<K> {
        self.informer_for_with::<K>(|builder| builder)
    }

    /// The shared informer for `K`; when this request creates it, `customize` adjusts its
    /// settings first (more indexers, the queue, the reflector). As client-go's
    /// `InformerFor`, the first request's settings win: a later request gets the existing
    /// informer and its `customize` is not called. The factory's resync, namespace, list
    /// tweak and transform for `K` are applied before `customize`.
    pub fn informer_for_with<K: Object>(
        &self,
        customize: impl FnOnce(SharedIndexInformerBuilder<K>) -> SharedIndexInformerBuilder<K>,
    ) -> SharedIndexInformer<K> {
        self.shared::<K>(Flavor::Typed, gvr_of::<K>(), &(), customize, || {
            SharedIndexInformer::builder(self.list_watch(ResourceClient::<K>::scoped(
                self.inner.client.clone(),
                self.inner.namespace.as_deref(),
            )))
        })
    }

    /// The shared informer for the resource `resource` describes, caching `DynamicObject`s
    /// (client-go's `dynamicinformer`), created on first request; `scope` says whether the
    /// factory's namespace applies to it (discovery tells:
    /// [`Discovery::resolve_gvk`](crate::client::Discovery::resolve_gvk)). Several
    /// controllers asking for the same group-version-resource share one informer, as they
    /// do for typed ones; a typed informer for the same resource is a separate one.
    /// [`for_resource`](Self::for_resource) finds it by group-version-resource. The
    /// factory's namespace, list tweak, metrics and its resync and transform for
    /// `DynamicObject` apply.
    pub fn dynamic_informer_for(
        &self,
        resource: &ApiResource,
        scope: Scope,
    ) -> SharedIndexInformer<DynamicObject> {
        self.dynamic_informer_for_with(resource, scope, |builder| builder)
    }

    /// [`dynamic_informer_for`](Self::dynamic_informer_for), with `customize` adjusting
    /// the informer's settings when this request creates it (the first settings win).
    pub fn dynamic_informer_for_with(
        &self,
        resource: &ApiResource,
        scope: Scope,
        customize: impl FnOnce(
            SharedIndexInformerBuilder<DynamicObject>,
        ) -> SharedIndexInformerBuilder<DynamicObject>,
    ) -> SharedIndexInformer<DynamicObject> {
        self.shared::<DynamicObject>(
            Flavor::Dynamic,
            gvr_of_resource(resource),
            resource,
            customize,
            || {
                let list_watch = ListWatch::dynamic(self.dynamic_client(resource, scope));
                SharedIndexInformer::builder_with(self.list_watch(list_watch), resource)
            },
        )
    }

    /// The dynamic client an informer of `resource` lists and watches with: in the
    /// factory's namespace when there is one and the resource is namespaced.
    fn dynamic_client(&self, resource: &ApiResource, scope: Scope) -> DynamicClient {
        let client = self.inner.client.clone();
        match (scope, self.inner.namespace.as_deref()) {
            (Scope::Namespaced, Some(namespace)) => {
                DynamicClient::namespaced(client, resource, namespace)
            }
            _ => DynamicClient::all(client, resource),
        }
    }

    /// The shared dynamic informer of the resource `gvr` names, which need not be a Rust
    /// type (client-go's `dynamicinformer.NewFilteredDynamicSharedInformerFactory(...)
    /// .ForResource(gvr)`): discovery tells its kind and scope, then it is
    /// [`dynamic_informer_for`](Self::dynamic_informer_for)'s informer, shared with every
    /// other request for the resource. Fails when the server does not serve `gvr` (a CRD
    /// not installed yet) or discovery cannot be read.
    pub async fn dynamic_informer_for_gvr(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<SharedIndexInformer<DynamicObject>, crate::client::Error> {
        let (resource, scope) = self.discover(gvr).await?;
        Ok(self.dynamic_informer_for(&resource, scope))
    }

    /// A lister over [`dynamic_informer_for_gvr`](Self::dynamic_informer_for_gvr)'s
    /// informer.
    pub async fn dynamic_lister_for_gvr(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<Lister<DynamicObject>, crate::client::Error> {
        Ok(self.dynamic_informer_for_gvr(gvr).await?.lister())
    }

    /// The shared metadata-only informer of the resource `resource` describes, known only
    /// at run time (client-go's `metadatainformer.NewFilteredSharedInformerFactory(...)
    /// .ForResource(gvr)`): it lists and watches with `as=PartialObjectMetadata` and caches
    /// `PartialObjectMeta<DynamicObject>`s (names, labels, annotations, owners, versions;
    /// no spec or status). One per group-version-resource, separate from the resource's
    /// dynamic informer and never returned by [`for_resource`](Self::for_resource); `scope`
    /// says whether the factory's namespace applies. The factory's namespace, list tweak,
    /// metrics and its resync and transform for `PartialObjectMeta<DynamicObject>` apply.
    pub fn metadata_informer_for_resource(
        &self,
        resource: &ApiResource,
        scope: Scope,
    ) -> SharedIndexInformer<PartialObjectMeta<DynamicObject>> {
        self.shared::<PartialObjectMeta<DynamicObject>>(
            Flavor::DynamicMetadata,
            gvr_of_resource(resource),
            resource,
            |b| b,
            || {
                let list_watch = ListWatch::dynamic(self.dynamic_client(resource, scope));
                SharedIndexInformer::builder_with(
                    MetadataListWatch::new(self.list_watch(list_watch)),
                    resource,
                )
            },
        )
    }

    /// A lister over [`metadata_informer_for_resource`](Self::metadata_informer_for_resource)'s
    /// informer.
    pub fn metadata_lister_for_resource(
        &self,
        resource: &ApiResource,
        scope: Scope,
    ) -> Lister<PartialObjectMeta<DynamicObject>> {
        self.metadata_informer_for_resource(resource, scope)
            .lister()
    }

    /// [`metadata_informer_for_resource`](Self::metadata_informer_for_resource) for the
    /// resource `gvr` names, its kind and scope found by discovery (see
    /// [`dynamic_informer_for_gvr`](Self::dynamic_informer_for_gvr)).
    pub async fn metadata_informer_for_gvr(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<SharedIndexInformer<PartialObjectMeta<DynamicObject>>, crate::client::Error> {
        let (resource, scope) = self.discover(gvr).await?;
        Ok(self.metadata_informer_for_resource(&resource, scope))
    }

    /// A lister over [`metadata_informer_for_gvr`](Self::metadata_informer_for_gvr)'s
    /// informer.
    pub async fn metadata_lister_for_gvr(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<Lister<PartialObjectMeta<DynamicObject>>, crate::client::Error> {
        Ok(self.metadata_informer_for_gvr(gvr).await?.lister())
    }

    /// `gvr`'s kind and scope, from discovery (not cached: informers are requested a few
    /// times at start, not per event).
    async fn discover(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<(ApiResource, Scope), crate::client::Error> {
        Discovery::new(self.inner.client.clone())
            .resolve_gvr(gvr)
            .await
    }

    /// A lister over the shared dynamic informer of `resource`.
    pub fn dynamic_lister_for(
        &self,
        resource: &ApiResource,
        scope: Scope,
    ) -> Lister<DynamicObject> {
        self.dynamic_informer_for(resource, scope).lister()
    }

    /// The shared metadata-only informer for `K` (client-go's `metadatainformer`,
    /// controller-runtime's `WatchesMetadata`): it lists and watches with
    /// `as=PartialObjectMetadata`, so it caches `PartialObjectMeta<K>`, names, labels,
    /// annotations, owners and versions, and neither fetches nor keeps specs or statuses.
    /// It is a separate informer from [`informer_for`](Self::informer_for)'s; the factory's
    /// namespace, list tweak, resync for `PartialObjectMeta<K>` and metrics apply to it.
    pub fn metadata_informer_for<K: Object>(&self) -> SharedIndexInformer<PartialObjectMeta<K>> {
        self.shared::<PartialObjectMeta<K>>(
            Flavor::Metadata,
            gvr_of::<K>(),
            &(),
            |b| b,
            || {
                SharedIndexInformer::builder(MetadataListWatch::new(self.list_watch(
                    ResourceClient::<K>::scoped(
                        self.inner.client.clone(),
                        self.inner.namespace.as_deref(),
                    ),
                )))
            },
        )
    }

    /// A lister over `K`'s shared metadata-only informer.
    pub fn metadata_lister_for<K: Object>(&self) -> Lister<PartialObjectMeta<K>> {
        self.metadata_informer_for::<K>().lister()
    }

    /// A list-watch over `client` with the factory's list tweak and strip.
    fn list_watch<K: 'static>(&self, client: impl Into<ListWatch<K>>) -> ListWatch<K> {
        let strip = self
            .inner
            .strips
            .get(&TypeId::of::<K>())
            .copied()
            .unwrap_or(self.inner.strip);
        let list_watch = client.into().strip(strip);
        match &self.inner.tweak {
            Some(tweak) => list_watch.tweak(tweak.clone()),
            None => list_watch,
        }
    }

    /// The shared `flavor` informer of `T` for `gvr`; when this request creates it, `new`
    /// makes its builder, the factory's settings are applied and then `customize`.
    fn shared<T: Cacheable>(
        &self,
        flavor: Flavor,
        gvr: GroupVersionResource,
        dyntype: &T::DynamicType,
        customize: impl FnOnce(SharedIndexInformerBuilder<T>) -> SharedIndexInformerBuilder<T>,
        new: impl FnOnce() -> SharedIndexInformerBuilder<T>,
    ) -> SharedIndexInformer<T> {
        let mut informers = self.inner.informers.lock();
        // A Rust type names one typed (or metadata) informer; dynamic informers share
        // their type, so they are told apart by resource.
        if let Some(existing) = informers
            .iter()
            .filter(|e| e.flavor == flavor && e.gvr == gvr)
            .find_map(|e| e.informer.downcast_ref::<SharedIndexInformer<T>>())
        {
            return existing.clone();
        }
        let resync = self
            .inner
            .resync
            .get(&TypeId::of::<T>())
            .copied()
            .unwrap_or(self.inner.default_resync);
        let mut builder = new().default_resync(resync).indexers(namespace_indexers());
        if let Some(transform) = self
            .inner
            .transforms
            .get(&TypeId::of::<T>())
            .and_then(|t| t.downcast_ref::<TransformFunc<T>>())
        {
            builder = builder.transform(transform.clone());
        }
        if let Some(provider) = &self.inner.metrics {
            let name = format!("{}{}", flavor.metrics_prefix(), informer_name(&gvr));
            builder = builder.metrics(&name, provider.as_ref());
        }
        let unstarted = customize(builder).build();
        let informer = unstarted.handle();
        let name = match flavor {
            Flavor::Dynamic | Flavor::DynamicMetadata => {
                format!("{} {}", type_name::<T>(), informer_name(&gvr))
            }
            Flavor::Typed | Flavor::Metadata => type_name::<T>().to_owned(),
        };
        informers.push(Entry {
            informer: Box::new(informer.clone()),
            erased: Arc::new(Erased::new(informer.clone(), dyntype)),
            gvr,
            flavor,
            name,
            run: Some(Box::new(move |stop| tokio::spawn(unstarted.run(stop)))),
        });
        informer
    }

    /// A lister over `K`'s shared informer (requesting the informer if needed).
    pub fn lister_for<K: Object>(&self) -> Lister<K> {
        self.informer_for::<K>().lister()
    }

    /// The informer for `gvr`, if one has been requested (client-go's `ForResource`).
    pub fn for_resource(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<GenericInformer, FactoryError> {
        self.inner
            .informers
            .lock()
            .iter()
            .find(|e| &e.gvr == gvr && matches!(e.flavor, Flavor::Typed | Flavor::Dynamic))
            .map(|e| GenericInformer {
                gvr: e.gvr.clone(),
                inner: e.erased.clone(),
            })
            .ok_or_else(|| {
                FactoryError::UnknownResource(format!(
                    "{}/{}, Resource={}",
                    gvr.group, gvr.version, gvr.resource
                ))
            })
    }

    /// Starts every requested informer that is not running yet; returns at once. Needs a
    /// tokio runtime. Does nothing after [`shutdown`](Self::shutdown).
    pub fn start(&self) {
        if self.inner.stop.is_cancelled() {
            return;
        }
        let mut informers = self.inner.informers.lock();
        let mut tasks = self.inner.tasks.lock();
        for run in informers.iter_mut().filter_map(|e| e.run.take()) {
            tasks.push(run(self.inner.stop.child_token()));
        }
    }

    /// Waits until every started informer has synced or `stop` fires; the result per
    /// informer, as client-go returns it, keyed by type name (`std::any::type_name`), and
    /// for dynamic informers by `DynamicObject`'s type name and the resource
    /// (`kube_core::dynamic::DynamicObject apps/v1/deployments`). Informers not started are
    /// left out.
    pub async fn wait_for_cache_sync(&self, stop: &CancellationToken) -> BTreeMap<String, bool> {
        let started: Vec<(String, Arc<dyn ErasedInformer>)> = self
            .inner
            .informers
            .lock()
            .iter()
            .filter(|e| e.started())
            .map(|e| (e.name.clone(), e.erased.clone()))
            .collect();
        let mut result = BTreeMap::new();
        for (name, informer) in started {
            let synced = crate::cache::wait_for_cache_sync(stop, &[&Synced(informer)]).await;
            result.insert(name, synced);
        }
        result
    }

    /// Whether every started informer has synced (`true` when none has started): a
    /// readiness check (`/readyz`) that does not wait.
    pub fn has_synced(&self) -> bool {
        self.inner
            .informers
            .lock()
            .iter()
            .filter(|e| e.started())
            .all(|e| e.erased.has_synced())
    }

    /// Stops every informer and waits for their tasks to finish. The factory cannot be
    /// started again.
    pub async fn shutdown(&self) {
        self.inner.stop.cancel();
        let tasks = std::mem::take(&mut *self.inner.tasks.lock());
        for task in tasks {
            if let Err(error) = task.await {
                tracing::error!(%error, "informer task failed");
            }
        }
    }
}

struct Synced(Arc<dyn ErasedInformer>);

impl CacheSynced for Synced {
    fn has_synced(&self) -> bool {
        self.0.has_synced()
    }
}
