//! [`ShardRing`]: one sharded controller's ring as one replica sees it: its name and
//! labels, this replica's identity, where the member Leases live, the election timings,
//! and the kinds the ring shards (registered by the controllers built with
//! [`ControllerBuilder::sharded`](crate::controller::ControllerBuilder::sharded)).

use std::{collections::BTreeMap, fmt, sync::Arc};

use kube_core::params::ListParams;
use parking_lot::Mutex;

use super::{
    RingLabels, RingMetrics, RingStatus,
    kinds::{Kind, Role, ShardedKind},
    labels::member_lease_name,
};
use crate::{
    Object,
    client::Client,
    leaderelection::{ConfigError, LeaderElectionConfig, LeaderElector, LeaseLock},
};

/// A ring of replicas sharing the objects of one sharded controller; cheap to clone.
///
/// ```no_run
/// # async fn demo(client: kubegen::client::Client) -> Result<(), Box<dyn std::error::Error>> {
/// use kubegen::sharding::{ShardRing, Sharder};
/// use tokio_util::sync::CancellationToken;
///
/// let ring = ShardRing::new(client, "operators", "foo-operator", "pod-a");
/// // Informers of this replica watch only its share ...
/// let factory = kubegen::informers::SharedInformerFactory::builder(ring.client().clone())
///     .tweak_list_params(ring.member_tweak())
///     .build();
/// // ... the controller drains what the sharder moves away (see ControllerBuilder::sharded),
/// // the member Lease keeps this replica in the ring, and the sharder runs on one replica.
/// let member = ring.member()?;
/// let stop = CancellationToken::new();
/// tokio::spawn({ let stop = stop.clone(); async move { member.run(stop).await } });
/// tokio::spawn(Sharder::new(ring.clone()).run(stop.clone()));
/// # Ok(()) }
/// ```
///
/// The [`Manager`](crate::manager::Manager) does all of this with
/// [`ManagerBuilder::shard_ring`](crate::manager::ManagerBuilder::shard_ring).
#[derive(Clone)]
pub struct ShardRing {
    inner: Arc<Inner>,
}

struct Inner {
    labels: RingLabels,
    identity: String,
    namespace: String,
    client: Client,
    config: LeaderElectionConfig,
    watch_namespace: Option<String>,
    kinds: Mutex<Vec<(Role, Arc<dyn ShardedKind>)>>,
    status: Arc<Mutex<RingStatus>>,
    metrics: Option<RingMetrics>,
}

impl fmt::Debug for ShardRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds: Vec<String> = self
            .inner
            .kinds
            .lock()
            .iter()
            .map(|(role, kind)| format!("{} ({role:?})", kind.name()))
            .collect();
        f.debug_struct("ShardRing")
            .field("ring", &self.inner.labels.ring())
            .field("identity", &self.inner.identity)
            .field("namespace", &self.inner.namespace)
            .field("kinds", &kinds)
            .finish_non_exhaustive()
    }
}

/// Settings of a [`ShardRing`], fixed before it is shared.
#[derive(Debug)]
pub struct ShardRingBuilder {
    client: Client,
    namespace: String,
    ring: String,
    identity: String,
    config: LeaderElectionConfig,
    watch_namespace: Option<String>,
    metrics: Option<RingMetrics>,
}

impl ShardRingBuilder {
    /// The membership and sharder election timings (lease duration, renew deadline, retry
    /// period; callbacks and `release_on_cancel` are the ring's own: members and sharders
    /// always release on a clean stop).
    #[must_use]
    pub fn config(mut self, config: LeaderElectionConfig) -> Self {
        self.config = LeaderElectionConfig {
            callbacks: Default::default(),
            release_on_cancel: true,
            ..config
        };
        self
    }

    /// The sharder watches only this namespace (as a manager restricted to one).
    #[must_use]
    pub fn watch_namespace(mut self, namespace: Option<String>) -> Self {
        self.watch_namespace = namespace;
        self
    }

    /// Records the ring's metrics (see [`RingMetrics`]) when this replica shards.
    #[must_use]
    pub fn metrics(mut self, metrics: RingMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The ring.
    pub fn build(self) -> ShardRing {
        ShardRing {
            inner: Arc::new(Inner {
                labels: RingLabels::new(&self.ring),
                identity: self.identity,
                namespace: self.namespace,
                client: self.client,
                config: self.config,
                watch_namespace: self.watch_namespace,
                kinds: Mutex::new(Vec::new()),
                status: Arc::new(Mutex::new(RingStatus::default())),
                metrics: self.metrics,
            }),
        }
    }
}

impl ShardRing {
    /// The ring `ring` (a label value) with this replica as `identity` (unique per
    /// replica: the pod name); member Leases live in `namespace`. Timings are leader
    /// election's defaults (15 s lease, 10 s renew deadline, 2 s retry).
    pub fn new(
        client: Client,
        namespace: impl Into<String>,
        ring: &str,
        identity: impl Into<String>,
    ) -> Self {
        Self::builder(client, namespace, ring, identity).build()
    }

    /// [`new`](Self::new), with the settings still open.
    pub fn builder(
        client: Client,
        namespace: impl Into<String>,
        ring: &str,
        identity: impl Into<String>,
    ) -> ShardRingBuilder {
        ShardRingBuilder {
            client,
            namespace: namespace.into(),
            ring: ring.to_owned(),
            identity: identity.into(),
            config: LeaderElectionConfig {
                release_on_cancel: true,
                ..LeaderElectionConfig::default()
            },
            watch_namespace: None,
            metrics: None,
        }
    }

    pub(crate) fn metrics(&self) -> Option<&RingMetrics> {
        self.inner.metrics.as_ref()
    }

    /// The ring's labels.
    pub fn labels(&self) -> &RingLabels {
        &self.inner.labels
    }

    /// This replica's identity in the ring.
    pub fn identity(&self) -> &str {
        &self.inner.identity
    }

    /// The namespace of the ring's Leases.
    pub fn namespace(&self) -> &str {
        &self.inner.namespace
    }

    /// The client the ring writes with.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The election timings.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.inner.config
    }

    pub(crate) fn watch_namespace(&self) -> Option<&str> {
        self.inner.watch_namespace.as_deref()
    }

    /// The list tweak of this replica's informers: only objects assigned to it.
    pub fn member_tweak(&self) -> impl Fn(&mut ListParams) + Send + Sync + Clone + 'static {
        let selector = self.inner.labels.member_selector(&self.inner.identity);
        move |params: &mut ListParams| {
            params.label_selector = Some(match params.label_selector.take() {
                Some(existing) if !existing.is_empty() => format!("{existing},{selector}"),
                _ => selector.clone(),
            });
        }
    }

    /// The name of this replica's member Lease.
    pub fn member_lease_name(&self) -> String {
        member_lease_name(self.inner.labels.ring(), &self.inner.identity)
    }

    /// The name of the Lease the ring's sharder is elected on.
    pub fn sharder_lease_name(&self) -> String {
        format!("{}-sharder", self.inner.labels.ring())
    }

    /// The lock of this replica's member Lease (labelled with the ring).
    pub fn member_lock(&self) -> LeaseLock {
        LeaseLock::new(
            self.inner.client.clone(),
            self.inner.namespace.clone(),
            self.member_lease_name(),
            self.inner.identity.clone(),
        )
        .with_labels(self.inner.labels.lease_labels())
    }

    /// This replica's membership: it "leads" its own Lease, with leader election's
    /// acquire, renew and release, so it is a member while that elector leads. Work
    /// that only a member may do goes into `config`'s `on_started_leading` (the
    /// timings are the ring's).
    pub fn member_with(
        &self,
        callbacks: crate::leaderelection::Callbacks,
    ) -> Result<LeaderElector, ConfigError> {
        let config = LeaderElectionConfig {
            callbacks,
            name: format!("shard ring {} member", self.inner.labels.ring()),
            ..self.inner.config.clone()
        };
        LeaderElector::new(self.member_lock(), config)
    }

    /// [`member_with`](Self::member_with) without callbacks.
    pub fn member(&self) -> Result<LeaderElector, ConfigError> {
        self.member_with(Default::default())
    }

    /// The ring as last seen by this replica's sharder (empty while another replica
    /// shards).
    pub fn status(&self) -> RingStatus {
        self.inner.status.lock().clone()
    }

    pub(crate) fn status_cell(&self) -> Arc<Mutex<RingStatus>> {
        self.inner.status.clone()
    }

    /// Shards `K`: its objects are assigned to members and drained on moves.
    pub fn shard_primary<K: Object>(&self) {
        self.register(Role::Primary, Arc::new(Kind::<K>::new()));
    }

    /// `O` follows its controller owner (a primary kind of the ring) into its member's
    /// cache.
    pub fn shard_owned<O: Object>(&self) {
        self.register(Role::Owned, Arc::new(Kind::<O>::new()));
    }

    fn register(&self, role: Role, kind: Arc<dyn ShardedKind>) {
        let mut kinds = self.inner.kinds.lock();
        let name = kind.name();
        match kinds.iter_mut().find(|(_, k)| k.name() == name) {
            // A kind that is primary for one controller stays primary.
            Some((existing, _)) => {
                if role == Role::Primary {
                    *existing = Role::Primary;
                }
            }
            None => kinds.push((role, kind)),
        }
    }

    pub(crate) fn kinds(&self) -> Vec<(Role, Arc<dyn ShardedKind>)> {
        self.inner.kinds.lock().clone()
    }

    /// The labels an object created for `owner` should carry to land in the same
    /// member's cache (the owner's assignment in this ring), for
    /// [`set_controller_reference`](crate::controllerutil::set_controller_reference)'s
    /// callers that create owned objects.
    pub fn owner_labels(&self, owner: &kube_core::ObjectMeta) -> BTreeMap<String, String> {
        self.inner
            .labels
            .assigned(owner)
            .map(|member| {
                BTreeMap::from([(self.inner.labels.shard_key().to_owned(), member.to_owned())])
            })
            .unwrap_or_default()
    }
}
