//! The events logger (client-go's `eventLogger`): remembers each event it let through, so
//! a repeat of an identical event becomes a patch of the first one — same name, count + 1,
//! a new lastTimestamp — instead of a new object.

use k8s_openapi::{api::core::v1::Event, apimachinery::pkg::apis::meta::v1::Time};
use serde_json::{Value, json};

use super::{keys::event_key, lru::LruCache};

/// What the logger remembers of an event.
#[derive(Debug, Clone)]
struct EventLog {
    count: i32,
    first_timestamp: Option<Time>,
    name: Option<String>,
    resource_version: Option<String>,
}

/// Counts occurrences of events by key.
#[derive(Debug)]
pub(crate) struct EventLogger {
    cache: LruCache<String, EventLog>,
}

impl EventLogger {
    pub(crate) fn new(cache_size: usize) -> Self {
        Self {
            cache: LruCache::new(cache_size),
        }
    }

    /// Records an occurrence of `event` under `key`. A repeat takes the first occurrence's
    /// name, resourceVersion and firstTimestamp, a count one higher, and comes with the
    /// patch that brings the stored event up to date (count, lastTimestamp, message).
    pub(crate) fn observe(&mut self, mut event: Event, key: String) -> (Event, Option<Value>) {
        let last = self.cache.get_mut(&key).filter(|l| l.count > 0).cloned();
        let patch = last.map(|last| {
            event.metadata.name = last.name;
            event.metadata.resource_version = last.resource_version;
            event.first_timestamp = last.first_timestamp;
            event.count = Some(last.count.saturating_add(1));
            json!({
                "count": event.count,
                "lastTimestamp": event.last_timestamp,
                "message": event.message,
            })
        });
        self.cache.insert(
            key,
            EventLog {
                count: event.count.unwrap_or(1),
                first_timestamp: event.first_timestamp.clone(),
                name: event.metadata.name.clone(),
                resource_version: event.metadata.resource_version.clone(),
            },
        );
        (event, patch)
    }

    /// Remembers the server's copy of an event (its name and resourceVersion), under the
    /// event's full key.
    pub(crate) fn update_state(&mut self, event: &Event) {
        self.cache.insert(
            event_key(event),
            EventLog {
                count: event.count.unwrap_or(1),
                first_timestamp: event.first_timestamp.clone(),
                name: event.metadata.name.clone(),
                resource_version: event.metadata.resource_version.clone(),
            },
        );
    }
}
