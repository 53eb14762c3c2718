//! `events.k8s.io/v1` Events are core/v1 Events seen through another schema
//! (kube-apiserver's `pkg/apis/events/v1/conversion.go`: both groups are served from the
//! one `events` storage). A request for `events.k8s.io/v1` events is served on the core
//! resource (a [`super::Plan`] with [`super::Converter::Events`]), its objects renamed
//! field by field on the way in and out, so `kubectl events` (which lists core/v1) shows
//! what an `events.k8s.io` recorder wrote, and the other way round.

use serde_json::{Map, Value};

/// `apiVersion` of the events group's Event.
pub(crate) const EVENTS_V1: &str = "events.k8s.io/v1";
/// `apiVersion` of the core Event.
pub(crate) const CORE_V1: &str = "v1";

/// The renamed fields: (events.k8s.io/v1, core/v1). The others (metadata, eventTime,
/// series, reportingInstance, action, reason, related, type) have the same name in both.
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// `obj` (an Event in either version) in `desired_api_version` (`v1` or
/// `events.k8s.io/v1`); an object already in that version, or of another kind, is
/// returned as it is.
pub(crate) fn convert(mut obj: Value, desired_api_version: &str) -> Value {
    let current = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if current == desired_api_version {
        return obj;
    }
    let to_core = match desired_api_version {
        CORE_V1 => true,
        EVENTS_V1 => false,
        _ => return obj,
    };
    let Some(map) = obj.as_object_mut() else {
        return obj;
    };
    let mut out = Map::with_capacity(map.len());
    for (key, value) in std::mem::take(map) {
        let renamed = RENAMED.iter().find_map(|(events, core)| {
            if to_core {
                (key == *events).then_some(*core)
            } else {
                (key == *core).then_some(*events)
            }
        });
        out.insert(renamed.map_or(key, str::to_owned), value);
    }
    out.insert(
        "apiVersion".into(),
        Value::String(desired_api_version.to_owned()),
    );
    out.insert("kind".into(), Value::String("Event".into()));
    if to_core {
        // core/v1 requires involvedObject; an events.k8s.io Event without regarding
        // (which its validation refuses) still decodes as a core Event
        out.entry("involvedObject")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_renamed_both_ways_and_round_trip() {
        let events = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "default"},
            "eventTime": "2026-01-01T00:00:00.000001Z",
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000001Z"},
            "reportingController": "ctl", "reportingInstance": "ctl-host",
            "action": "Scale", "reason": "Scaled", "note": "to 3", "type": "Normal",
            "regarding": {"kind": "Deployment", "name": "web"},
            "related": {"kind": "ReplicaSet", "name": "web-1"},
            "deprecatedCount": 3,
        });
        let core = convert(events.clone(), CORE_V1);
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["message"], "to 3");
        assert_eq!(core["involvedObject"]["name"], "web");
        assert_eq!(core["reportingComponent"], "ctl");
        assert_eq!(core["count"], 3);
        assert_eq!(core["series"]["count"], 2);
        assert_eq!(core["related"]["name"], "web-1");
        assert!(core.get("note").is_none() && core.get("regarding").is_none());
        assert_eq!(convert(core, EVENTS_V1), events);
    }

    #[test]
    fn an_object_in_the_desired_version_is_untouched() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "message": "m"});
        assert_eq!(convert(core.clone(), CORE_V1), core);
    }
}
