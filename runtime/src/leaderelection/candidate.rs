//! [`LeaseCandidateKeeper`]: a candidate's `coordination.k8s.io/v1beta1` LeaseCandidate
//! for coordinated leader election (KEP-4355; client-go's `leaderelection.LeaseCandidate`,
//! `tools/leaderelection/leasecandidate.go`).
//!
//! The keeper declares this process a candidate for a Lease: a LeaseCandidate named after
//! the elector's identity, with the Lease's name, the process's binary and emulation
//! versions and the strategy it wants. The coordinated leader election controller elects
//! among the candidates and, before it votes, pings the stale ones (`spec.pingTime`); a
//! candidate that does not answer within five seconds by renewing (`spec.renewTime`) is
//! left out. So the keeper:
//!
//! 1. creates the LeaseCandidate, or renews it (and sets its versions and strategy to this
//!    process's) if it exists;
//! 2. watches it (a one-object informer, by field selector on its name) and renews it as
//!    soon as a ping is newer than its last renewal — never stamping the renewal before the
//!    ping, so a clock a little behind the controller's still answers;
//! 3. renews it anyway every [`LeaseCandidateKeeper::renew_interval`] (5 minutes, as
//!    client-go), and retries a failed renewal with a backoff (0.5 s doubling to 30 s);
//! 4. deletes it when stopped (client-go leaves it to the LeaseCandidate garbage
//!    collector, 30 minutes later): a candidate that stopped cleanly is not pinged again.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::coordination::v1beta1::{LeaseCandidate, LeaseCandidateSpec},
    apimachinery::pkg::apis::meta::v1::MicroTime,
};
use kube_core::{
    ObjectMeta,
    params::{DeleteParams, PostParams},
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::clock;
use crate::{
    cache::{
        Dispatch, HandlerOptions, InformerError, ListWatch, ResourceEventHandlerFuncs,
        SharedIndexInformer,
    },
    client::{Client, Error as ClientError, ResourceClient},
};

/// The strategy of coordinated leader election: the candidate with the lowest emulation
/// version leads, then the lowest binary version, then the oldest candidate
/// (`coordinationv1.OldestEmulationVersion`).
pub const OLDEST_EMULATION_VERSION: &str = "OldestEmulationVersion";

/// How often a candidate renews without being pinged (client-go's `requeueInterval`).
pub const DEFAULT_RENEW_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// The first wait after a failed renewal; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// The longest wait after failed renewals.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How long a stopping keeper tries to delete its candidate.
const DELETE_TIMEOUT: Duration = Duration::from_secs(10);

/// A LeaseCandidate could not be kept.
#[derive(Debug, thiserror::Error)]
pub enum CandidateError {
    /// An API call failed (the server may not serve `coordination.k8s.io/v1beta1`).
    #[error(transparent)]
    Api(#[from] ClientError),
    /// The watch on the candidate could not take the keeper's handler.
    #[error("watching the LeaseCandidate: {0}")]
    Informer(#[from] InformerError),
}

/// Keeps one LeaseCandidate for a coordinated [`LeaderElector`](super::LeaderElector)
/// (see the module docs). Name it after the elector's lock identity: the controller makes
/// the elected candidate's name the Lease's `holderIdentity`.
///
/// ```no_run
/// # async fn example(client: kubegen::client::Client) -> Result<(), Box<dyn std::error::Error>> {
/// use kubegen::leaderelection::{
///     LeaderElectionConfig, LeaderElector, LeaseCandidateKeeper, LeaseLock,
/// };
/// use tokio_util::sync::CancellationToken;
///
/// let stop = CancellationToken::new();
/// let keeper =
///     LeaseCandidateKeeper::new(client.clone(), "kube-system", "pod-a", "my-operator", "1.34.0", "1.33.0");
/// let keeping = tokio::spawn({
///     let stop = stop.clone();
///     async move { keeper.run(stop).await }
/// });
/// let lock = LeaseLock::new(client, "kube-system", "my-operator", "pod-a");
/// let config = LeaderElectionConfig { coordinated: true, release_on_cancel: true, ..Default::default() };
/// LeaderElector::new(lock, config)?.run(stop.clone()).await;
/// stop.cancel();
/// keeping.await??;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct LeaseCandidateKeeper {
    client: ResourceClient<LeaseCandidate>,
    name: String,
    lease_name: String,
    binary_version: String,
    emulation_version: String,
    strategy: String,
    renew_interval: Duration,
}

impl LeaseCandidateKeeper {
    /// A candidate `name` in `namespace` (the Lease's) for the Lease `lease_name`, at
    /// `binary_version` emulating `emulation_version` (semantic versions without a leading
    /// `v`, such as `1.34.0`; the emulation version at most the binary version), wanting
    /// [`OLDEST_EMULATION_VERSION`].
    pub fn new(
        client: Client,
        namespace: impl Into<String>,
        name: impl Into<String>,
        lease_name: impl Into<String>,
        binary_version: impl Into<String>,
        emulation_version: impl Into<String>,
    ) -> Self {
        let namespace = namespace.into();
        Self {
            client: ResourceClient::namespaced(client, &namespace),
            name: name.into(),
            lease_name: lease_name.into(),
            binary_version: binary_version.into(),
            emulation_version: emulation_version.into(),
            strategy: OLDEST_EMULATION_VERSION.to_owned(),
            renew_interval: DEFAULT_RENEW_INTERVAL,
        }
    }

    /// Asks for `strategy` instead of [`OLDEST_EMULATION_VERSION`] (the controller elects
    /// by the strategy of the candidate with the highest binary version; one it does not
    /// know leaves the Lease to another elector).
    #[must_use]
    pub fn strategy(mut self, strategy: impl Into<String>) -> Self {
        self.strategy = strategy.into();
        self
    }

    /// Renews this often without being pinged (default [`DEFAULT_RENEW_INTERVAL`]).
    #[must_use]
    pub fn renew_interval(mut self, interval: Duration) -> Self {
        self.renew_interval = interval;
        self
    }

    /// The candidate's name (the elector's identity).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Lease it stands for.
    pub fn lease_name(&self) -> &str {
        &self.lease_name
    }

    /// Creates the LeaseCandidate, or renews it: `renewTime` now (never before a pending
    /// ping), and this keeper's Lease, versions and strategy. Returns it as written.
    pub async fn renew(&self) -> Result<LeaseCandidate, CandidateError> {
        let now = clock::now();
        let mut candidate = match self.client.get(&self.name).await {
            Ok(existing) => existing,
            Err(error) if error.is_not_found() => {
                let created = LeaseCandidate {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: spec_field(self.spec(now)),
                };
                let created = self.client.create(&PostParams::default(), &created).await?;
                tracing::info!(candidate = %self.name, lease = %self.lease_name, "created the lease candidate");
                return Ok(created);
            }
            Err(error) => return Err(error.into()),
        };
        let ping = take_spec(&mut candidate).and_then(|s| s.ping_time);
        let mut spec = self.spec(ping.as_ref().map_or(now, |ping| ping.0.max(now)));
        let pinged = ping.is_some();
        spec.ping_time = ping;
        candidate.spec = spec_field(spec);
        let renewed = self
            .client
            .update(&PostParams::default(), &candidate)
            .await?;
        tracing::debug!(candidate = %self.name, pinged, "renewed the lease candidate");
        Ok(renewed)
    }

    /// Deletes the LeaseCandidate (a missing one is fine).
    pub async fn delete(&self) -> Result<(), CandidateError> {
        match self
            .client
            .delete(&self.name, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(error) if error.is_not_found() => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// Keeps the candidate until `stop` fires, then deletes it (see the module docs).
    /// Fails only when its watch cannot be set up; API errors are logged and retried.
    pub async fn run(&self, stop: CancellationToken) -> Result<(), CandidateError> {
        let pinged = Arc::new(Notify::new());
        let informer = SharedIndexInformer::builder(
            ListWatch::new(self.client.clone()).fields(format!("metadata.name={}", self.name)),
        )
        .build();
        let (on_add, on_update) = (pinged.clone(), pinged.clone());
        informer.handle().add_event_handler_with_options(
            ResourceEventHandlerFuncs::new()
                .add_func(move |c: &Arc<LeaseCandidate>, _| {
                    if ping_pending(c) {
                        on_add.notify_one();
                    }
                })
                .update_func(move |_, c: &Arc<LeaseCandidate>| {
                    if ping_pending(c) {
                        on_update.notify_one();
                    }
                }),
            HandlerOptions::new().dispatch(Dispatch::Task),
        )?;
        let watching = stop.child_token();
        let (_, informer_task) = informer.spawn(watching.clone());
        let mut backoff = FIRST_BACKOFF;
        loop {
            let wait = match self.renew().await {
                Ok(_) => {
                    backoff = FIRST_BACKOFF;
                    self.renew_interval
                }
                Err(error) => {
                    tracing::warn!(candidate = %self.name, %error, retry_in = ?backoff, "failed to renew the lease candidate");
                    let wait = backoff;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    wait
                }
            };
            tokio::select! {
                biased;
                () = stop.cancelled() => break,
                () = pinged.notified() => {}
                () = tokio::time::sleep(wait) => {}
            }
        }
        watching.cancel();
        let _ = informer_task.await;
        match tokio::time::timeout(DELETE_TIMEOUT, self.delete()).await {
            Ok(Ok(())) => {
                tracing::info!(candidate = %self.name, "deleted the lease candidate");
            }
            Ok(Err(error)) => {
                tracing::warn!(candidate = %self.name, %error, "failed to delete the lease candidate");
            }
            Err(_) => {
                tracing::warn!(candidate = %self.name, "timed out deleting the lease candidate");
            }
        }
        Ok(())
    }

    /// This keeper's spec, renewed at `renewed`.
    fn spec(&self, renewed: k8s_openapi::jiff::Timestamp) -> LeaseCandidateSpec {
        LeaseCandidateSpec {
            lease_name: self.lease_name.clone(),
            binary_version: self.binary_version.clone(),
            emulation_version: Some(self.emulation_version.clone()),
            strategy: self.strategy.clone(),
            renew_time: Some(MicroTime(renewed)),
            ping_time: None,
        }
    }
}

k8s_openapi::k8s_if_le_1_35! {
    /// The spec of `candidate` (optional in the API of Kubernetes 1.35 and earlier).
    fn spec_of(candidate: &LeaseCandidate) -> Option<&LeaseCandidateSpec> {
        candidate.spec.as_ref()
    }

    /// Takes the spec out of `candidate`.
    fn take_spec(candidate: &mut LeaseCandidate) -> Option<LeaseCandidateSpec> {
        candidate.spec.take()
    }

    /// `spec` as a LeaseCandidate's field.
    fn spec_field(spec: LeaseCandidateSpec) -> Option<LeaseCandidateSpec> {
        Some(spec)
    }
}

k8s_openapi::k8s_if_ge_1_36! {
    /// The spec of `candidate` (required from Kubernetes 1.36's API on).
    #[allow(clippy::unnecessary_wraps)]
    fn spec_of(candidate: &LeaseCandidate) -> Option<&LeaseCandidateSpec> {
        Some(&candidate.spec)
    }

    /// Takes the spec out of `candidate`.
    #[allow(clippy::unnecessary_wraps)]
    fn take_spec(candidate: &mut LeaseCandidate) -> Option<LeaseCandidateSpec> {
        Some(std::mem::take(&mut candidate.spec))
    }

    /// `spec` as a LeaseCandidate's field.
    fn spec_field(spec: LeaseCandidateSpec) -> LeaseCandidateSpec {
        spec
    }
}

/// Whether `candidate` was pinged after its last renewal.
fn ping_pending(candidate: &LeaseCandidate) -> bool {
    let Some(spec) = spec_of(candidate) else {
        return false;
    };
    match (&spec.ping_time, &spec.renew_time) {
        (Some(ping), Some(renew)) => ping.0 > renew.0,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ping: Option<i64>, renew: Option<i64>) -> LeaseCandidate {
        let t = |s| MicroTime(k8s_openapi::jiff::Timestamp::from_second(s).expect("in range"));
        LeaseCandidate {
            metadata: ObjectMeta::default(),
            spec: spec_field(LeaseCandidateSpec {
                ping_time: ping.map(t),
                renew_time: renew.map(t),
                ..LeaseCandidateSpec::default()
            }),
        }
    }

    /// `leasecandidate.go`: a ping newer than the last renewal is answered; one already
    /// answered (renewed at or after it) is not.
    #[test]
    fn a_ping_is_pending_until_a_renewal_at_or_after_it() {
        assert!(ping_pending(&at(Some(10), Some(5))));
        assert!(ping_pending(&at(Some(10), None)));
        assert!(!ping_pending(&at(Some(10), Some(10))));
        assert!(!ping_pending(&at(Some(10), Some(11))));
        assert!(!ping_pending(&at(None, Some(11))));
    }
}
