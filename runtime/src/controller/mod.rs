//! Controllers (controller-runtime's `pkg/builder` and `pkg/controller`): a reconcile
//! function for a primary type, fed by shared informers through a rate-limited priority
//! queue.
//!
//! ```text
//!  factory informers ──events──▶ handlers (predicate, map to Requests)
//!    K (primary)                    │ initial list / resync: low priority
//!    O (owns: controller owner)     ▼
//!    W (watches: map fn)       RateLimitingQueue<Request>  ── one request, one worker
//!                                   │
//!                      N workers: cache lookup → reconcile(Arc<K>, ctx) → Action / error
//!                                   │ Ok: forget backoff, requeue_after?
//!                                   │ Err: backoff 5 ms, 10 ms, 20 ms …; terminal: drop
//! ```
//!
//! * [`ControllerBuilder`] ([`Controller::builder`]): `owns`, `watches`, event filters,
//!   name, concurrency, timeouts, rate limiter, recorder, metrics.
//! * [`Controller::run`]: the loop; see the `controller` module docs for each step.
//! * [`Action`], [`TerminalError`], [`Request`]: what reconcile functions deal in.
//! * [`predicate`]: event filters ([`GenerationChanged`], …) and their combinators.
//! * [`finalizer`]: the finalizer flow (add, apply, clean up once, remove).
//! * [`CachedClient`] and [`ConsistencyStore`]: reads from the cache, writes to the API
//!   server, and read-your-own-writes for reads and reconciles (KEP-5647).

mod action;
mod builder;
mod client;
mod consistency;
#[allow(clippy::module_inception)]
mod controller;
mod error;
pub mod finalizer;
mod handler;
pub mod predicate;
mod request;
mod shard;
mod source;

pub use action::Action;
pub use builder::ControllerBuilder;
pub use client::{CachedClient, DEFAULT_CONSISTENCY_WAIT, ReadError};
pub use consistency::ConsistencyStore;
pub use controller::{Controller, ShutdownReport};
pub use error::{ControllerError, TerminalError, is_terminal};
pub use predicate::{
    AnnotationsChanged, GenerationChanged, LabelSelector, LabelsChanged, Predicate,
    ResourceVersionChanged,
};
pub use request::Request;

/// The priority of requests from events that carry nothing new: the objects of an
/// informer's first list and resyncs (controller-runtime's `handler.LowPriority`).
pub const LOW_PRIORITY: i32 = -100;
