//! The series cache (client-go's `tools/events` `eventCache`): the last event written
//! under each isomorphic key. An event whose key is cached is the same thing happening
//! again: the first repeat turns the cached event into a series (`series.count` 2,
//! `series.lastObservedTime` now) that is written at once; later repeats only count, and
//! the count reaches the server when the series is refreshed (every 30 minutes), when it
//! finishes (no repeat for 6 minutes) or when the broadcaster shuts down.

use std::collections::HashMap;

use k8s_openapi::{
    api::events::v1::{Event, EventSeries},
    apimachinery::pkg::apis::meta::v1::MicroTime,
    jiff::Timestamp,
};
use tokio::time::{Duration, Instant};

use super::keys::isomorphic_key;

/// One cached event.
#[derive(Debug, Clone)]
struct Cached {
    event: Event,
    /// When it was last observed (tokio's clock, for finishing).
    last_seen: Instant,
    /// The series count the server has (0: none written yet).
    written: i32,
}

/// The last event under each isomorphic key.
#[derive(Debug, Default)]
pub(crate) struct SeriesCache {
    entries: HashMap<String, Cached>,
}

/// A cached event to write, under its key.
pub(crate) type Pending = (String, Event);

impl SeriesCache {
    /// Observes `event` at `now` (`wall` for `series.lastObservedTime`); answers the event
    /// to write now, if any. `admit` (the spam filter) is asked before each write: a new
    /// event it refuses is not cached, a series it refuses still counts and is written
    /// later.
    pub(crate) fn observe(
        &mut self,
        event: Event,
        now: Instant,
        wall: Timestamp,
        admit: impl FnOnce(&Event) -> bool,
    ) -> Option<Event> {
        let key = isomorphic_key(&event);
        let Some(cached) = self.entries.get_mut(&key) else {
            if !admit(&event) {
                return None;
            }
            self.entries.insert(
                key,
                Cached {
                    event: event.clone(),
                    last_seen: now,
                    written: 0,
                },
            );
            return Some(event);
        };
        cached.last_seen = now;
        let observed = MicroTime(wall);
        match &mut cached.event.series {
            Some(series) => {
                series.count = series.count.saturating_add(1);
                series.last_observed_time = observed;
                None
            }
            None => {
                cached.event.series = Some(EventSeries {
                    count: 2,
                    last_observed_time: observed,
                });
                admit(&cached.event).then(|| cached.event.clone())
            }
        }
    }

    /// Learns that the series under `key` was written with `count` (the write of a
    /// series, a refresh, a finish).
    pub(crate) fn written(&mut self, key: &str, count: i32) {
        if let Some(cached) = self.entries.get_mut(key) {
            cached.written = cached.written.max(count);
        }
    }

    /// Every series (client-go's `refreshExistingEventSeries`: each is written again, so
    /// the server keeps it alive and learns its count).
    pub(crate) fn series(&self) -> Vec<Pending> {
        self.entries
            .iter()
            .filter(|(_, c)| c.event.series.is_some())
            .map(|(k, c)| (k.clone(), c.event.clone()))
            .collect()
    }

    /// Series whose count the server does not have yet (what a shutdown writes).
    pub(crate) fn unwritten(&self) -> Vec<Pending> {
        self.entries
            .iter()
            .filter(|(_, c)| c.event.series.as_ref().is_some_and(|s| s.count > c.written))
            .map(|(k, c)| (k.clone(), c.event.clone()))
            .collect()
    }

    /// client-go's `finishSeries`: forgets the single events not observed for `finish`,
    /// and answers the series not observed for `finish`, whose final count is written
    /// before they are [`forget`](Self::forget)ten.
    pub(crate) fn finished(&mut self, now: Instant, finish: Duration) -> Vec<Pending> {
        let ended = |c: &Cached| now.saturating_duration_since(c.last_seen) >= finish;
        self.entries
            .retain(|_, c| c.event.series.is_some() || !ended(c));
        self.entries
            .iter()
            .filter(|(_, c)| ended(c))
            .map(|(k, c)| (k.clone(), c.event.clone()))
            .collect()
    }

    /// Forgets the event under `key` unless it was observed again since `since`.
    pub(crate) fn forget(&mut self, key: &str, since: Instant) {
        if self.entries.get(key).is_some_and(|c| c.last_seen <= since) {
            self.entries.remove(key);
        }
    }

    /// How many events are cached.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ObjectReference;

    fn ev(reason: &str) -> Event {
        Event {
            reason: Some(reason.into()),
            regarding: Some(ObjectReference {
                name: Some("web".into()),
                ..ObjectReference::default()
            }),
            ..Event::default()
        }
    }

    fn count(e: &Option<Event>) -> Option<i32> {
        e.as_ref().and_then(|e| e.series.as_ref()).map(|s| s.count)
    }

    /// client-go tools/events eventseries_test.go `TestEventSeriesf`: the first
    /// occurrence is written as is, the second as a series of 2, later ones only count.
    #[test]
    fn a_repeat_becomes_a_series_and_later_repeats_only_count() {
        let mut c = SeriesCache::default();
        let t0 = Instant::now();
        let wall = Timestamp::now();
        let first = c.observe(ev("Started"), t0, wall, |_| true);
        assert!(first.is_some() && count(&first).is_none());
        let second = c.observe(ev("Started"), t0, wall, |_| true);
        assert_eq!(count(&second), Some(2));
        assert!(c.observe(ev("Started"), t0, wall, |_| true).is_none());
        c.written("nope", 9);
        let series = c.series();
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].1.series.as_ref().map(|s| s.count), Some(3));
        assert!(c.observe(ev("Killed"), t0, wall, |_| true).is_some());
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn a_refused_new_event_is_not_cached_but_a_refused_series_still_counts() {
        let mut c = SeriesCache::default();
        let (t0, wall) = (Instant::now(), Timestamp::now());
        assert!(c.observe(ev("Started"), t0, wall, |_| false).is_none());
        assert_eq!(c.len(), 0);
        assert!(c.observe(ev("Started"), t0, wall, |_| true).is_some());
        assert!(c.observe(ev("Started"), t0, wall, |_| false).is_none());
        let unwritten = c.unwritten();
        assert_eq!(unwritten.len(), 1);
        let key = unwritten[0].0.clone();
        c.written(&key, 2);
        assert!(c.unwritten().is_empty());
        c.observe(ev("Started"), t0, wall, |_| true);
        assert_eq!(c.unwritten().len(), 1, "count 3 is not written yet");
    }

    /// client-go tools/events eventseries_test.go `TestFinishSeries`: a series not
    /// observed for 6 minutes is finished (written, then forgotten), a single event is
    /// just forgotten.
    #[test]
    fn finished_series_are_answered_and_single_events_forgotten() {
        let mut c = SeriesCache::default();
        let (t0, wall) = (Instant::now(), Timestamp::now());
        let finish = Duration::from_secs(360);
        c.observe(ev("Single"), t0, wall, |_| true);
        c.observe(ev("Twice"), t0, wall, |_| true);
        c.observe(ev("Twice"), t0, wall, |_| true);
        assert!(c.finished(t0 + Duration::from_secs(10), finish).is_empty());
        assert_eq!(c.len(), 2);
        let done = c.finished(t0 + finish, finish);
        assert_eq!(done.len(), 1);
        assert_eq!(c.len(), 1, "the single event is forgotten");
        c.forget(&done[0].0, t0 + finish);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_series_observed_again_while_finishing_is_kept() {
        let mut c = SeriesCache::default();
        let (t0, wall) = (Instant::now(), Timestamp::now());
        c.observe(ev("Twice"), t0, wall, |_| true);
        c.observe(ev("Twice"), t0, wall, |_| true);
        let finish = Duration::from_secs(1);
        let done = c.finished(t0 + finish, finish);
        c.observe(ev("Twice"), t0 + finish * 2, wall, |_| true);
        c.forget(&done[0].0, t0 + finish);
        assert_eq!(c.len(), 1);
    }
}
