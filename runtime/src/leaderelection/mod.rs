//! Leader election (client-go's `tools/leaderelection`): several replicas of a controller
//! contend for a `coordination.k8s.io/v1` Lease; one leads, the others stand by and take
//! over when the leader stops renewing — or, in [coordinated](#coordinated-leader-election)
//! mode, a controller picks the leader among them.
//!
//! ```no_run
//! # async fn example(client: kubegen::client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use kubegen::leaderelection::{Callbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
//! use tokio_util::sync::CancellationToken;
//!
//! let lock = LeaseLock::new(client, "kube-system", "my-operator", "pod-a");
//! let config = LeaderElectionConfig {
//!     release_on_cancel: true,
//!     callbacks: Callbacks::new().on_started_leading(|leading: CancellationToken| {
//!         tokio::spawn(async move {
//!             // run controllers until `leading` is cancelled
//!             leading.cancelled().await;
//!         });
//!     }),
//!     ..LeaderElectionConfig::default()
//! };
//! let elector = LeaderElector::new(lock, config)?;
//! elector.run(CancellationToken::new()).await;
//! # Ok(()) }
//! ```
//!
//! * [`LeaderElectionConfig`] (`config.rs`): durations (15 s / 10 s / 2 s), callbacks,
//!   `release_on_cancel`, metrics; validated as client-go validates them.
//! * [`LeaderElector`] (`elector.rs`): the acquire / renew / release state machine and the
//!   `/healthz` watchdog ([`LeaderElector::check`]).
//! * [`ResourceLock`], [`LeaseLock`] (`lock.rs`) and [`LeaderElectionRecord`] (`record.rs`).
//! * [`LeaseCandidateKeeper`] (`candidate.rs`): a process's LeaseCandidate, for
//!   coordinated election.
//!
//! # Coordinated leader election
//!
//! KEP-4355 (beta in Kubernetes 1.33, the `CoordinatedLeaderElection` feature): instead of
//! racing for the Lease, candidates declare themselves with a `coordination.k8s.io/v1beta1`
//! LeaseCandidate — the Lease they stand for, their binary and emulation versions, the
//! strategy they want — and kube-apiserver's coordinated leader election controller
//! elects the holder: under `OldestEmulationVersion` the lowest emulation version, then
//! the lowest binary version, then the oldest candidate. So during a mixed-version rollout
//! the oldest compatible replica leads; when a better candidate appears, the controller
//! names it the Lease's `preferredHolder` and the holder steps down; when the holder's
//! Lease expires, it elects again among the candidates that answer its ping.
//!
//! A coordinated candidate runs two things under one identity: a [`LeaseCandidateKeeper`]
//! (creates the LeaseCandidate, answers pings, deletes it when stopped) and a
//! [`LeaderElector`] with [`LeaderElectionConfig::coordinated`] set, which never takes the
//! Lease itself: it leads once the Lease names it, renews as usual, and steps down for a
//! preferred holder (leaving the Lease to expire: its work may still run). Plain election
//! is the default and is unchanged; the two kinds should not share a Lease. `kubegen-testserver` runs the
//! controller (`Workload::CoordinatedLeaderElection`) and serves LeaseCandidates.

mod candidate;
mod clock;
mod config;
mod elector;
mod lock;
mod record;

pub use candidate::{
    CandidateError, DEFAULT_RENEW_INTERVAL, LeaseCandidateKeeper, OLDEST_EMULATION_VERSION,
};
pub use config::{Callbacks, ConfigError, JITTER_FACTOR, LeaderElectionConfig};
pub use elector::{LeaderElector, WatchdogError};
pub use lock::{LeaseLock, LockError, ResourceLock};
pub use record::LeaderElectionRecord;
