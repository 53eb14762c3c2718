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
//! * `secure.rs` (feature `secure-metrics`): `SecureServing`, `/metrics` over HTTPS.
//! * `metrics_filter.rs` (feature `secure-metrics`): `MetricsAuth`, the TokenReview and
//!   SubjectAccessReview filter in front of it.
//!
//! # Metrics
//!
//! `/metrics` serves one prometheus-client registry ([`Manager::registry`]) holding
//! controller-runtime's `controller_runtime_*` series, the workqueues' `workqueue_*`, the
//! informers' and reflectors', leader election's, and client-go's REST client series of the
//! manager's client: `rest_client_requests_total{code,method,host}`,
//! `rest_client_request_duration_seconds{verb,host}`,
//! `rest_client_rate_limiter_duration_seconds{verb,host}` and
//! `rest_client_request_retries_total{code,verb,host}`, recorded without being asked
//! (controller-runtime 0.24 registers only the first; the three others are opt-ins of its
//! later `RegisterRESTClientMetrics`; here they are cheap, labelled by verb and host only,
//! and always on).
//!
//! # Secure metrics
//!
//! With the `secure-metrics` feature, `ManagerBuilder::metrics_secure` serves `/metrics`
//! over HTTPS (default `:8443`, a self-signed certificate unless a directory is given) and
//! lets only callers whose bearer token the API server accepts (TokenReview) and whose user
//! may `get` the path (SubjectAccessReview) read it: 401 without an accepted token, 403
//! without the permission — kubebuilder's default scaffold. The manager's account needs
//! `create` on `tokenreviews` and `subjectaccessreviews` (kubebuilder's
//! `metrics-auth-role`), a scraper a ClusterRole with `nonResourceURLs: ["/metrics"]`,
//! `verbs: ["get"]` (`metrics-reader`).
//!
//! ```no_run
//! # #[cfg(feature = "secure-metrics")]
//! # async fn secure(client: kubegen::client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use kubegen::manager::{Manager, SecureServing};
//!
//! let manager = Manager::builder(client)
//!     .probe_address(([0, 0, 0, 0], 8081).into())
//!     .metrics_address(([0, 0, 0, 0], 8443).into())
//!     .metrics_secure(SecureServing::default())
//!     .build()?;
//! manager.run_until_signal().await?;
//! # Ok(()) }
//! ```

mod checks;
#[allow(clippy::module_inception)]
mod manager;
#[cfg(feature = "secure-metrics")]
mod metrics_filter;
#[cfg(feature = "secure-metrics")]
mod secure;
mod server;

#[cfg(feature = "secure-metrics")]
pub use metrics_filter::{
    ALLOW_CACHE_TTL, AUTHENTICATION_CACHE_TTL, DENY_CACHE_TTL, MetricsAuth, MetricsAuthError,
    MetricsUser, Verdict,
};
#[cfg(feature = "secure-metrics")]
pub use secure::{DEFAULT_SECURE_METRICS_PORT, SecureServing, default_secure_metrics_address};

pub use checks::Check;
pub use manager::{
    LEADER_ELECTION_HEALTH_TOLERANCE, LeaderElectionOptions, Manager, ManagerBuilder, ManagerError,
    ShardRingOptions,
};
