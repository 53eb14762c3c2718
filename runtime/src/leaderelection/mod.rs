//! Leader election (client-go's `tools/leaderelection`): several replicas of a controller
//! contend for a `coordination.k8s.io/v1` Lease; one leads, the others stand by and take
//! over when the leader stops renewing.
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

mod config;
mod elector;
mod lock;
mod record;

pub use config::{Callbacks, ConfigError, JITTER_FACTOR, LeaderElectionConfig};
pub use elector::{LeaderElector, WatchdogError};
pub use lock::{LeaseLock, LockError, ResourceLock};
pub use record::LeaderElectionRecord;
