//! [`ControllerBuilder`]: what a controller reconciles, what wakes it, and how it runs
//! (controller-runtime's `pkg/builder`), fixed before the controller exists.

use std::{sync::Arc, time::Duration};

use super::{
    CachedClient, ConsistencyStore, Controller, Predicate, Request,
    controller::Settings,
    handler::{map_owner, map_self},
    predicate::Always,
    shard::Handover,
    source::{Source, source},
};
use crate::{
    Object, ResourceScope,
    informers::SharedInformerFactory,
    metrics::{ControllerMetrics, ControllerMetricsProvider},
    record::EventRecorder,
    sharding::ShardRing,
    workqueue::{MetricsProvider, QueueConfig, RateLimiter, RateLimitingQueue},
};

/// Builds a [`Controller`] for the primary type `K`; see [`Controller::builder`].
pub struct ControllerBuilder<K: Object> {
    factory: SharedInformerFactory,
    name: Option<String>,
    predicate: Arc<dyn Predicate<K>>,
    sources: Vec<Source>,
    settings: Settings,
    rate_limiter: Option<Arc<dyn RateLimiter<Request>>>,
    recorder: Option<EventRecorder>,
    metrics: Option<Arc<dyn ControllerMetricsProvider>>,
    queue_metrics: Option<Arc<dyn MetricsProvider>>,
    consistency: Option<Arc<ConsistencyStore<K>>>,
    ring: Option<ShardRing>,
    /// Registers each owned kind with a ring (used when the controller is sharded).
    owned: Vec<fn(&ShardRing)>,
}

impl<K: Object> std::fmt::Debug for ControllerBuilder<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerBuilder")
            .field("name", &self.name)
            .field("sources", &self.sources.len())
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl<K: Object> Controller<K> {
    /// A builder for a controller of `K` whose informers come from `factory` (shared with
    /// every other controller and lister of the factory).
    pub fn builder(factory: &SharedInformerFactory) -> ControllerBuilder<K> {
        ControllerBuilder {
            factory: factory.clone(),
            name: None,
            predicate: Arc::new(Always),
            sources: Vec::new(),
            settings: Settings::default(),
            rate_limiter: None,
            recorder: None,
            metrics: None,
            queue_metrics: None,
            consistency: None,
            ring: None,
            owned: Vec::new(),
        }
    }
}

impl<K: Object> ControllerBuilder<K> {
    /// The controller's name: its logs, metrics and queue carry it (default: the primary
    /// kind in lower case, as controller-runtime's).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Filters the primary type's events (combine predicates with `.and`, `.or`, `.not`,
    /// see [`predicate`](super::predicate); controller-runtime's `WithEventFilter` applies
    /// to every source, this one to `K`'s events only — pass predicates to
    /// [`owns_with`](Self::owns_with) and [`watches_with`](Self::watches_with) for theirs).
    #[must_use]
    pub fn with_event_filter(mut self, predicate: impl Predicate<K>) -> Self {
        self.predicate = Arc::new(predicate);
        self
    }

    /// Reconciles the controller owner of every `O` that changes, when that owner is a
    /// `K` (`ownerReferences` with `controller: true`, see
    /// [`set_controller_reference`](crate::controllerutil::set_controller_reference)).
    #[must_use]
    pub fn owns<O: Object>(self) -> Self {
        self.owns_with::<O>(Always)
    }

    /// [`owns`](Self::owns), for the `O` events `predicate` lets through.
    #[must_use]
    pub fn owns_with<O: Object>(mut self, predicate: impl Predicate<O>) -> Self {
        let namespaced = <K::Scope as ResourceScope>::NAMESPACED;
        self.owned.push(|ring| ring.shard_owned::<O>());
        self.sources.push(source(
            self.factory.informer_for::<O>(),
            map_owner::<K, O>(namespaced),
            Arc::new(predicate),
        ));
        self
    }

    /// Reconciles the requests `map` returns for every `W` that changes (for an update,
    /// those of the old and of the new object).
    #[must_use]
    pub fn watches<W: Object>(
        self,
        map: impl Fn(&W) -> Vec<Request> + Send + Sync + 'static,
    ) -> Self {
        self.watches_with(map, Always)
    }

    /// [`watches`](Self::watches), for the `W` events `predicate` lets through.
    #[must_use]
    pub fn watches_with<W: Object>(
        mut self,
        map: impl Fn(&W) -> Vec<Request> + Send + Sync + 'static,
        predicate: impl Predicate<W>,
    ) -> Self {
        self.sources.push(source(
            self.factory.informer_for::<W>(),
            Arc::new(map),
            Arc::new(predicate),
        ));
        self
    }

    /// How many reconciles may run at once (default 1); one request is never reconciled
    /// twice at the same time.
    #[must_use]
    pub fn max_concurrent_reconciles(mut self, n: usize) -> Self {
        self.settings.max_concurrent_reconciles = n.max(1);
        self
    }

    /// Cancels a reconcile that runs longer, and retries it with backoff (default: none).
    #[must_use]
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.settings.reconcile_timeout = Some(timeout);
        self
    }

    /// How long reconciles running at shutdown may take to finish (default 30 s, as
    /// controller-runtime's manager).
    #[must_use]
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.settings.graceful_shutdown_timeout = timeout;
        self
    }

    /// The failure backoff (default:
    /// [`default_controller_rate_limiter`](crate::workqueue::default_controller_rate_limiter),
    /// 5 ms doubling to 1000 s per request, and 10 qps / burst 100 overall).
    #[must_use]
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<Request> + 'static) -> Self {
        self.rate_limiter = Some(Arc::new(limiter));
        self
    }

    /// Records a Warning event (`ReconcileError`) on the object for every terminal error.
    #[must_use]
    pub fn recorder(mut self, recorder: EventRecorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// Records controller-runtime's `controller_runtime_*` series through `provider`
    /// (for example a [`PrometheusMetrics`](crate::metrics::PrometheusMetrics)).
    #[must_use]
    pub fn metrics(mut self, provider: Arc<dyn ControllerMetricsProvider>) -> Self {
        self.metrics = Some(provider);
        self
    }

    /// Records the `workqueue_*` series of the controller's queue (named after the
    /// controller) through `provider`.
    #[must_use]
    pub fn queue_metrics(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.queue_metrics = Some(provider);
        self
    }

    /// Read-your-own-writes for reconciles (KEP-5647): before reconciling a request, wait
    /// (up to [`consistency_wait`](Self::consistency_wait)) until the cache reflects every
    /// write of that object made through `client` (the [`CachedClient`] the reconcile writes
    /// `K` through; nothing changes if it was built without read-your-own-writes). A request
    /// whose cache is still stale is requeued with backoff instead of reconciled, and
    /// counted in `stale_sync_skips_total`.
    #[must_use]
    pub fn read_your_writes(mut self, client: &CachedClient<K>) -> Self {
        self.consistency = client.consistency().cloned();
        self
    }

    /// How long a reconcile waits for the cache to see the controller's own write (default
    /// 5 s).
    #[must_use]
    pub fn consistency_wait(mut self, wait: Duration) -> Self {
        self.settings.consistency_wait = wait;
        self
    }

    /// Reconciles only the share of `K` that `ring` assigns to this replica, and hands
    /// objects back when the ring's sharder moves them (see [`sharding`](crate::sharding)).
    /// `K` becomes a primary kind of the ring and every [`owns`](Self::owns) type an
    /// owned kind. The factory's informers should watch only this replica's share
    /// ([`ShardRing::member_tweak`]); the [`Manager`](crate::manager::Manager) of a ring
    /// does that and shards its controllers itself. Without a ring, nothing changes.
    #[must_use]
    pub fn sharded(mut self, ring: &ShardRing) -> Self {
        self.ring = Some(ring.clone());
        self
    }

    /// The controller; its informers are requested from the factory now (so a
    /// `factory.start()` before [`Controller::run`] starts them too).
    pub fn build(self) -> Controller<K> {
        let name = self.name.unwrap_or_else(|| K::kind(&()).to_lowercase());
        let mut config = QueueConfig::new().name(name.clone());
        if let Some(limiter) = self.rate_limiter {
            config = config.shared_rate_limiter(limiter);
        }
        if let Some(provider) = self.queue_metrics {
            config = config.shared_metrics_provider(provider);
        }
        let metrics = self
            .metrics
            .map(|provider| ControllerMetrics::new(&name, provider.as_ref()));
        let informer = self.factory.informer_for::<K>();
        let handover = self.ring.as_ref().map(|ring| {
            ring.shard_primary::<K>();
            for register in &self.owned {
                register(ring);
            }
            Handover::new(ring)
        });
        let predicate = match &handover {
            Some(handover) => handover.predicate(self.predicate),
            None => self.predicate,
        };
        let mut sources = vec![source(informer.clone(), map_self(), predicate)];
        sources.extend(self.sources);
        Controller {
            name,
            factory: self.factory,
            informer,
            queue: RateLimitingQueue::with_config(config),
            sources,
            settings: self.settings,
            recorder: self.recorder,
            metrics,
            consistency: self.consistency,
            handover,
        }
    }
}
