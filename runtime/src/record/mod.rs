//! Events about objects (client-go's `tools/record`): an [`EventRecorder`] builds core/v1
//! Events, an [`EventBroadcaster`] queues them (bounded, never blocking the caller) and
//! hands them to watchers — an [`EventSink`] such as [`ClientEventSink`] that writes them to
//! the API server, or `tracing` logs.
//!
//! On their way to a sink, events pass client-go's [`EventCorrelator`]: similar events
//! (differing only in their message) are aggregated, identical events become one Event with
//! a growing count, and each source + object is throttled by a token bucket. Writes that fail
//! transiently are retried (12 tries, 10 s apart by default; see [`BroadcasterConfig`]).
//!
//! [`events`] is the same for the `events.k8s.io/v1` API (client-go's `tools/events`):
//! recorders with action, note, regarding and related, repeats counted as series, the
//! same hub and spam filter.

mod aggregator;
mod broadcaster;
mod client_sink;
mod config;
mod correlator;
mod error;
mod event_type;
pub mod events;
mod fanout;
pub mod keys;
mod logger;
mod logging;
mod lru;
mod options;
mod recorded_event;
mod recorder;
mod sink;
mod sink_error;
mod spam;
mod subject;
mod target;
mod write;

pub use broadcaster::EventBroadcaster;
pub use client_sink::ClientEventSink;
pub use config::{
    BroadcasterConfig, DEFAULT_MAX_TRIES, DEFAULT_QUEUE_CAPACITY, DEFAULT_RETRY_INTERVAL,
};
pub use correlator::{Correlated, EventCorrelator};
pub use error::RecordError;
pub use event_type::{EventType, IntoEventType};
pub use fanout::WatchHandle;
pub use options::{
    AggregateKeyFunc, AggregateMessageFunc, CorrelatorOptions, DEFAULT_AGGREGATE_INTERVAL,
    DEFAULT_AGGREGATE_MAX_EVENTS, DEFAULT_LRU_CACHE_SIZE, DEFAULT_SPAM_BURST, DEFAULT_SPAM_QPS,
    SpamKeyFunc,
};
pub use recorded_event::RecordedEvent;
pub use recorder::EventRecorder;
pub use sink::EventSink;
pub use sink_error::{BoxError, SinkError};
pub use target::EventTarget;
