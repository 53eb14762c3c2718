//! # kubegen: client-go's machinery for Rust
//!
//! `kubegen` is the runtime behind kubegen's generated clients, listers and informers,
//! usable on its own with any type that implements [`kube_core::Resource`]:
//!
//! * [`cache`]: the thread-safe indexed store ([`cache::Indexer`]), the plain
//!   [`cache::Fifo`] and the [`cache::DeltaFifo`] that sits between a reflector and an
//!   informer (client-go's `tools/cache`).
//! * [`informers`]: the [`informers::SharedInformerFactory`], one shared informer per type.
//! * [`workqueue`]: typed, rate-limited work queues (client-go's `util/workqueue`).
//! * [`client`]: the REST client.
//! * [`record`]: events about objects — recorder, broadcaster, correlation (client-go's
//!   `tools/record`).
//! * [`deepcopy`]: owned, mutable copies of cached objects; `#[derive(kubegen::Resource)]`.
//!
//! Objects are shared as `Arc<K>`: everything read from a cache is immutable, so "never
//! mutate the cache" is enforced by the type system.
//!
//! See `ARCHITECTURE.md` at the repository root for how data flows between the parts.

pub mod cache;
pub mod client;
pub mod deepcopy;
pub mod informers;
pub mod record;
pub mod workqueue;

mod object;

pub use object::{Object, ResourceScope};

/// `#[derive(kubegen::Resource)]`: implements `kube_core::Resource` and
/// [`deepcopy::DeepCopy`] for a struct from `#[resource(...)]` keys and client-go markers
/// (`/// +genclient:nonNamespaced`, ...), exactly as the `kubegen-codegen` CLI would.
pub use kubegen_derive::Resource;

/// What generated code refers to: `::kubegen::__private::kube_core::Resource`, so a crate
/// using the derive does not need its own dependency on kube-core or k8s-openapi.
/// Not public API.
#[doc(hidden)]
pub mod __private {
    pub use k8s_openapi;
    pub use kube_core;
    pub use serde;
}
