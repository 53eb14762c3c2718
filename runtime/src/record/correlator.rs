//! [`EventCorrelator`] (client-go's `EventCorrelator`): every event passes the aggregator,
//! then the events logger, then the spam filter, before it is written.

use k8s_openapi::{api::core::v1::Event, jiff::Timestamp};
use serde_json::Value;
use tokio::time::Instant;

use super::{
    aggregator::Aggregator,
    logger::EventLogger,
    options::{CorrelatorOptions, SpamKeyFunc},
    spam::SpamFilter,
};

/// What to do with an event after correlation.
#[derive(Debug, Clone, PartialEq)]
pub enum Correlated {
    /// The spam filter dropped it: send nothing.
    Skip,
    /// A new event: create it.
    Create(Box<Event>),
    /// A repeat of an event already written: patch it (create it again if it is gone).
    Patch {
        /// The event as it should now be stored (the first occurrence's name, count + 1).
        event: Box<Event>,
        /// A strategic-merge patch setting count, lastTimestamp and message.
        patch: Value,
    },
}

/// Filters, aggregates and counts events so a controller cannot overwhelm the API server:
///
/// * events that differ only in their message are aggregated once
///   [`max_events`](CorrelatorOptions::max_events) (10) of them come within
///   [`max_interval`](CorrelatorOptions::max_interval) (10 minutes) of each other, into one
///   event whose message is "(combined from similar events): &lt;latest message&gt;";
/// * an identical event is not written again: the stored one gets count + 1;
/// * a source may send [`burst`](CorrelatorOptions::burst) (25) events about one object,
///   then one per 1/[`qps`](CorrelatorOptions::qps) (5 minutes); the rest are dropped.
///
/// ```
/// use k8s_openapi::api::core::v1::{Event, ObjectReference};
/// use kubegen::record::{Correlated, CorrelatorOptions, EventCorrelator};
///
/// let mut c = EventCorrelator::new(CorrelatorOptions::default());
/// let event = Event {
///     involved_object: ObjectReference { name: Some("web".into()), ..Default::default() },
///     message: Some("pulled".into()),
///     count: Some(1),
///     ..Default::default()
/// };
/// assert!(matches!(c.correlate(event.clone()), Correlated::Create(_)));
/// match c.correlate(event) {
///     Correlated::Patch { event, .. } => assert_eq!(event.count, Some(2)),
///     other => panic!("{other:?}"),
/// }
/// ```
pub struct EventCorrelator {
    aggregator: Aggregator,
    logger: EventLogger,
    spam: SpamFilter,
    spam_key: SpamKeyFunc,
}

impl std::fmt::Debug for EventCorrelator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventCorrelator")
            .field("spam", &self.spam)
            .finish_non_exhaustive()
    }
}

impl EventCorrelator {
    /// A correlator with `options`.
    pub fn new(options: CorrelatorOptions) -> Self {
        let size = options.lru_cache_size;
        Self {
            aggregator: Aggregator::new(
                size,
                options.key_func,
                options.message_func,
                options.max_events,
                options.max_interval,
            ),
            logger: EventLogger::new(size),
            spam: SpamFilter::new(size, options.burst, options.qps),
            spam_key: options.spam_key_func,
        }
    }

    /// Correlates `event` now (tokio's clock for intervals, the wall clock for timestamps).
    pub fn correlate(&mut self, event: Event) -> Correlated {
        self.correlate_at(event, Instant::now(), Timestamp::now())
    }

    /// Correlates `event` as of `now` (intervals) and `wall` (timestamps of aggregate events).
    pub fn correlate_at(&mut self, event: Event, now: Instant, wall: Timestamp) -> Correlated {
        let (aggregate, key) = self.aggregator.aggregate(&event, now, wall);
        let (observed, patch) = self.logger.observe(aggregate, key);
        if self.spam.filter((self.spam_key)(&observed), now) {
            return Correlated::Skip;
        }
        match patch {
            Some(patch) => Correlated::Patch {
                event: Box::new(observed),
                patch,
            },
            None => Correlated::Create(Box::new(observed)),
        }
    }

    /// Learns the server's copy of an event written (its name and resourceVersion).
    pub fn update_state(&mut self, event: &Event) {
        self.logger.update_state(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::{
        api::core::v1::{EventSource, ObjectReference},
        apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
    };
    use std::time::Duration;

    fn event(object: &str, reason: &str, message: &str) -> Event {
        let t = Time(Timestamp::now());
        Event {
            metadata: ObjectMeta {
                name: Some(format!("{object}.{message}")),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                namespace: Some("default".into()),
                name: Some(object.into()),
                uid: Some(format!("uid-{object}")),
                api_version: Some("v1".into()),
                ..ObjectReference::default()
            },
            source: Some(EventSource {
                component: Some("test".into()),
                host: None,
            }),
            type_: Some("Normal".into()),
            reason: Some(reason.into()),
            message: Some(message.into()),
            count: Some(1),
            first_timestamp: Some(t.clone()),
            last_timestamp: Some(t),
            ..Event::default()
        }
    }

    fn created(c: Correlated) -> Event {
        match c {
            Correlated::Create(e) => *e,
            other => panic!("expected a create, got {other:?}"),
        }
    }

    fn patched(c: Correlated) -> (Event, Value) {
        match c {
            Correlated::Patch { event, patch } => (*event, patch),
            other => panic!("expected a patch, got {other:?}"),
        }
    }

    #[test]
    fn identical_events_patch_the_first_with_a_growing_count() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        let (t, w) = (Instant::now(), Timestamp::now());
        let first = created(c.correlate_at(event("web", "Pulled", "m"), t, w));
        assert_eq!(first.count, Some(1));
        let mut stored = first.clone();
        stored.metadata.resource_version = Some("42".into());
        c.update_state(&stored);

        let mut again = event("web", "Pulled", "m");
        again.metadata.name = Some("a-fresh-name".into());
        let (second, patch) = patched(c.correlate_at(again, t, w));
        assert_eq!(second.metadata.name, first.metadata.name);
        assert_eq!(second.metadata.resource_version.as_deref(), Some("42"));
        assert_eq!(second.count, Some(2));
        assert_eq!(second.first_timestamp, first.first_timestamp);
        assert_eq!(patch["count"], 2);
        assert_eq!(patch["message"], "m");
        assert!(patch["lastTimestamp"].is_string());

        let (third, _) = patched(c.correlate_at(event("web", "Pulled", "m"), t, w));
        assert_eq!(third.count, Some(3));
    }

    #[test]
    fn different_reasons_are_different_events() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        let (t, w) = (Instant::now(), Timestamp::now());
        created(c.correlate_at(event("web", "Pulled", "m"), t, w));
        created(c.correlate_at(event("web", "Started", "m"), t, w));
    }

    #[test]
    fn the_tenth_similar_event_becomes_an_aggregate_that_later_ones_count_up() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        let (t, w) = (Instant::now(), Timestamp::now());
        for i in 0..9 {
            let e = created(c.correlate_at(event("web", "Failed", &format!("m{i}")), t, w));
            assert_eq!(e.message.as_deref(), Some(format!("m{i}").as_str()));
        }
        let agg = created(c.correlate_at(event("web", "Failed", "m9"), t, w));
        assert_eq!(
            agg.message.as_deref(),
            Some("(combined from similar events): m9")
        );
        assert_eq!(agg.count, Some(1));
        assert_eq!(agg.reason.as_deref(), Some("Failed"));
        let (again, patch) = patched(c.correlate_at(event("web", "Failed", "m10"), t, w));
        assert_eq!(again.metadata.name, agg.metadata.name);
        assert_eq!(again.count, Some(2));
        assert_eq!(patch["message"], "(combined from similar events): m10");
    }

    #[test]
    fn similar_events_spread_beyond_the_interval_are_not_aggregated() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        let (t, w) = (Instant::now(), Timestamp::now());
        for i in 0..20u64 {
            let at = t + Duration::from_secs(601 * i);
            let e = created(c.correlate_at(event("web", "Failed", &format!("m{i}")), at, w));
            assert!(!e.message.unwrap_or_default().starts_with("(combined"));
        }
    }

    #[test]
    fn aggregation_is_per_object_and_reason() {
        let opts = CorrelatorOptions::default().max_events(3);
        let mut c = EventCorrelator::new(opts);
        let (t, w) = (Instant::now(), Timestamp::now());
        for i in 0..2 {
            created(c.correlate_at(event("a", "Failed", &format!("m{i}")), t, w));
            created(c.correlate_at(event("b", "Failed", &format!("m{i}")), t, w));
            created(c.correlate_at(event("a", "Other", &format!("m{i}")), t, w));
        }
        let agg = created(c.correlate_at(event("a", "Failed", "m2"), t, w));
        assert!(agg.message.unwrap().starts_with("(combined"));
    }

    #[test]
    fn spam_filter_drops_after_the_burst_and_refills_slowly() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        let (t, w) = (Instant::now(), Timestamp::now());
        // distinct reasons so neither aggregation nor counting hides anything
        for i in 0..25 {
            let r = c.correlate_at(event("web", &format!("R{i}"), "m"), t, w);
            assert!(matches!(r, Correlated::Create(_)), "event {i}");
        }
        assert_eq!(
            c.correlate_at(event("web", "R25", "m"), t, w),
            Correlated::Skip
        );
        assert!(matches!(
            c.correlate_at(event("other", "R0", "m"), t, w),
            Correlated::Create(_)
        ));
        let later = t + Duration::from_secs(301);
        assert!(matches!(
            c.correlate_at(event("web", "R26", "m"), later, w),
            Correlated::Create(_)
        ));
        assert_eq!(
            c.correlate_at(event("web", "R27", "m"), later, w),
            Correlated::Skip
        );
    }

    #[test]
    fn a_filtered_repeat_still_counts() {
        let opts = CorrelatorOptions::default().burst(1);
        let mut c = EventCorrelator::new(opts);
        let (t, w) = (Instant::now(), Timestamp::now());
        created(c.correlate_at(event("web", "R", "m"), t, w));
        assert_eq!(
            c.correlate_at(event("web", "R", "m"), t, w),
            Correlated::Skip
        );
        let (e, _) =
            patched(c.correlate_at(event("web", "R", "m"), t + Duration::from_secs(300), w));
        assert_eq!(
            e.count,
            Some(3),
            "the dropped occurrence is counted, as in client-go"
        );
    }

    proptest::proptest! {
        /// Whatever arrives at one instant: a patch always targets an event created before
        /// (with the count one above the last), and no object gets more than the burst.
        #[test]
        fn patches_follow_creates_and_the_burst_bounds_each_object(
            events in proptest::collection::vec((0u8..3, 0u8..3, 0u8..14), 1..120),
        ) {
            let mut c = EventCorrelator::new(CorrelatorOptions::default());
            let (t, w) = (Instant::now(), Timestamp::now());
            let mut counts: std::collections::HashMap<String, i32> = Default::default();
            let mut sent: std::collections::HashMap<String, usize> = Default::default();
            for (i, (object, reason, message)) in events.into_iter().enumerate() {
                let object = format!("o{object}");
                let mut e = event(&object, &format!("R{reason}"), &format!("m{message}"));
                // the recorder gives every event a unique name
                e.metadata.name = Some(format!("{object}.{i}"));
                match c.correlate_at(e, t, w) {
                    Correlated::Skip => {}
                    Correlated::Create(e) => {
                        let name = e.metadata.name.clone().unwrap();
                        proptest::prop_assert!(!counts.contains_key(&name));
                        proptest::prop_assert_eq!(e.count, Some(1));
                        counts.insert(name, 1);
                        *sent.entry(object).or_default() += 1;
                    }
                    Correlated::Patch { event, patch } => {
                        let name = event.metadata.name.clone().unwrap();
                        let last = counts.get(&name).copied();
                        proptest::prop_assert!(last.is_some(), "patch of an unknown event");
                        // filtered repeats still count, so the count may jump
                        proptest::prop_assert!(event.count > last);
                        proptest::prop_assert_eq!(&patch["count"], &serde_json::json!(event.count));
                        counts.insert(name, event.count.unwrap());
                        *sent.entry(object).or_default() += 1;
                    }
                }
            }
            for (object, n) in sent {
                proptest::prop_assert!(n <= 25, "{} events about {}", n, object);
            }
        }
    }
}
