//! The state every request of one server shares: the engine, the fault switchboard, the
//! token authentication requires (if any) and the shutdown signal. Both fronts hold one.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{controllers::PodFaults, engine::Engine, faults::Faults};

/// State shared by every request of one server.
pub struct Shared {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Fault injection.
    pub faults: Faults,
    /// Required bearer token, if any.
    pub token: Option<String>,
    /// Cancelled when the server stops (ends watch tasks).
    pub shutdown: CancellationToken,
    /// The kubelet faults in force ([`crate::PodFault`]), read by the simulated kubelets.
    pub(crate) pod_faults: Arc<PodFaults>,
}

impl Shared {
    /// Shared state over `engine`.
    pub fn new(engine: Arc<Engine>, token: Option<String>) -> Arc<Self> {
        Arc::new(Shared {
            engine,
            faults: Faults::default(),
            token,
            shutdown: CancellationToken::new(),
            pod_faults: Arc::default(),
        })
    }
}
