//! [`CorrelatorOptions`]: the correlator's limits and grouping functions (client-go's
//! `CorrelatorOptions`), with client-go's defaults.

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::Event;

use super::keys;

/// Groups events for aggregation: `(aggregate key, local key)`.
pub type AggregateKeyFunc = Arc<dyn Fn(&Event) -> (String, String) + Send + Sync>;
/// The message of an aggregate event.
pub type AggregateMessageFunc = Arc<dyn Fn(&Event) -> String + Send + Sync>;
/// The key the spam filter throttles by.
pub type SpamKeyFunc = Arc<dyn Fn(&Event) -> String + Send + Sync>;

/// client-go's cache size for each of the correlator's caches.
pub const DEFAULT_LRU_CACHE_SIZE: usize = 4096;
/// Events a source may send about one object at once.
pub const DEFAULT_SPAM_BURST: u32 = 25;
/// The spam filter's refill rate: one event per five minutes.
pub const DEFAULT_SPAM_QPS: f64 = 1.0 / 300.0;
/// Similar events (differing only in message) seen this many times are aggregated.
pub const DEFAULT_AGGREGATE_MAX_EVENTS: usize = 10;
/// ... when each came within this interval of the previous one.
pub const DEFAULT_AGGREGATE_INTERVAL: Duration = Duration::from_secs(600);

/// How the [`EventCorrelator`](super::EventCorrelator) filters, aggregates and counts.
#[derive(Clone)]
pub struct CorrelatorOptions {
    pub(crate) lru_cache_size: usize,
    pub(crate) burst: u32,
    pub(crate) qps: f64,
    pub(crate) max_events: usize,
    pub(crate) max_interval: Duration,
    pub(crate) key_func: AggregateKeyFunc,
    pub(crate) message_func: AggregateMessageFunc,
    pub(crate) spam_key_func: SpamKeyFunc,
}

impl std::fmt::Debug for CorrelatorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CorrelatorOptions")
            .field("lru_cache_size", &self.lru_cache_size)
            .field("burst", &self.burst)
            .field("qps", &self.qps)
            .field("max_events", &self.max_events)
            .field("max_interval", &self.max_interval)
            .finish_non_exhaustive()
    }
}

impl Default for CorrelatorOptions {
    fn default() -> Self {
        Self {
            lru_cache_size: DEFAULT_LRU_CACHE_SIZE,
            burst: DEFAULT_SPAM_BURST,
            qps: DEFAULT_SPAM_QPS,
            max_events: DEFAULT_AGGREGATE_MAX_EVENTS,
            max_interval: DEFAULT_AGGREGATE_INTERVAL,
            key_func: Arc::new(keys::aggregate_by_reason),
            message_func: Arc::new(keys::aggregate_message_by_reason),
            spam_key_func: Arc::new(keys::spam_key),
        }
    }
}

impl CorrelatorOptions {
    /// client-go's defaults: caches of 4096 keys, bursts of 25 refilled once per five
    /// minutes, aggregation after 10 similar events within 10 minutes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries kept by each cache (at least one).
    pub fn lru_cache_size(mut self, size: usize) -> Self {
        self.lru_cache_size = size.max(1);
        self
    }

    /// Events a source may send about one object at once (at least one).
    pub fn burst(mut self, burst: u32) -> Self {
        self.burst = burst.max(1);
        self
    }

    /// Tokens added per second to each spam bucket (negative counts as zero).
    pub fn qps(mut self, qps: f64) -> Self {
        self.qps = if qps.is_finite() { qps.max(0.0) } else { 0.0 };
        self
    }

    /// How many distinct similar events trigger aggregation (at least one).
    pub fn max_events(mut self, n: usize) -> Self {
        self.max_events = n.max(1);
        self
    }

    /// How long after the last similar event a new one starts a fresh group.
    pub fn max_interval(mut self, interval: Duration) -> Self {
        self.max_interval = interval;
        self
    }

    /// Groups events for aggregation (default: [`aggregate_by_reason`](keys::aggregate_by_reason)).
    pub fn key_func(
        mut self,
        f: impl Fn(&Event) -> (String, String) + Send + Sync + 'static,
    ) -> Self {
        self.key_func = Arc::new(f);
        self
    }

    /// The message of aggregate events (default: "(combined from similar events): ...").
    pub fn message_func(mut self, f: impl Fn(&Event) -> String + Send + Sync + 'static) -> Self {
        self.message_func = Arc::new(f);
        self
    }

    /// The spam filter's key (default: [`spam_key`](keys::spam_key)).
    pub fn spam_key_func(mut self, f: impl Fn(&Event) -> String + Send + Sync + 'static) -> Self {
        self.spam_key_func = Arc::new(f);
        self
    }
}
