//! The aggregator (client-go's `EventAggregator`): once `max_events` events that differ only
//! in their message arrive, each within `max_interval` of the previous, further ones are
//! replaced by one aggregate event ("(combined from similar events): ...") whose count the
//! events logger then increments.

use std::collections::HashSet;

use k8s_openapi::{
    api::core::v1::Event,
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
    jiff::Timestamp,
};
use tokio::time::{Duration, Instant};

use super::{
    keys::{event_key, event_name},
    lru::LruCache,
    options::{AggregateKeyFunc, AggregateMessageFunc},
};

#[derive(Debug)]
struct AggregateRecord {
    /// The distinct local keys (messages) seen in this group.
    local_keys: HashSet<String>,
    last: Instant,
}

/// Groups similar events and replaces them by an aggregate once there are too many.
pub(crate) struct Aggregator {
    cache: LruCache<String, AggregateRecord>,
    key_func: AggregateKeyFunc,
    message_func: AggregateMessageFunc,
    max_events: usize,
    max_interval: Duration,
}

impl Aggregator {
    pub(crate) fn new(
        cache_size: usize,
        key_func: AggregateKeyFunc,
        message_func: AggregateMessageFunc,
        max_events: usize,
        max_interval: Duration,
    ) -> Self {
        Self {
            cache: LruCache::new(cache_size),
            key_func,
            message_func,
            max_events: max_events.max(1),
            max_interval,
        }
    }

    /// The event to record and the key the events logger counts it under: the event itself
    /// and its full key while its group is small, otherwise a new aggregate event and the
    /// group's key (so every later aggregate increments the same event).
    pub(crate) fn aggregate(
        &mut self,
        event: &Event,
        now: Instant,
        wall: Timestamp,
    ) -> (Event, String) {
        let (aggregate_key, local_key) = (self.key_func)(event);
        let max_interval = self.max_interval;
        let mut record = match self.cache.get_mut(&aggregate_key) {
            Some(r) if now.saturating_duration_since(r.last) <= max_interval => AggregateRecord {
                local_keys: std::mem::take(&mut r.local_keys),
                last: r.last,
            },
            _ => AggregateRecord {
                local_keys: HashSet::new(),
                last: now,
            },
        };
        record.local_keys.insert(local_key);
        record.last = now;
        let over = record.local_keys.len() >= self.max_events;
        if over {
            // do not let the set grow past the threshold
            if let Some(any) = record.local_keys.iter().next().cloned() {
                record.local_keys.remove(&any);
            }
        }
        self.cache.insert(aggregate_key.clone(), record);
        if !over {
            return (event.clone(), event_key(event));
        }
        let time = Time(wall);
        let name = event.involved_object.name.as_deref().unwrap_or("");
        let aggregate = Event {
            metadata: ObjectMeta {
                name: Some(event_name(name, wall)),
                namespace: event.metadata.namespace.clone(),
                ..ObjectMeta::default()
            },
            count: Some(1),
            first_timestamp: Some(time.clone()),
            last_timestamp: Some(time),
            involved_object: event.involved_object.clone(),
            message: Some((self.message_func)(event)),
            type_: event.type_.clone(),
            reason: event.reason.clone(),
            source: event.source.clone(),
            reporting_component: event.reporting_component.clone(),
            reporting_instance: event.reporting_instance.clone(),
            ..Event::default()
        };
        (aggregate, aggregate_key)
    }
}
