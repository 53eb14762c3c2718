//! Informer factories (client-go's `informers` package and `SharedInformerFactory`).
//!
//! * `factory`: [`SharedInformerFactory`], one shared informer per type, started and synced
//!   together; its builder sets namespace, list tweaks, per-type resync and transforms.
//! * `generic`: [`GenericInformer`] and [`GenericLister`], type-erased access by
//!   group-version-resource.

mod factory;
mod generic;

pub use factory::{FactoryError, SharedInformerFactory, SharedInformerFactoryBuilder};
pub use generic::{GenericInformer, GenericLister};
