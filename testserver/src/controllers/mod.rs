//! The controllers a real cluster runs beside kube-apiserver, as engine hooks
//! ([`crate::engine::Controller`]): registered by [`crate::apiserver`], never called by
//! name from the engine.

mod crd;
mod gc;
mod namespace;

use std::sync::Arc;

pub use crd::CrdController;
pub use gc::GarbageCollector;
pub use namespace::NamespaceController;

use crate::engine::Controller;

/// The standard set: the CRD controllers, the namespace controller and the garbage
/// collector, in that order.
pub fn standard() -> Vec<Arc<dyn Controller>> {
    vec![
        Arc::new(CrdController),
        Arc::new(NamespaceController),
        Arc::new(GarbageCollector),
    ]
}
