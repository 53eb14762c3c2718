//! The manager (controller-runtime's `pkg/manager`): one object per operator process that
//! owns the client, the shared informer factory, the controllers, leader election, the
//! `/healthz`, `/readyz` and `/metrics` endpoints, and a graceful shutdown on SIGTERM.
//!
//! ```no_run
//! # async fn example(client: kubegen::client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use kubegen::controller::Action;
//! use kubegen::leaderelection::LeaderElectionConfig;
//! use kubegen::manager::{LeaderElectionOptions, Manager};
//!
//! let mut manager = Manager::builder(client)
//!     .leader_election(LeaderElectionOptions {
//!         namespace: "operators".into(),
//!         name: "my-operator".into(),
//!         identity: std::env::var("POD_NAME")?,
//!         config: LeaderElectionConfig { release_on_cancel: true, ..Default::default() },
//!     })
//!     .probe_address(([0, 0, 0, 0], 8081).into())
//!     .metrics_address(([0, 0, 0, 0], 8080).into())
//!     .build()?;
//! let controller = manager.controller::<Deployment>().build();
//! let reconcile = |_d: Arc<Deployment>, _ctx: Arc<()>| async { Ok::<_, std::io::Error>(Action::done()) };
//! manager.add_controller(controller, reconcile, Arc::new(()));
//! manager.run_until_signal().await?;
//! # Ok(()) }
//! ```
//!
//! * `manager.rs`: [`Manager`], [`ManagerBuilder`], the run and shutdown sequence.
//! * `checks.rs`: named health and readiness checks.
//! * `server.rs`: the HTTP endpoints.

mod checks;
#[allow(clippy::module_inception)]
mod manager;
mod server;

pub use checks::Check;
pub use manager::{
    LEADER_ELECTION_HEALTH_TOLERANCE, LeaderElectionOptions, Manager, ManagerBuilder, ManagerError,
    ShardRingOptions,
};
