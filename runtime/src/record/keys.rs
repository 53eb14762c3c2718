//! The keys the correlator groups events by (client-go's `getEventKey`, `getSpamKey` and
//! `EventAggregatorByReasonFunc`), and the names given to new events.

use std::sync::atomic::{AtomicI64, Ordering};

use k8s_openapi::{api::core::v1::Event, jiff::Timestamp};

fn s(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("")
}

fn source(event: &Event) -> (&str, &str) {
    event
        .source
        .as_ref()
        .map_or(("", ""), |src| (s(&src.component), s(&src.host)))
}

/// Joins fields with a separator no Kubernetes name, kind or reason contains, so two
/// different events cannot collide the way a plain concatenation could.
pub(crate) fn join(parts: &[&str]) -> String {
    parts.join("\u{1f}")
}

/// The identity of an event: source, involved object, type, reason and message. Identical
/// events share it and are counted instead of written again.
pub fn event_key(event: &Event) -> String {
    let (component, host) = source(event);
    let o = &event.involved_object;
    join(&[
        component,
        host,
        s(&o.kind),
        s(&o.namespace),
        s(&o.name),
        s(&o.field_path),
        s(&o.uid),
        s(&o.api_version),
        s(&event.type_),
        s(&event.reason),
        s(&event.message),
    ])
}

/// The spam filter's key: source and involved object. All events a source reports about one
/// object share one token bucket.
pub fn spam_key(event: &Event) -> String {
    let (component, host) = source(event);
    let o = &event.involved_object;
    join(&[
        component,
        host,
        s(&o.kind),
        s(&o.namespace),
        s(&o.name),
        s(&o.uid),
        s(&o.api_version),
    ])
}

/// client-go's `EventAggregatorByReasonFunc`: events that differ only in their message share
/// the aggregate key (first); the message is the local key (second).
pub fn aggregate_by_reason(event: &Event) -> (String, String) {
    let (component, host) = source(event);
    let o = &event.involved_object;
    let key = join(&[
        component,
        host,
        s(&o.kind),
        s(&o.namespace),
        s(&o.name),
        s(&o.uid),
        s(&o.api_version),
        s(&event.type_),
        s(&event.reason),
        s(&event.reporting_component),
        s(&event.reporting_instance),
    ]);
    (key, s(&event.message).to_owned())
}

/// client-go's `EventAggregatorByReasonMessageFunc`: the message of an aggregate event.
pub fn aggregate_message_by_reason(event: &Event) -> String {
    format!("(combined from similar events): {}", s(&event.message))
}

/// A fresh event name, `<object name>.<hex nanoseconds>` as client-go makes them; the
/// nanoseconds never repeat within the process, so two events made in the same instant
/// still get distinct names.
pub(crate) fn event_name(object_name: &str, at: Timestamp) -> String {
    static LAST: AtomicI64 = AtomicI64::new(0);
    let wanted = i64::try_from(at.as_nanosecond()).unwrap_or(i64::MAX);
    let mut prev = LAST.load(Ordering::Relaxed);
    let nanos = loop {
        let next = wanted.max(prev.saturating_add(1));
        match LAST.compare_exchange_weak(prev, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break next,
            Err(seen) => prev = seen,
        }
    };
    format!("{object_name}.{nanos:x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{EventSource, ObjectReference};

    fn ev(message: &str) -> Event {
        Event {
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                namespace: Some("default".into()),
                name: Some("web".into()),
                ..ObjectReference::default()
            },
            source: Some(EventSource {
                component: Some("ctl".into()),
                host: None,
            }),
            type_: Some("Normal".into()),
            reason: Some("Started".into()),
            message: Some(message.into()),
            ..Event::default()
        }
    }

    #[test]
    fn messages_split_event_keys_but_not_aggregate_or_spam_keys() {
        let (a, b) = (ev("one"), ev("two"));
        assert_ne!(event_key(&a), event_key(&b));
        assert_eq!(aggregate_by_reason(&a).0, aggregate_by_reason(&b).0);
        assert_eq!(aggregate_by_reason(&a).1, "one");
        assert_eq!(spam_key(&a), spam_key(&b));
        let mut other_reason = ev("one");
        other_reason.reason = Some("Killed".into());
        assert_ne!(
            aggregate_by_reason(&a).0,
            aggregate_by_reason(&other_reason).0
        );
        assert_eq!(spam_key(&a), spam_key(&other_reason));
    }

    #[test]
    fn fields_cannot_bleed_into_each_other() {
        let mut a = ev("m");
        let mut b = ev("m");
        a.involved_object.name = Some("ab".into());
        a.involved_object.namespace = Some("c".into());
        b.involved_object.name = Some("b".into());
        b.involved_object.namespace = Some("ca".into());
        assert_ne!(spam_key(&a), spam_key(&b));
    }

    #[test]
    fn event_names_are_unique_even_in_the_same_instant() {
        let t = Timestamp::now();
        let a = event_name("web", t);
        let b = event_name("web", t);
        assert_ne!(a, b);
        assert!(a.starts_with("web."));
    }
}
