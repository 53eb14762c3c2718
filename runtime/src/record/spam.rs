//! The spam filter (client-go's `EventSourceObjectSpamFilter`): a token bucket per source
//! and involved object, so one noisy object cannot flood the API server with events.
//! Keyed by a string, so the core/v1 correlator (its [`SpamKeyFunc`](super::SpamKeyFunc))
//! and the `events.k8s.io/v1` broadcaster (reporting controller and instance + regarding)
//! share it.

use tokio::time::Instant;

use super::lru::LruCache;

/// A token bucket that never waits: [`try_accept`](Self::try_accept) takes a token or
/// refuses (client-go's `flowcontrol` token bucket's `TryAccept`).
#[derive(Debug, Clone)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// Throttles events per key (source + involved object): `burst` events at once, then
/// `qps`.
pub(crate) struct SpamFilter {
    cache: LruCache<String, Bucket>,
    burst: f64,
    qps: f64,
}

impl std::fmt::Debug for SpamFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpamFilter")
            .field("burst", &self.burst)
            .field("qps", &self.qps)
            .finish_non_exhaustive()
    }
}

impl SpamFilter {
    /// A filter allowing `burst` events per key, refilled at `qps` per second, remembering
    /// `cache_size` keys.
    pub(crate) fn new(cache_size: usize, burst: u32, qps: f64) -> Self {
        Self {
            cache: LruCache::new(cache_size),
            burst: f64::from(burst.max(1)),
            qps: qps.max(0.0),
        }
    }

    /// Whether an event under `key` must be dropped (its source + object ran out of
    /// tokens) at `now`.
    pub(crate) fn filter(&mut self, key: String, now: Instant) -> bool {
        let (burst, qps) = (self.burst, self.qps);
        let mut bucket = self.cache.get_mut(&key).map_or(
            Bucket {
                tokens: burst,
                last: now,
            },
            |b| b.clone(),
        );
        let elapsed = now.saturating_duration_since(bucket.last);
        bucket.tokens = (bucket.tokens + elapsed.as_secs_f64() * qps).min(burst);
        bucket.last = now;
        let accept = bucket.tokens >= 1.0;
        if accept {
            bucket.tokens -= 1.0;
        }
        self.cache.insert(key, bucket);
        !accept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::keys::spam_key;
    use k8s_openapi::api::core::v1::{Event, ObjectReference};
    use tokio::time::Duration;

    fn on(name: &str) -> String {
        spam_key(&Event {
            involved_object: ObjectReference {
                name: Some(name.into()),
                ..ObjectReference::default()
            },
            ..Event::default()
        })
    }

    #[test]
    fn allows_a_burst_then_one_per_refill_interval_per_object() {
        let mut f = SpamFilter::new(16, 25, 1.0 / 300.0);
        let t0 = Instant::now();
        for i in 0..25 {
            assert!(!f.filter(on("a"), t0), "event {i} is within the burst");
        }
        assert!(f.filter(on("a"), t0), "the 26th is spam");
        assert!(!f.filter(on("b"), t0), "another object has its own bucket");
        assert!(f.filter(on("a"), t0 + Duration::from_secs(299)));
        assert!(!f.filter(on("a"), t0 + Duration::from_secs(301)));
        assert!(f.filter(on("a"), t0 + Duration::from_secs(302)));
    }
}
