//! [`Manager`]: one process object owning the client, the informer factory, the
//! controllers, leader election and the probe and metrics endpoints (controller-runtime's
//! `pkg/manager`).
//!
//! # `run`
//!
//! 1. Binds nothing new (the listeners were bound by [`ManagerBuilder::build`], so their
//!    addresses are known before `run`), starts the HTTP endpoints and the informer
//!    factory: caches warm whether or not this replica leads (controller-runtime's
//!    warmup), so a new leader reconciles at once, and `/readyz` turns 200 when they have
//!    synced.
//! 2. Starts the runnables that do not need leadership (with the `webhook` feature, the
//!    webhook server: every replica serves admission and conversion requests).
//! 3. With leader election, stands for election; on winning, starts the runnables that need
//!    leadership (controllers) with a token that fires when leadership is lost. Without, it
//!    starts them at once.
//! 4. Waits for `stop` (or a signal, with [`Manager::run_until_signal`]), or for the lease
//!    to be lost.
//! 5. Shuts down in an order that never lets two replicas act as leader: runnables are
//!    cancelled and awaited (each controller lets its in-flight reconciles finish, bounded;
//!    the manager waits at most `graceful_shutdown_timeout` for all of them), **then** the
//!    elector stops, releasing the lease if configured, then the informers, the event
//!    broadcaster (its queued events flushed) and the endpoints stop. A lost lease ends
//!    `run` with [`ManagerError::LeaderElectionLost`], as
//!    controller-runtime exits: the process should restart and stand again.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use futures::{FutureExt, future::BoxFuture};
use parking_lot::Mutex;
use prometheus_client::registry::Registry;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{
    checks::{Check, Checks},
    server::{Endpoints, Transport, serve},
};
use crate::{
    Object,
    client::{Client, Strip},
    controller::{Action, Controller, ControllerBuilder},
    informers::SharedInformerFactory,
    leaderelection::{
        ConfigError, LeaderElectionConfig, LeaderElector, LeaseCandidateKeeper, LeaseLock,
    },
    metrics::PrometheusMetrics,
    record::{ClientEventSink, EventBroadcaster, EventRecorder, events},
    sharding::{RingMetrics, ShardRing, Sharder},
    workqueue::PrometheusMetricsProvider,
};
use k8s_openapi::api::core::v1::EventSource;

/// How far past its lease a leader that stopped renewing may get before `/healthz` fails
/// (controller-runtime's leader-election health check).
pub const LEADER_ELECTION_HEALTH_TOLERANCE: Duration = Duration::from_secs(20);

/// A manager could not be built or ended in error.
#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    /// An endpoint address could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The leader-election settings are invalid.
    #[error("leader election: {0}")]
    LeaderElection(#[from] ConfigError),
    /// This replica lost its lease: leader-only work was stopped; restart and stand again.
    #[error("leader election lost")]
    LeaderElectionLost,
    /// This replica could not renew its member Lease in its shard ring: its controllers
    /// were stopped and its objects move to the other members; restart and join again.
    #[error("shard ring membership lost")]
    ShardMembershipLost,
    /// A shard ring runs controllers on every replica; leader election would run them on
    /// one. Choose one.
    #[error("a manager takes a shard ring or leader election, not both")]
    ShardRingWithLeaderElection,
    /// An informer refused an event handler (it was stopped).
    #[error("informer: {0}")]
    Informer(#[from] crate::cache::InformerError),
    /// Waiting for a signal failed.
    #[error("signals: {0}")]
    Signal(#[source] std::io::Error),
    /// Secure metrics need an address of their own: the probes stay plain HTTP.
    #[error("secure metrics cannot share the probes' address {0}")]
    SecureMetricsOnProbeAddress(SocketAddr),
    /// The secure metrics' certificate could not be made or read.
    #[cfg(feature = "secure-metrics")]
    #[error("metrics certificate: {0}")]
    MetricsCertificate(#[from] crate::certs::CertError),
    /// rustls refused the secure metrics' TLS settings.
    #[cfg(feature = "secure-metrics")]
    #[error("metrics TLS: {0}")]
    MetricsTls(#[source] rustls::Error),
}

/// Where the lease lives and who this replica is.
#[derive(Debug, Clone)]
pub struct LeaderElectionOptions {
    /// The Lease's namespace.
    pub namespace: String,
    /// The Lease's name (one per operator).
    pub name: String,
    /// This replica's identity (unique: the pod name, or hostname and a random suffix).
    pub identity: String,
    /// Durations and options (its callbacks are called after the manager's own).
    pub config: LeaderElectionConfig,
}

/// A shard ring's settings (see [`sharding`](crate::sharding)).
#[derive(Debug, Clone)]
pub struct ShardRingOptions {
    /// The namespace of the ring's Leases (members' and the sharder's).
    pub namespace: String,
    /// The ring's name (a label value; one per sharded operator).
    pub ring: String,
    /// This replica's identity (unique: the pod name).
    pub identity: String,
    /// The membership and sharder election timings (its callbacks are not used).
    pub config: LeaderElectionConfig,
}

/// Builds a [`Manager`].
#[derive(Debug)]
pub struct ManagerBuilder {
    client: Client,
    default_resync: Duration,
    strip: Strip,
    namespace: Option<String>,
    leader_election: Option<LeaderElectionOptions>,
    lease_candidate: Option<LeaseCandidateKeeper>,
    shard_ring: Option<ShardRingOptions>,
    probe_addr: Option<SocketAddr>,
    metrics_addr: Option<SocketAddr>,
    graceful_shutdown_timeout: Duration,
    #[cfg(feature = "secure-metrics")]
    metrics_secure: Option<super::SecureServing>,
    #[cfg(feature = "webhook")]
    webhook_server: Option<crate::webhook::Server>,
    #[cfg(feature = "webhook")]
    ca_injector: Option<crate::webhook::CaInjector>,
}

impl ManagerBuilder {
    /// Serves `/metrics` over HTTPS, by default behind authentication (TokenReview) and
    /// authorization (SubjectAccessReview with `nonResourceAttributes` of the request's path
    /// and verb): controller-runtime's `SecureServing` with
    /// `filters.WithAuthenticationAndAuthorization`, as kubebuilder scaffolds it. Without
    /// [`metrics_address`](Self::metrics_address) it serves on `0.0.0.0:8443`; the address
    /// must not be the probes'. [`Manager::metrics_ca_bundle`] is the CA that verifies the
    /// certificate. See the [module docs](super#secure-metrics) for the RBAC it needs.
    #[cfg(feature = "secure-metrics")]
    #[must_use]
    pub fn metrics_secure(mut self, options: super::SecureServing) -> Self {
        self.metrics_secure = Some(options);
        self
    }

    /// Serves `server`'s webhooks while the manager runs, on every replica (webhooks do not
    /// need leadership), its `controller_runtime_webhook_*` series on the manager's
    /// `/metrics`, and `/readyz` failing until it serves (controller-runtime's webhook
    /// server runnable and `StartedChecker`).
    #[cfg(feature = "webhook")]
    #[must_use]
    pub fn webhook_server(mut self, server: crate::webhook::Server) -> Self {
        self.webhook_server = Some(server);
        self
    }

    /// Keeps the CA bundle of the [`webhook_server`](Self::webhook_server) injected with
    /// `injector` (at start, on every rotation, and every resync period), on every replica.
    /// For a self-signed certificate, whose CA is the replica's own: run one replica, or
    /// serve a shared certificate from a directory (cert-manager) instead.
    #[cfg(feature = "webhook")]
    #[must_use]
    pub fn ca_injector(mut self, injector: crate::webhook::CaInjector) -> Self {
        self.ca_injector = Some(injector);
        self
    }

    /// The informer factory's default resync period (default: none).
    #[must_use]
    pub fn default_resync(mut self, resync: Duration) -> Self {
        self.default_resync = resync;
        self
    }

    /// Caches watch only this namespace.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Runs controllers only while this replica holds the Lease.
    #[must_use]
    pub fn leader_election(mut self, options: LeaderElectionOptions) -> Self {
        self.leader_election = Some(options);
        self
    }

    /// Keeps this replica's `LeaseCandidate` while the manager runs (deleted on a clean
    /// stop), for a coordinated [`leader_election`](Self::leader_election)
    /// (`config.coordinated`, KEP-4355): the coordinated leader election controller picks
    /// the holder among the candidates (the oldest emulation version), so a mixed-version
    /// rollout keeps the oldest compatible leader. The keeper's Lease name should be the
    /// election's.
    #[must_use]
    pub fn lease_candidate(mut self, keeper: LeaseCandidateKeeper) -> Self {
        self.lease_candidate = Some(keeper);
        self
    }

    /// Runs the manager's controllers sharded across the replicas of a ring instead of on
    /// one leader (see [`sharding`](crate::sharding)): its informers watch only this
    /// replica's share; controllers run while this replica holds its member Lease and
    /// hand back what the sharder moves away; every replica stands for the ring's sharder
    /// election; `/readyz` reports the ring (`shard-ring`: failing until this replica is a
    /// member) and `/metrics` the `kubegen_shard_ring_*` series. Exclusive with
    /// [`leader_election`](Self::leader_election).
    #[must_use]
    pub fn shard_ring(mut self, options: ShardRingOptions) -> Self {
        self.shard_ring = Some(options);
        self
    }

    /// Serves `/healthz`, `/livez` and `/readyz` here (port 0: any free port, see
    /// [`Manager::probe_addr`]).
    #[must_use]
    pub fn probe_address(mut self, addr: SocketAddr) -> Self {
        self.probe_addr = Some(addr);
        self
    }

    /// What the manager's informers leave out of every object while decoding it. The
    /// default is [`Strip::MANAGED_FIELDS`]: cached objects carry no
    /// `metadata.managedFields` (server-side apply's field ownership, often 30–40% of an
    /// object, which reconcilers do not read), where client-go and controller-runtime keep
    /// them unless a transform drops them. This is a behaviour change from a plain
    /// `SharedInformerFactory`: a controller that reads managedFields from its cache opts
    /// out with `strip(Strip::NONE)`. Writes are unaffected: an update that sends no
    /// managedFields keeps the server's (kube-apiserver's `fieldmanager`).
    #[must_use]
    pub fn strip(mut self, strip: Strip) -> Self {
        self.strip = strip;
        self
    }

    /// Serves `/metrics` here; the same address as the probes shares their server.
    #[must_use]
    pub fn metrics_address(mut self, addr: SocketAddr) -> Self {
        self.metrics_addr = Some(addr);
        self
    }

    /// How long `run` waits for runnables to stop (default 30 s).
    #[must_use]
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }

    /// The manager, its endpoints bound (not yet served).
    ///
    /// The client's requests are counted on `/metrics` (client-go's
    /// `rest_client_requests_total`, `rest_client_request_duration_seconds`,
    /// `rest_client_rate_limiter_duration_seconds` and `rest_client_request_retries_total`):
    /// unless it was built with a metrics provider of its own, the manager's client
    /// ([`Manager::client`], and every informer, controller and lease lock of the manager)
    /// records into the manager's registry, as controller-runtime registers client-go's
    /// REST metrics in its registry for every client of the process.
    pub fn build(mut self) -> Result<Manager, ManagerError> {
        let mut registry = Registry::default();
        let metrics = PrometheusMetrics::new(&mut registry);
        if !self.client.has_metrics() {
            self.client = self.client.with_metrics(Arc::new(metrics.clone()));
        }
        let queue_metrics = Arc::new(PrometheusMetricsProvider::new(&mut registry));
        let mut factory = SharedInformerFactory::builder(self.client.clone())
            .default_resync(self.default_resync)
            .strip(self.strip)
            .metrics(Arc::new(metrics.clone()));
        if let Some(namespace) = &self.namespace {
            factory = factory.namespace(namespace.clone());
        }
        let ring = match (self.shard_ring, &self.leader_election) {
            (Some(_), Some(_)) => return Err(ManagerError::ShardRingWithLeaderElection),
            (Some(options), None) => Some(
                ShardRing::builder(
                    self.client.clone(),
                    options.namespace,
                    &options.ring,
                    options.identity,
                )
                .config(options.config)
                .watch_namespace(self.namespace.clone())
                .metrics(RingMetrics::register(&mut registry))
                .build(),
            ),
            (None, _) => None,
        };
        if let Some(ring) = &ring {
            factory = factory.tweak_list_params(ring.member_tweak());
        }
        let factory = factory.build();
        let elector = match self.leader_election {
            None => ring.as_ref().map(|ring| {
                let name = ring.member_lease_name();
                let config = LeaderElectionConfig {
                    callbacks: Default::default(),
                    ..ring.config().clone()
                }
                .metrics(&name, &metrics);
                (ring.member_lock(), config)
            }),
            Some(options) => {
                let lock = LeaseLock::new(
                    self.client.clone(),
                    options.namespace,
                    options.name.clone(),
                    options.identity,
                );
                let config = options.config.metrics(&options.name, &metrics);
                Some((lock, config))
            }
        };
        let bind = |addr: SocketAddr| {
            std::net::TcpListener::bind(addr)
                .and_then(|l| l.set_nonblocking(true).map(|()| l))
                .map_err(|source| ManagerError::Bind { addr, source })
        };
        #[cfg(feature = "secure-metrics")]
        let secure = match self.metrics_secure.take() {
            None => None,
            Some(options) => {
                let addr = *self
                    .metrics_addr
                    .get_or_insert_with(super::default_secure_metrics_address);
                // Port 0 on both binds two free ports.
                if self.probe_addr == Some(addr) && addr.port() != 0 {
                    return Err(ManagerError::SecureMetricsOnProbeAddress(addr));
                }
                let certs = super::secure::SecureCerts::load(options.certificates)?;
                let auth = options
                    .authentication_and_authorization
                    .then(|| Arc::new(super::MetricsAuth::new(self.client.clone())));
                Some((certs, auth))
            }
        };
        let probe = self.probe_addr.map(bind).transpose()?;
        #[cfg(feature = "secure-metrics")]
        let own_listener = secure.is_some();
        #[cfg(not(feature = "secure-metrics"))]
        let own_listener = false;
        let metrics_listener = match (self.metrics_addr, self.probe_addr) {
            (Some(m), Some(p)) if m == p && !own_listener => None,
            (Some(m), _) => Some(bind(m)?),
            (None, _) => None,
        };
        let shared_metrics = self.metrics_addr.is_some() && metrics_listener.is_none();
        let mut healthz = Checks::default();
        healthz.add("ping", Arc::new(|| Ok(())));
        let mut readyz = Checks::default();
        #[cfg(feature = "webhook")]
        let webhook = self.webhook_server.inspect(|server| {
            server.register_metrics(&mut registry);
            let started = server.started();
            readyz.add(
                "webhook",
                Arc::new(move || {
                    started
                        .load(std::sync::atomic::Ordering::Acquire)
                        .then_some(())
                        .ok_or_else(|| "the webhook server has not started".to_owned())
                }),
            );
        });
        let synced = factory.clone();
        readyz.add(
            "informers",
            Arc::new(move || {
                synced
                    .has_synced()
                    .then_some(())
                    .ok_or_else(|| "caches have not synced".to_owned())
            }),
        );
        #[allow(unused_mut)]
        let mut manager = Manager {
            client: self.client,
            factory,
            registry: Arc::new(Mutex::new(registry)),
            metrics,
            queue_metrics,
            runnables: Vec::new(),
            election: elector,
            healthz,
            readyz,
            probe,
            metrics_listener,
            shared_metrics,
            graceful_shutdown_timeout: self.graceful_shutdown_timeout,
            broadcaster: None,
            events_broadcaster: None,
            ring,
            #[cfg(feature = "secure-metrics")]
            secure,
        };
        if let Some(keeper) = self.lease_candidate {
            manager.add_runnable("lease-candidate", false, move |stop| async move {
                if let Err(error) = keeper.run(stop).await {
                    tracing::error!(%error, "the lease candidate failed");
                }
            });
        }
        if let Some(ring) = manager.ring.clone() {
            manager.add_runnable("sharder", false, move |stop| Sharder::new(ring).run(stop));
        }
        #[cfg(feature = "webhook")]
        if let Some(server) = webhook {
            if let Some(injector) = self.ca_injector {
                let bundles = server.cert_resolver().subscribe_ca_bundle();
                manager.add_runnable("ca-injector", false, move |stop| {
                    injector.run(bundles, stop)
                });
            }
            manager.add_runnable("webhook-server", false, move |stop| async move {
                if let Err(error) = server.run(stop).await {
                    tracing::error!(%error, "webhook server failed");
                }
            });
        }
        Ok(manager)
    }
}

/// Something the manager runs until its token fires.
struct Runnable {
    name: String,
    needs_leader: bool,
    run: Box<dyn FnOnce(CancellationToken) -> BoxFuture<'static, ()> + Send>,
}

/// Owns the client, the informer factory, the controllers, leader election and the
/// endpoints of one operator process; see the module docs.
pub struct Manager {
    client: Client,
    factory: SharedInformerFactory,
    registry: Arc<Mutex<Registry>>,
    metrics: PrometheusMetrics,
    queue_metrics: Arc<PrometheusMetricsProvider>,
    runnables: Vec<Runnable>,
    election: Option<(LeaseLock, LeaderElectionConfig)>,
    healthz: Checks,
    readyz: Checks,
    probe: Option<std::net::TcpListener>,
    metrics_listener: Option<std::net::TcpListener>,
    shared_metrics: bool,
    graceful_shutdown_timeout: Duration,
    /// Created by the first `event_recorder` call; shut down at the end of `run`.
    broadcaster: Option<EventBroadcaster>,
    /// Created by the first `events_recorder` call; shut down at the end of `run`.
    events_broadcaster: Option<events::EventBroadcaster>,
    /// The shard ring, when the controllers are sharded.
    ring: Option<ShardRing>,
    /// The secure metrics' certificate and filter.
    #[cfg(feature = "secure-metrics")]
    secure: Option<(super::secure::SecureCerts, Option<Arc<super::MetricsAuth>>)>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.runnables.iter().map(|r| r.name.as_str()).collect();
        f.debug_struct("Manager")
            .field("runnables", &names)
            .field("leader_election", &self.election.is_some())
            .field("probe_addr", &self.probe_addr())
            .field("metrics_addr", &self.metrics_addr())
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A builder for a manager over `client`.
    pub fn builder(client: Client) -> ManagerBuilder {
        ManagerBuilder {
            client,
            default_resync: Duration::ZERO,
            strip: Strip::MANAGED_FIELDS,
            namespace: None,
            leader_election: None,
            lease_candidate: None,
            shard_ring: None,
            probe_addr: None,
            metrics_addr: None,
            graceful_shutdown_timeout: Duration::from_secs(30),
            #[cfg(feature = "secure-metrics")]
            metrics_secure: None,
            #[cfg(feature = "webhook")]
            webhook_server: None,
            #[cfg(feature = "webhook")]
            ca_injector: None,
        }
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The informer factory every controller and lister of this manager shares (its
    /// informer and reflector metrics go to the manager's registry).
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.factory
    }

    /// The manager's metrics provider (any component can record through it).
    pub fn metrics(&self) -> &PrometheusMetrics {
        &self.metrics
    }

    /// The registry `/metrics` serves; register your own metrics in it.
    pub fn registry(&self) -> Arc<Mutex<Registry>> {
        self.registry.clone()
    }

    /// The bound probe address (`/healthz`, `/readyz`), if any.
    pub fn probe_addr(&self) -> Option<SocketAddr> {
        self.probe.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The bound metrics address, if any.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        match (&self.metrics_listener, self.shared_metrics) {
            (Some(listener), _) => listener.local_addr().ok(),
            (None, true) => self.probe_addr(),
            (None, false) => None,
        }
    }

    /// The CA bundle (PEM) that verifies the certificate of the secure metrics endpoint
    /// ([`ManagerBuilder::metrics_secure`]), `None` when metrics are plain HTTP: what a
    /// scraper trusts (for a self-signed certificate, this replica's own CA).
    #[cfg(feature = "secure-metrics")]
    pub fn metrics_ca_bundle(&self) -> Option<Vec<u8>> {
        self.secure.as_ref().map(|(certs, _)| certs.ca_bundle())
    }

    /// A controller builder over the manager's factory, recording controller-runtime's and
    /// the queue's metrics in the manager's registry.
    pub fn controller<K: Object>(&self) -> ControllerBuilder<K> {
        let builder = Controller::<K>::builder(&self.factory)
            .metrics(Arc::new(self.metrics.clone()))
            .queue_metrics(self.queue_metrics.clone());
        match &self.ring {
            Some(ring) => builder.sharded(ring),
            None => builder,
        }
    }

    /// The shard ring, when the manager was built with one.
    pub fn shard_ring(&self) -> Option<&ShardRing> {
        self.ring.as_ref()
    }

    /// Runs `controller` with `reconcile` and `ctx` while this replica leads (always, without
    /// leader election).
    pub fn add_controller<K, C, F, Fut, E>(
        &mut self,
        controller: Controller<K>,
        reconcile: F,
        ctx: Arc<C>,
    ) where
        K: Object,
        C: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let name = controller.name().to_owned();
        self.add_runnable(name.clone(), true, move |stop| async move {
            match controller.run(reconcile, ctx, stop).await {
                Ok(report) => tracing::info!(controller = %name, ?report, "controller stopped"),
                Err(error) => tracing::error!(controller = %name, %error, "controller failed"),
            }
        });
    }

    /// Runs `run` until its token fires; with `needs_leader`, only while this replica leads.
    pub fn add_runnable<Fut>(
        &mut self,
        name: impl Into<String>,
        needs_leader: bool,
        run: impl FnOnce(CancellationToken) -> Fut + Send + 'static,
    ) where
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.runnables.push(Runnable {
            name: name.into(),
            needs_leader,
            run: Box::new(move |stop| run(stop).boxed()),
        });
    }

    /// A recorder of core/v1 events from `component`, written to the API server (and
    /// logged) by one broadcaster the manager shares between its recorders and flushes
    /// when `run` ends (controller-runtime's `GetEventRecorderFor`, deprecated there since
    /// 0.23; kept for compatibility). New code should use
    /// [`events_recorder`](Self::events_recorder). Needs a tokio runtime.
    pub fn event_recorder(&mut self, component: &str) -> EventRecorder {
        let client = &self.client;
        let broadcaster = self.broadcaster.get_or_insert_with(|| {
            let broadcaster = EventBroadcaster::new();
            broadcaster.start_structured_logging(tracing::Level::INFO);
            broadcaster.start_recording_to_sink(ClientEventSink::new(client.clone()));
            broadcaster
        });
        broadcaster.new_recorder(EventSource {
            component: Some(component.to_owned()),
            host: None,
        })
    }

    /// A recorder of `events.k8s.io/v1` events reported by `name` (the
    /// `reportingController`; the `reportingInstance` is `<name>-<hostname>`), written to
    /// the API server (and logged) by one broadcaster the manager shares between these
    /// recorders, with repeats counted as series, and flushed when `run` ends
    /// (controller-runtime 0.23's `GetEventRecorder`). Needs a tokio runtime.
    ///
    /// ```no_run
    /// # async fn demo(client: kubegen::client::Client, pod: k8s_openapi::api::core::v1::Pod)
    /// # -> Result<(), kubegen::manager::ManagerError> {
    /// use kubegen::record::EventType;
    /// let mut manager = kubegen::manager::Manager::builder(client).build()?;
    /// let recorder = manager.events_recorder("example.com/my-operator");
    /// recorder.event(&pod, None, EventType::Normal, "Synced", "Reconcile", "pod synced");
    /// # Ok(()) }
    /// ```
    pub fn events_recorder(&mut self, name: &str) -> events::EventRecorder {
        let client = &self.client;
        let broadcaster = self.events_broadcaster.get_or_insert_with(|| {
            let broadcaster = events::EventBroadcaster::new();
            broadcaster.start_structured_logging(tracing::Level::INFO);
            broadcaster.start_recording_to_sink(events::ClientEventSink::new(client.clone()));
            broadcaster
        });
        broadcaster.new_recorder(name)
    }

    /// Adds a `/healthz` check.
    pub fn add_healthz_check(&mut self, name: impl Into<String>, check: Check) {
        self.healthz.add(name, check);
    }

    /// Adds a `/readyz` check (besides the built-in "informers synced").
    pub fn add_readyz_check(&mut self, name: impl Into<String>, check: Check) {
        self.readyz.add(name, check);
    }

    /// [`run`](Self::run) until SIGTERM or Ctrl-C.
    pub async fn run_until_signal(self) -> Result<(), ManagerError> {
        let stop = CancellationToken::new();
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(ManagerError::Signal)?;
        let trigger = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                biased;
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            tracing::info!("signal received: shutting down");
            trigger.cancel();
        });
        self.run(stop).await
    }

    /// Runs everything until `stop` fires or the lease is lost; see the module docs.
    pub async fn run(mut self, stop: CancellationToken) -> Result<(), ManagerError> {
        let http_stop = CancellationToken::new();
        let runnables_stop = CancellationToken::new();
        let elector_stop = CancellationToken::new();
        self.factory.start();

        let tasks = Arc::new(Mutex::new(JoinSet::new()));
        let (leader_only, always): (Vec<_>, Vec<_>) = std::mem::take(&mut self.runnables)
            .into_iter()
            .partition(|r| r.needs_leader);
        let elector = match self.election.take() {
            None => {
                spawn_all(&tasks, leader_only, &runnables_stop);
                None
            }
            Some((lock, mut config)) => {
                let pending = Arc::new(Mutex::new(Some(leader_only)));
                let (tasks, runnables_stop) = (tasks.clone(), runnables_stop.clone());
                let started = move |leading: CancellationToken| {
                    let Some(leader_only) = pending.lock().take() else {
                        return;
                    };
                    tracing::info!("elected: starting leader-only runnables");
                    let stop = runnables_stop.child_token();
                    let linked = stop.clone();
                    tokio::spawn(async move {
                        leading.cancelled().await;
                        linked.cancel();
                    });
                    spawn_all(&tasks, leader_only, &stop);
                };
                config.callbacks = config.callbacks.before_started_leading(started);
                Some(LeaderElector::new(lock, config)?)
            }
        };
        if let (Some(ring), Some(elector)) = (self.ring.clone(), elector.clone()) {
            self.readyz
                .add_detailed("shard-ring", Arc::new(move || ring_report(&ring, &elector)));
        }
        if let Some(elector) = elector.clone() {
            self.healthz.add(
                "leaderElection",
                Arc::new(move || {
                    elector
                        .check(LEADER_ELECTION_HEALTH_TOLERANCE)
                        .map_err(|e| e.to_string())
                }),
            );
        }
        self.serve(&http_stop)?;
        spawn_all(&tasks, always, &runnables_stop);
        let elector_task = elector.map(|elector| {
            let stop = elector_stop.clone();
            tokio::spawn(async move { elector.run(stop).await })
        });

        let lost = match elector_task {
            Some(mut task) => {
                tokio::select! {
                    biased;
                    () = stop.cancelled() => (false, Some(task)),
                    _ = &mut task => (true, None),
                }
            }
            None => {
                stop.cancelled().await;
                (false, None)
            }
        };
        let (lost, elector_task) = lost;
        if lost {
            tracing::error!("leader election lost: stopping");
        }
        runnables_stop.cancel();
        let drained = tokio::time::timeout(self.graceful_shutdown_timeout, async {
            loop {
                let next = {
                    let mut tasks = tasks.lock();
                    if tasks.is_empty() {
                        break;
                    }
                    tasks.try_join_next()
                };
                if next.is_none() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                "runnables did not stop within the graceful shutdown timeout; aborting them"
            );
            tasks.lock().abort_all();
        }
        elector_stop.cancel();
        if let Some(task) = elector_task
            && let Err(error) = task.await
        {
            tracing::error!(%error, "leader election task failed");
        }
        self.factory.shutdown().await;
        if let Some(broadcaster) = &self.events_broadcaster {
            broadcaster.shutdown().await;
        }
        if let Some(broadcaster) = &self.broadcaster {
            broadcaster.shutdown().await;
        }
        http_stop.cancel();
        match (lost, self.ring.is_some()) {
            (false, _) => Ok(()),
            (true, false) => Err(ManagerError::LeaderElectionLost),
            (true, true) => Err(ManagerError::ShardMembershipLost),
        }
    }

    /// Starts the endpoint servers.
    fn serve(&mut self, stop: &CancellationToken) -> Result<(), ManagerError> {
        let registry = self.registry.clone();
        #[cfg(feature = "secure-metrics")]
        let (metrics_transport, auth) = match self.secure.take() {
            None => (Transport::Plain, None),
            Some((certs, auth)) => {
                let acceptor = certs
                    .start(stop.clone())
                    .map_err(ManagerError::MetricsTls)?;
                (Transport::Tls(acceptor), auth)
            }
        };
        #[cfg(not(feature = "secure-metrics"))]
        let metrics_transport = Transport::Plain;
        let listeners = [
            (
                self.probe.take(),
                Endpoints {
                    healthz: Some(self.healthz.clone()),
                    readyz: Some(self.readyz.clone()),
                    metrics: self.shared_metrics.then(|| registry.clone()),
                    #[cfg(feature = "secure-metrics")]
                    auth: None,
                },
                Transport::Plain,
            ),
            (
                self.metrics_listener.take(),
                Endpoints {
                    healthz: None,
                    readyz: None,
                    metrics: Some(registry),
                    #[cfg(feature = "secure-metrics")]
                    auth,
                },
                metrics_transport,
            ),
        ];
        for (listener, endpoints, transport) in listeners {
            let Some(listener) = listener else { continue };
            let addr = listener.local_addr().ok();
            let listener = tokio::net::TcpListener::from_std(listener).map_err(|source| {
                ManagerError::Bind {
                    addr: addr.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0))),
                    source,
                }
            })?;
            tokio::spawn(serve(listener, endpoints, transport, stop.clone()));
        }
        Ok(())
    }
}

/// The `shard-ring` readiness check: ready while this replica holds its member Lease;
/// the ring as this replica's sharder counts it (when it is the sharder).
fn ring_report(ring: &ShardRing, member: &LeaderElector) -> Result<String, String> {
    let status = ring.status();
    let ring_text = if status.sharding {
        let objects: Vec<String> = status
            .objects
            .iter()
            .map(|(member, n)| format!("{member}={n}"))
            .collect();
        format!(
            "sharder here; members [{}]; objects {}; unassigned {}; drains in flight {}; moves {}",
            status.members.join(", "),
            objects.join(" "),
            status.unassigned,
            status.drains_in_flight,
            status.moves,
        )
    } else {
        "another replica shards".to_owned()
    };
    if member.is_leader() {
        Ok(format!(
            "member {} of ring {}; {ring_text}",
            ring.identity(),
            ring.labels().ring()
        ))
    } else {
        Err(format!(
            "not (yet) a member of ring {}: its Lease {} is not held",
            ring.labels().ring(),
            ring.member_lease_name()
        ))
    }
}

fn spawn_all(tasks: &Mutex<JoinSet<()>>, runnables: Vec<Runnable>, stop: &CancellationToken) {
    let mut tasks = tasks.lock();
    for runnable in runnables {
        tracing::debug!(runnable = %runnable.name, "starting");
        tasks.spawn((runnable.run)(stop.clone()));
    }
}
