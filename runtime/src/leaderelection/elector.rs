//! [`LeaderElector`]: client-go's `leaderelection.LeaderElector`, on tokio.
//!
//! # One round, `try_acquire_or_renew`
//!
//! 1. **Fast path**: a leader whose lease is still valid writes its renewal straight away,
//!    guarded by the resourceVersion it last wrote; if that fails (someone else wrote, or
//!    the API server failed), it falls through to the slow path, counted in
//!    `leader_election_slowpath_total`.
//! 2. Read the lock; if it does not exist, create it holding this candidate (a concurrent
//!    create fails with AlreadyExists: only one wins).
//! 3. If the record changed since last observed, note it and **the time of this
//!    observation on the local monotonic clock**: a lease is valid until `observed time +
//!    leaseDurationSeconds`. The holder's `renewTime` is never compared with the local
//!    clock, so clock skew between candidates does not matter.
//! 4. A lease held by someone else and still valid: give up this round.
//! 5. Otherwise write this candidate's record (keeping the acquire time and transition count
//!    when renewing, counting one more transition when taking over), guarded by the read
//!    resourceVersion: of two candidates racing for an expired lease, one gets a 409.
//!
//! # `run`
//!
//! Acquire: a round every `retry_period`, stretched by up to [`JITTER_FACTOR`], until one
//! succeeds or `stop` fires. Lead: `on_started_leading` gets a token, then every
//! `retry_period` the leader renews, retrying failed rounds every `retry_period` until
//! `renew_deadline` has passed since the renewal began; then it stops leading — the token
//! is cancelled — even though nobody else may hold the lease yet, because past the deadline
//! another candidate may already act as leader. With `release_on_cancel`, a leader that
//! is stopped (its `stop` token) writes a holder-less record that expires at once; one that
//! stops on its own (a missed deadline, a yield) does not, since its leader-only work may
//! still be running: its lease runs out by itself. (client-go releases in both cases; the
//! sharding simulation found a member whose release, right after a missed deadline, let
//! the sharder move an object while the member's reconcile of it was still running.)
//! `on_stopped_leading` ends `run`.
//!
//! # Coordinated mode, `try_coordinated_renew`
//!
//! With [`LeaderElectionConfig::coordinated`] (KEP-4355, client-go's `tryCoordinatedRenew`)
//! a coordinated leader election controller picks the holder among the Lease's
//! LeaseCandidates ([`LeaseCandidateKeeper`](super::LeaseCandidateKeeper)); the elector
//! only follows. `run` is the same; each round is:
//!
//! 1. Read the lock; if it does not exist, this round fails: the controller creates it.
//!    There is no fast path.
//! 2. If the record changed since last observed, note it and the time (as step 3 above).
//! 3. An expired lease — the controller's 5-second term as much as a holder's — fails the
//!    round: the controller elects again, and this candidate never takes it itself.
//! 4. A lease held by someone else fails the round.
//! 5. Held by this candidate with a `preferredHolder` naming another candidate: the
//!    controller found a better leader. The round **yields**: a leader stops leading at
//!    once (not after the renew deadline), leaves the lock to expire (the controller hands
//!    it over then; no release: the leader-only work may still be running), and `run`
//!    returns; a candidate not yet leading keeps waiting.
//! 6. Otherwise renew: this candidate's record with its own lease duration, keeping the
//!    acquire time (now, if the controller left none), the transition count and the
//!    strategy, guarded by the read resourceVersion.

use std::{sync::Arc, time::Duration};

use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{
    ConfigError, LeaderElectionConfig, LeaderElectionRecord, ResourceLock, clock,
    config::JITTER_FACTOR,
};

/// What one round found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    /// This candidate holds the lock: it acquired or renewed it.
    Held,
    /// It does not: held by another, not elected yet, or the round failed.
    NotHeld,
    /// Coordinated mode: it holds the lock, but the controller prefers another holder.
    Yield,
}

/// Why a leader stops renewing (other than `stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepDown {
    /// No renewal succeeded within the renew deadline.
    Failed,
    /// Coordinated mode: the controller named another preferred holder.
    Yielded,
}

/// The `/healthz` watchdog's verdict on a leader that stopped renewing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed election to renew leadership on lease {0}")]
pub struct WatchdogError(pub String);

/// What this candidate last observed of the lock.
#[derive(Debug, Default)]
struct Observed {
    record: LeaderElectionRecord,
    raw: Vec<u8>,
    /// When the record was observed to change (local monotonic clock).
    time: Option<Instant>,
}

struct Inner {
    config: LeaderElectionConfig,
    name: String,
    lock: Arc<dyn ResourceLock>,
    observed: Mutex<Observed>,
    reported_leader: Mutex<String>,
}

/// Runs one candidate of a leader election; cheap to clone (clones share the state, so a
/// health check can hold one while another runs).
#[derive(Clone)]
pub struct LeaderElector {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("name", &self.inner.name)
            .field("identity", &self.inner.lock.identity())
            .field("leader", &self.leader())
            .finish_non_exhaustive()
    }
}

impl LeaderElector {
    /// A candidate contending for `lock` with `config` (checked as client-go checks it).
    pub fn new(lock: impl ResourceLock, config: LeaderElectionConfig) -> Result<Self, ConfigError> {
        config.validate(lock.identity())?;
        let name = if config.name.is_empty() {
            lock.describe()
        } else {
            config.name.clone()
        };
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                name,
                lock: Arc::new(lock),
                observed: Mutex::new(Observed::default()),
                reported_leader: Mutex::new(String::new()),
            }),
        })
    }

    /// This candidate's identity.
    pub fn identity(&self) -> &str {
        self.inner.lock.identity()
    }

    /// Whether the last observed record names this candidate.
    pub fn is_leader(&self) -> bool {
        self.inner.observed.lock().record.holder_identity == self.identity()
    }

    /// The holder of the last observed record (empty if none).
    pub fn leader(&self) -> String {
        self.inner.observed.lock().record.holder_identity.clone()
    }

    /// The `/healthz` watchdog (client-go's `HealthzAdaptor`): fails when this candidate
    /// believes it leads but has not renewed for longer than the lease duration plus
    /// `max_tolerable_expired_lease` — a leader stuck in a way that stopped renewals but
    /// not its work. Standbys are always healthy.
    pub fn check(&self, max_tolerable_expired_lease: Duration) -> Result<(), WatchdogError> {
        if !self.is_leader() {
            return Ok(());
        }
        let observed = self.inner.observed.lock().time;
        let limit = self.inner.config.lease_duration + max_tolerable_expired_lease;
        match observed {
            Some(time) if time.elapsed() > limit => Err(WatchdogError(self.inner.name.clone())),
            _ => Ok(()),
        }
    }

    /// Contends until `stop` fires: acquires, leads while renewals succeed, then returns
    /// (see the module docs). Run it again to stand for election again.
    pub async fn run(&self, stop: CancellationToken) {
        if self.acquire(&stop).await {
            let leading = stop.child_token();
            if let Some(metrics) = &self.inner.config.metrics {
                metrics.leading(true);
            }
            if let Some(started) = &self.inner.config.callbacks.on_started_leading {
                started(leading.clone());
            }
            self.renew(&stop).await;
            leading.cancel();
            if let Some(metrics) = &self.inner.config.metrics {
                metrics.leading(false);
            }
            // Released only when asked to stop: whoever stops the elector has stopped the
            // leader-only work first (the manager drains it, then stops the elector). A
            // leader that stops on its own (a missed renew deadline, a yield) has only just
            // cancelled its token, and that work may still be running (a reconcile in
            // flight); a release would let another candidate act at once, beside it. The
            // lease then runs out by itself, `lease_duration` after the last renewal.
            if self.inner.config.release_on_cancel && stop.is_cancelled() {
                self.release().await;
            }
        }
        if let Some(stopped) = &self.inner.config.callbacks.on_stopped_leading {
            stopped();
        }
    }

    /// Rounds until one acquires the lock (true) or `stop` fires (false).
    async fn acquire(&self, stop: &CancellationToken) -> bool {
        let name = &self.inner.name;
        tracing::info!(lease = %name, identity = self.identity(), "attempting to acquire leader lease");
        loop {
            if stop.is_cancelled() {
                return false;
            }
            let acquired = self.round().await == Round::Held;
            self.maybe_report_transition();
            if acquired {
                tracing::info!(lease = %name, identity = self.identity(), "successfully acquired lease");
                return true;
            }
            let retry = self.inner.config.retry_period;
            let jitter = retry.mul_f64(rand::random::<f64>() * JITTER_FACTOR);
            tokio::select! {
                biased;
                () = stop.cancelled() => return false,
                () = tokio::time::sleep(retry + jitter) => {}
            }
        }
    }

    /// Renews every retry period until a renewal misses its deadline, the lock names
    /// another preferred holder (coordinated mode) or `stop` fires.
    async fn renew(&self, stop: &CancellationToken) {
        let config = &self.inner.config;
        loop {
            let deadline = Instant::now() + config.renew_deadline;
            let renewed = loop {
                if stop.is_cancelled() {
                    return;
                }
                match tokio::time::timeout_at(deadline, self.round()).await {
                    Ok(Round::Held) => break Ok(()),
                    Ok(Round::Yield) => break Err(StepDown::Yielded),
                    Ok(Round::NotHeld) | Err(_) => {}
                }
                let next = (Instant::now() + config.retry_period).min(deadline);
                tokio::select! {
                    biased;
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep_until(next) => {}
                }
                if Instant::now() >= deadline {
                    break Err(StepDown::Failed);
                }
            };
            self.maybe_report_transition();
            match renewed {
                Ok(()) => {}
                Err(StepDown::Yielded) => {
                    let preferred = self.inner.observed.lock().record.preferred_holder.clone();
                    tracing::info!(lease = %self.inner.name, preferred_holder = %preferred, "the lease names another preferred holder: stopping leading");
                    return;
                }
                Err(StepDown::Failed) => {
                    tracing::warn!(lease = %self.inner.name, "failed to renew lease: stopping leading");
                    return;
                }
            }
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = tokio::time::sleep(config.retry_period) => {}
            }
        }
    }

    /// One round, plain or coordinated.
    async fn round(&self) -> Round {
        if self.inner.config.coordinated {
            self.try_coordinated_renew().await
        } else if self.try_acquire_or_renew().await {
            Round::Held
        } else {
            Round::NotHeld
        }
    }

    /// One coordinated round (see the module docs).
    async fn try_coordinated_renew(&self) -> Round {
        let inner = &self.inner;
        // 1. Read; the controller creates the lock.
        let (old, raw) = match inner.lock.get().await {
            Ok(got) => got,
            Err(error) if error.is_not_found() => {
                tracing::trace!(lease = %inner.name, "no lease yet: waiting for the coordinated leader election controller");
                return Round::NotHeld;
            }
            Err(error) => {
                tracing::warn!(lease = %inner.name, %error, "error retrieving resource lock");
                return Round::NotHeld;
            }
        };
        // 2. Observe a change.
        if inner.observed.lock().raw != raw {
            self.set_observed(old.clone(), Some(raw));
        }
        // 3. Expired: the controller elects again.
        if !self.lease_valid() {
            tracing::trace!(lease = %inner.name, "lease expired: waiting for the coordinated leader election controller");
            return Round::NotHeld;
        }
        // 4. Held by someone else.
        if !self.is_leader() {
            tracing::trace!(lease = %inner.name, holder = %old.holder_identity, "lock is held and has not yet expired");
            return Round::NotHeld;
        }
        // 5. Another holder is preferred.
        if !old.preferred_holder.is_empty() && old.preferred_holder != self.identity() {
            return Round::Yield;
        }
        // 6. Renew.
        let now = clock::now();
        let record = LeaderElectionRecord {
            holder_identity: self.identity().to_owned(),
            lease_duration_seconds: i32::try_from(inner.config.lease_duration.as_secs())
                .unwrap_or(i32::MAX),
            acquire_time: old.acquire_time.or(Some(now)),
            renew_time: Some(now),
            leader_transitions: old.leader_transitions,
            strategy: old.strategy,
            preferred_holder: String::new(),
        };
        match inner.lock.update(record.clone()).await {
            Ok(()) => {
                self.set_observed(record, None);
                Round::Held
            }
            Err(error) => {
                tracing::debug!(lease = %inner.name, %error, "failed to update lock");
                Round::NotHeld
            }
        }
    }

    /// One round (see the module docs); whether this candidate holds the lock after it.
    async fn try_acquire_or_renew(&self) -> bool {
        let inner = &self.inner;
        let now = clock::now();
        let mut record = LeaderElectionRecord {
            holder_identity: self.identity().to_owned(),
            lease_duration_seconds: i32::try_from(inner.config.lease_duration.as_secs())
                .unwrap_or(i32::MAX),
            acquire_time: Some(now),
            renew_time: Some(now),
            ..LeaderElectionRecord::default()
        };
        // 1. Fast path.
        if self.is_leader() && self.lease_valid() {
            {
                let observed = inner.observed.lock();
                record.acquire_time = observed.record.acquire_time;
                record.leader_transitions = observed.record.leader_transitions;
            }
            match inner.lock.update(record.clone()).await {
                Ok(()) => {
                    self.set_observed(record, None);
                    return true;
                }
                Err(error) => {
                    tracing::warn!(lease = %inner.name, %error, "failed to update lock optimistically; falling back to slow path");
                }
            }
        }
        // 2. Read or create.
        let (old, raw) = match inner.lock.get().await {
            Ok(got) => got,
            Err(error) if error.is_not_found() => {
                return match inner.lock.create(record.clone()).await {
                    Ok(()) => {
                        self.set_observed(record, None);
                        true
                    }
                    Err(error) => {
                        tracing::debug!(lease = %inner.name, %error, "error initially creating leader election record");
                        false
                    }
                };
            }
            Err(error) => {
                tracing::warn!(lease = %inner.name, %error, "error retrieving resource lock");
                return false;
            }
        };
        // 3. Observe a change.
        if inner.observed.lock().raw != raw {
            self.set_observed(old.clone(), Some(raw));
        }
        // 4. Held by someone else, not expired.
        if !old.holder_identity.is_empty() && self.lease_valid() && !self.is_leader() {
            tracing::trace!(lease = %inner.name, holder = %old.holder_identity, "lock is held and has not yet expired");
            return false;
        }
        // 5. Take or renew.
        if self.is_leader() {
            record.acquire_time = old.acquire_time;
            record.leader_transitions = old.leader_transitions;
            if let Some(metrics) = &inner.config.metrics {
                metrics.slowpath();
            }
        } else {
            record.leader_transitions = old.leader_transitions + 1;
        }
        match inner.lock.update(record.clone()).await {
            Ok(()) => {
                self.set_observed(record, None);
                true
            }
            Err(error) => {
                tracing::debug!(lease = %inner.name, %error, "failed to update lock");
                false
            }
        }
    }

    /// Whether the observed lease has not expired (local clock, from the observation).
    fn lease_valid(&self) -> bool {
        let observed = self.inner.observed.lock();
        let duration =
            Duration::from_secs(u64::try_from(observed.record.lease_duration_seconds).unwrap_or(0));
        observed
            .time
            .is_some_and(|time| time + duration > Instant::now())
    }

    /// Records `record` as observed now (`raw`: its stored form, when it was read).
    fn set_observed(&self, record: LeaderElectionRecord, raw: Option<Vec<u8>>) {
        let mut observed = self.inner.observed.lock();
        observed.record = record;
        if let Some(raw) = raw {
            observed.raw = raw;
        }
        observed.time = Some(Instant::now());
    }

    /// Calls `on_new_leader` when the observed holder changed since last reported.
    fn maybe_report_transition(&self) {
        let holder = self.leader();
        {
            let mut reported = self.inner.reported_leader.lock();
            if *reported == holder {
                return;
            }
            reported.clone_from(&holder);
        }
        if let Some(new_leader) = &self.inner.config.callbacks.on_new_leader {
            new_leader(&holder);
        }
    }

    /// Gives the lock up, if this candidate holds it: a holder-less record with a 1-second
    /// lease (client-go's `release`).
    async fn release(&self) {
        if !self.is_leader() {
            return;
        }
        let now = clock::now();
        let transitions = self.inner.observed.lock().record.leader_transitions;
        let record = LeaderElectionRecord {
            holder_identity: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: transitions,
            ..LeaderElectionRecord::default()
        };
        match self.inner.lock.update(record.clone()).await {
            Ok(()) => {
                self.set_observed(record, None);
                tracing::info!(lease = %self.inner.name, "released the lease");
            }
            Err(error) => {
                tracing::warn!(lease = %self.inner.name, %error, "failed to release lock")
            }
        }
    }
}
