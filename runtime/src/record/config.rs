//! [`BroadcasterConfig`]: queue length, retries and correlation of an
//! [`EventBroadcaster`](super::EventBroadcaster).

use std::time::Duration;

use super::options::CorrelatorOptions;

/// Events queued per watcher before new ones are dropped (client-go's `maxQueuedEvents`).
pub const DEFAULT_QUEUE_CAPACITY: usize = 1000;
/// Attempts to write one event before it is dropped (client-go's `maxTriesPerEvent`).
pub const DEFAULT_MAX_TRIES: u32 = 12;
/// The pause between attempts (client-go's `defaultSleepDuration`); the first pause is a
/// random fraction of it, so clients do not retry in lockstep after an outage.
pub const DEFAULT_RETRY_INTERVAL: Duration = Duration::from_secs(10);

/// How a broadcaster queues, retries and correlates events.
#[derive(Debug, Clone)]
pub struct BroadcasterConfig {
    pub(crate) queue_capacity: usize,
    pub(crate) max_tries: u32,
    pub(crate) retry_interval: Duration,
    pub(crate) correlator: CorrelatorOptions,
}

impl Default for BroadcasterConfig {
    fn default() -> Self {
        Self {
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            max_tries: DEFAULT_MAX_TRIES,
            retry_interval: DEFAULT_RETRY_INTERVAL,
            correlator: CorrelatorOptions::default(),
        }
    }
}

impl BroadcasterConfig {
    /// client-go's defaults: 1000 queued events, 12 tries 10 s apart, default correlation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Events queued per watcher before new ones are dropped (at least one).
    pub fn queue_capacity(mut self, n: usize) -> Self {
        self.queue_capacity = n.max(1);
        self
    }

    /// Attempts per event (at least one).
    pub fn max_tries(mut self, n: u32) -> Self {
        self.max_tries = n.max(1);
        self
    }

    /// The pause between attempts.
    pub fn retry_interval(mut self, d: Duration) -> Self {
        self.retry_interval = d;
        self
    }

    /// The correlation applied by sinks started with
    /// [`start_recording_to_sink`](super::EventBroadcaster::start_recording_to_sink).
    pub fn correlator(mut self, options: CorrelatorOptions) -> Self {
        self.correlator = options;
        self
    }
}
