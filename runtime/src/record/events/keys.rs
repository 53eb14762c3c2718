//! The keys the `events.k8s.io/v1` broadcaster groups events by: the isomorphic key a
//! series is counted under (client-go's `tools/events` `getKey`) and the spam filter's
//! key.

use k8s_openapi::api::{core::v1::ObjectReference, events::v1::Event};

use crate::record::keys::join;

fn s(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("")
}

/// Every field of a reference, in a fixed order.
fn reference(r: Option<&ObjectReference>) -> [&str; 7] {
    r.map_or([""; 7], |r| {
        [
            s(&r.kind),
            s(&r.namespace),
            s(&r.name),
            s(&r.uid),
            s(&r.api_version),
            s(&r.resource_version),
            s(&r.field_path),
        ]
    })
}

/// The identity of a series (client-go's `getKey`): type, action, reason, reporting
/// controller and instance, regarding and related. Two events sharing it are the same
/// thing happening again; the note is not part of it, so a repeat with another note
/// counts in the first event's series, as in client-go.
pub fn isomorphic_key(event: &Event) -> String {
    let mut parts = vec![
        s(&event.type_),
        s(&event.action),
        s(&event.reason),
        s(&event.reporting_controller),
        s(&event.reporting_instance),
    ];
    parts.extend(reference(event.regarding.as_ref()));
    parts.extend(reference(event.related.as_ref()));
    join(&parts)
}

/// The spam filter's key: reporting controller and instance, and the object the event is
/// about (the core/v1 filter's source + involved object). All events a controller
/// instance reports about one object share one token bucket.
pub fn spam_key(event: &Event) -> String {
    let r = reference(event.regarding.as_ref());
    join(&[
        s(&event.reporting_controller),
        s(&event.reporting_instance),
        r[0],
        r[1],
        r[2],
        r[3],
        r[4],
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(reason: &str, note: &str, related: Option<&str>) -> Event {
        Event {
            reporting_controller: Some("ctl".into()),
            reporting_instance: Some("ctl-host".into()),
            type_: Some("Normal".into()),
            action: Some("Sync".into()),
            reason: Some(reason.into()),
            note: Some(note.into()),
            regarding: Some(ObjectReference {
                kind: Some("Pod".into()),
                name: Some("web".into()),
                ..ObjectReference::default()
            }),
            related: related.map(|name| ObjectReference {
                kind: Some("Node".into()),
                name: Some(name.into()),
                ..ObjectReference::default()
            }),
            ..Event::default()
        }
    }

    /// client-go tools/events event_broadcaster.go `getKey`: the note is not in the key,
    /// the related object is.
    #[test]
    fn the_key_ignores_the_note_but_not_reason_or_related() {
        let a = ev("Started", "one", None);
        assert_eq!(
            isomorphic_key(&a),
            isomorphic_key(&ev("Started", "two", None))
        );
        assert_ne!(
            isomorphic_key(&a),
            isomorphic_key(&ev("Killed", "one", None))
        );
        assert_ne!(
            isomorphic_key(&a),
            isomorphic_key(&ev("Started", "one", Some("node-1")))
        );
        assert_eq!(spam_key(&a), spam_key(&ev("Killed", "x", Some("node-1"))));
    }
}
