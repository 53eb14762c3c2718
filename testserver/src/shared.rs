//! The state every request of one server shares: the engine, the fault switchboard, the
//! authenticators and authorizer, and the shutdown signal. Both fronts hold one.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{AuthConfig, auth::Auth, controllers::PodFaults, engine::Engine, faults::Faults};

/// State shared by every request of one server.
pub struct Shared {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Fault injection.
    pub faults: Faults,
    /// Who may talk to the server.
    pub(crate) auth: Auth,
    /// Cancelled when the server stops (ends watch tasks).
    pub shutdown: CancellationToken,
    /// The kubelet faults in force ([`crate::PodFault`]), read by the simulated kubelets.
    pub(crate) pod_faults: Arc<PodFaults>,
}

impl Shared {
    /// Shared state over `engine`, authenticating and authorizing as `auth` says.
    pub fn new(engine: Arc<Engine>, auth: &AuthConfig) -> Arc<Self> {
        Arc::new(Shared {
            engine,
            faults: Faults::default(),
            auth: Auth::new(auth),
            shutdown: CancellationToken::new(),
            pod_faults: Arc::default(),
        })
    }
}
