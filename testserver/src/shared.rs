//! The state every request of one server shares: the engine, the fault switchboard, the
//! authenticators and authorizer, the audit log, and the shutdown signal. Both fronts hold one.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{
    AuthConfig,
    audit::{AuditError, Auditor},
    auth::Auth,
    controllers::PodFaults,
    engine::Engine,
    faults::Faults,
};

/// State shared by every request of one server.
pub struct Shared {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Fault injection.
    pub faults: Faults,
    /// Who may talk to the server.
    pub(crate) auth: Auth,
    /// The audit sinks ([`crate::audit`]).
    pub(crate) audit: Auditor,
    /// Cancelled when the server stops (ends watch tasks).
    pub shutdown: CancellationToken,
    /// The kubelet faults in force ([`crate::PodFault`]), read by the simulated kubelets.
    pub(crate) pod_faults: Arc<PodFaults>,
    /// Where the Services that webhooks name are reached ([`crate::webhook::services`]);
    /// shared with the watch streams that convert their events through a webhook.
    pub(crate) services: Arc<crate::webhook::Services>,
}

impl Shared {
    /// Shared state over `engine`, authenticating and authorizing as `auth` says. An
    /// audit log file that cannot be opened is logged and not written; [`Shared::try_new`]
    /// returns the error instead.
    pub fn new(engine: Arc<Engine>, auth: &AuthConfig) -> Arc<Self> {
        let audit = Auditor::new(&auth.audit).unwrap_or_else(|err| {
            tracing::error!(%err, "audit log disabled");
            let memory_only = crate::audit::AuditConfig {
                log_path: None,
                ..auth.audit.clone()
            };
            Auditor::new(&memory_only).unwrap_or_default()
        });
        Self::with_audit(engine, auth, audit)
    }

    /// Shared state over `engine`, authenticating, authorizing and auditing as `auth`
    /// says; fails when the audit log file cannot be opened.
    pub fn try_new(engine: Arc<Engine>, auth: &AuthConfig) -> Result<Arc<Self>, AuditError> {
        Ok(Self::with_audit(engine, auth, Auditor::new(&auth.audit)?))
    }

    fn with_audit(engine: Arc<Engine>, auth: &AuthConfig, audit: Auditor) -> Arc<Self> {
        Arc::new(Shared {
            engine,
            faults: Faults::default(),
            auth: Auth::new(auth),
            audit,
            shutdown: CancellationToken::new(),
            pod_faults: Arc::default(),
            services: Arc::default(),
        })
    }

    /// Routes the Service `<name>.<namespace>.svc:<port>` that webhook configurations and
    /// CRD conversion webhooks name to `addr` (there is no cluster network: the test says
    /// where its webhook server listens).
    pub fn register_service(
        &self,
        namespace: &str,
        name: &str,
        port: u16,
        addr: std::net::SocketAddr,
    ) {
        self.services.register(namespace, name, port, addr);
    }

    /// The audit events kept in memory so far, oldest first (empty unless
    /// [`crate::AuditConfig::memory`]).
    pub fn audit_events(&self) -> Vec<crate::AuditEvent> {
        self.audit.events()
    }
}
