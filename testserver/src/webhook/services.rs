//! Where the Services that webhooks name are reached. The test server has no cluster
//! network: a test registers the address its webhook server listens on for the Service
//! (namespace, name, port) the manifests use, as kube-apiserver's service resolver finds a
//! Service's endpoints (`ServiceResolver.ResolveEndpoint`). Beside the addresses it keeps
//! the open connections to webhooks ([`super::pool`]), as kube-apiserver's
//! `webhook.ClientManager` holds both its service resolver and its client cache.

use std::{collections::HashMap, net::SocketAddr};

use parking_lot::Mutex;

use super::pool::Pool;

/// The registered Service addresses, keyed by namespace, name and port, and the
/// connections kept open to webhooks.
#[derive(Debug, Default)]
pub struct Services(Mutex<HashMap<(String, String, u16), SocketAddr>>, Pool);

impl Services {
    /// Routes `<name>.<namespace>.svc:<port>` to `addr` (replacing an earlier address).
    pub fn register(&self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        self.0
            .lock()
            .insert((namespace.to_string(), name.to_string(), port), addr);
    }

    /// Forgets a Service's address (calls to it then fail to connect).
    pub fn unregister(&self, namespace: &str, name: &str, port: u16) {
        self.0
            .lock()
            .remove(&(namespace.to_string(), name.to_string(), port));
    }

    /// The connections kept open to webhooks.
    pub(crate) fn pool(&self) -> &Pool {
        &self.1
    }

    /// The address registered for a Service's port.
    pub(crate) fn resolve(&self, namespace: &str, name: &str, port: u16) -> Option<SocketAddr> {
        self.0
            .lock()
            .get(&(namespace.to_string(), name.to_string(), port))
            .copied()
    }
}
