//! [`LeaderElectionConfig`]: durations, callbacks and options of an election, checked once
//! when the elector is built (client-go's `LeaderElectionConfig` and `NewLeaderElector`).

use std::{fmt, sync::Arc, time::Duration};

use tokio_util::sync::CancellationToken;

use crate::metrics::{LeaderElectionMetrics, LeaderElectionMetricsProvider};

/// client-go's `JitterFactor`: waits between acquisition attempts are stretched by up to
/// this fraction of the retry period, so candidates do not knock in step.
pub const JITTER_FACTOR: f64 = 1.2;

type StartedFn = Arc<dyn Fn(CancellationToken) + Send + Sync>;
type StoppedFn = Arc<dyn Fn() + Send + Sync>;
type NewLeaderFn = Arc<dyn Fn(&str) + Send + Sync>;

/// What the elector tells its owner.
#[derive(Clone, Default)]
pub struct Callbacks {
    pub(super) on_started_leading: Option<StartedFn>,
    pub(super) on_stopped_leading: Option<StoppedFn>,
    pub(super) on_new_leader: Option<NewLeaderFn>,
}

impl fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Callbacks")
            .field("on_started_leading", &self.on_started_leading.is_some())
            .field("on_stopped_leading", &self.on_stopped_leading.is_some())
            .field("on_new_leader", &self.on_new_leader.is_some())
            .finish()
    }
}

impl Callbacks {
    /// No callbacks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Called when this candidate starts leading, with a token that is cancelled when it
    /// stops (lost lease, failed renewals, or the elector was stopped). Start the work only
    /// a leader may do here, and stop it when the token fires.
    #[must_use]
    pub fn on_started_leading(
        mut self,
        f: impl Fn(CancellationToken) + Send + Sync + 'static,
    ) -> Self {
        self.on_started_leading = Some(Arc::new(f));
        self
    }

    /// Calls `f` first, then the `on_started_leading` already set (for an owner such as the
    /// manager that adds its own reaction to the user's).
    pub(crate) fn before_started_leading(
        mut self,
        f: impl Fn(CancellationToken) + Send + Sync + 'static,
    ) -> Self {
        let then = self.on_started_leading.take();
        self.on_started_leading = Some(Arc::new(move |token: CancellationToken| {
            f(token.clone());
            if let Some(then) = &then {
                then(token);
            }
        }));
        self
    }

    /// Called when the elector returns (after leading, or without ever leading, as
    /// client-go's `OnStoppedLeading`).
    #[must_use]
    pub fn on_stopped_leading(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_stopped_leading = Some(Arc::new(f));
        self
    }

    /// Called with the new holder's identity whenever a different leader is observed
    /// (this candidate included).
    #[must_use]
    pub fn on_new_leader(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_new_leader = Some(Arc::new(f));
        self
    }
}

/// The settings of one election; defaults are client-go's (and kube-controller-manager's):
/// lease 15 s, renew deadline 10 s, retry period 2 s.
#[derive(Clone)]
pub struct LeaderElectionConfig {
    /// How long non-leaders wait after observing a renewal before they may take the lock
    /// (measured on their own clock, from when they saw the lock change).
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a failed renewal before it gives up leading.
    pub renew_deadline: Duration,
    /// How long candidates wait between attempts (stretched by [`JITTER_FACTOR`] when
    /// acquiring).
    pub retry_period: Duration,
    /// Write an expired, holder-less record when the elector is stopped (its `stop`
    /// token) while leading, so another candidate takes over at once (the leader must have
    /// stopped all leader-only work by then). A leader that stops on its own (a renewal
    /// missed its deadline, or it yields in coordinated mode) never releases: its work
    /// may still be running, so the lease runs out by itself.
    pub release_on_cancel: bool,
    /// Coordinated leader election (KEP-4355, client-go's `Coordinated`): the candidate
    /// never takes the lock itself — not when it is missing, not when it is empty or
    /// expired; it leads once the coordinated leader election controller (kube-apiserver's,
    /// or the test server's) names it holder, renews as usual, and steps down when the
    /// Lease names another `preferredHolder` (releasing the lock with
    /// `release_on_cancel`). The controller elects among LeaseCandidates, so run a
    /// [`LeaseCandidateKeeper`](super::LeaseCandidateKeeper) named after the lock's
    /// identity beside the elector. Off by default: plain election.
    pub coordinated: bool,
    /// The election's name in logs and metrics (default: the lock's description).
    pub name: String,
    /// What the elector tells its owner.
    pub callbacks: Callbacks,
    /// Where `leader_election_*` metrics go (see [`LeaderElectionConfig::metrics`]).
    pub metrics: Option<LeaderElectionMetrics>,
}

impl fmt::Debug for LeaderElectionConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderElectionConfig")
            .field("lease_duration", &self.lease_duration)
            .field("renew_deadline", &self.renew_deadline)
            .field("retry_period", &self.retry_period)
            .field("release_on_cancel", &self.release_on_cancel)
            .field("coordinated", &self.coordinated)
            .field("name", &self.name)
            .field("callbacks", &self.callbacks)
            .field("metrics", &self.metrics.is_some())
            .finish()
    }
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
            coordinated: false,
            name: String::new(),
            callbacks: Callbacks::default(),
            metrics: None,
        }
    }
}

/// A configuration client-go would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The lease must outlast the renew deadline.
    #[error("leaseDuration must be greater than renewDeadline")]
    LeaseNotLongerThanRenewDeadline,
    /// The renew deadline must leave room for retries.
    #[error("renewDeadline must be greater than retryPeriod*JitterFactor")]
    RenewDeadlineTooShort,
    /// Every duration must be positive.
    #[error("{0} must be greater than zero")]
    NotPositive(&'static str),
    /// Candidates need an identity.
    #[error("lock identity is empty")]
    EmptyIdentity,
}

impl LeaderElectionConfig {
    /// Records `leader_election_master_status` and `leader_election_slowpath_total` for
    /// this election (labelled with its name) through `provider`.
    #[must_use]
    pub fn metrics(mut self, name: &str, provider: &dyn LeaderElectionMetricsProvider) -> Self {
        self.metrics = Some(LeaderElectionMetrics::new(name, provider));
        self
    }

    /// client-go's checks in `NewLeaderElector`.
    pub(super) fn validate(&self, identity: &str) -> Result<(), ConfigError> {
        if self.lease_duration <= self.renew_deadline {
            return Err(ConfigError::LeaseNotLongerThanRenewDeadline);
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(ConfigError::RenewDeadlineTooShort);
        }
        for (name, d) in [
            ("leaseDuration", self.lease_duration),
            ("renewDeadline", self.renew_deadline),
            ("retryPeriod", self.retry_period),
        ] {
            if d.is_zero() {
                return Err(ConfigError::NotPositive(name));
            }
        }
        if identity.is_empty() {
            return Err(ConfigError::EmptyIdentity);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// client-go `leaderelection_test.go`, `TestLeaderElectionConfigValidation`.
    #[test]
    fn client_gos_validation() {
        assert_eq!(LeaderElectionConfig::default().validate("a"), Ok(()));
        let bad = |f: fn(&mut LeaderElectionConfig)| {
            let mut c = LeaderElectionConfig::default();
            f(&mut c);
            c.validate("a")
        };
        assert_eq!(
            bad(|c| c.renew_deadline = c.lease_duration),
            Err(ConfigError::LeaseNotLongerThanRenewDeadline)
        );
        assert_eq!(
            bad(|c| c.retry_period = Duration::from_secs(9)),
            Err(ConfigError::RenewDeadlineTooShort)
        );
        assert_eq!(
            LeaderElectionConfig::default().validate(""),
            Err(ConfigError::EmptyIdentity)
        );
    }
}
