//! Events through the `events.k8s.io/v1` API (client-go's `tools/events`; what
//! controller-runtime 0.23's manager hands out): an [`EventRecorder`] builds
//! `events.k8s.io/v1` Events — the object they are about (`regarding`), optionally a
//! second one (`related`), type, reason, action, note, `eventTime` (a MicroTime),
//! `reportingController` and `reportingInstance`, named `<regarding name>.<unique hex>` —
//! and an [`EventBroadcaster`] queues them (bounded, never blocking the caller, on the
//! same hub as the core/v1 [`crate::record::EventBroadcaster`]) and hands them to
//! watchers: an [`EventSink`] such as [`ClientEventSink`], or `tracing` logs.
//!
//! On their way to a sink, repeats become series: an event with the same isomorphic key
//! ([`keys::isomorphic_key`]: type, action, reason, reporting controller and instance,
//! regarding, related) as one written before is not created again; the first repeat
//! patches `series: {count: 2, lastObservedTime}` into it, later repeats count in memory
//! and are written when the series is refreshed (every 30 minutes), when it finishes (6
//! minutes without a repeat; then it is forgotten and the next occurrence is a new
//! Event) and at shutdown ([`SeriesConfig`]). Writes pass the core/v1 correlator's spam
//! filter (token buckets of 25, one more per 5 minutes, keyed by reporting controller and
//! instance + regarding object; [`BroadcasterConfig`](crate::record::BroadcasterConfig)'s
//! correlator options set them). Transient failures are retried as core/v1 writes are.
//!
//! The core/v1 recorder ([`crate::record`]) stays for components that need it; kube-apiserver
//! serves both APIs from one storage, so `kubectl events` and `kubectl describe` show the
//! events of either.

mod broadcaster;
mod config;
pub mod keys;
mod recorder;
mod series;
mod series_writer;

/// The sink trait and the client-backed sink are the core/v1 ones, generic over the event
/// type: `EventSink<k8s_openapi::api::events::v1::Event>` is this API's sink.
pub use crate::record::{ClientEventSink, EventSink};
pub use broadcaster::EventBroadcaster;
pub use config::{DEFAULT_FINISH_TIME, DEFAULT_REFRESH_TIME, SeriesConfig};
pub use recorder::EventRecorder;
