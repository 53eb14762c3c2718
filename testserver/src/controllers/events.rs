//! The events the cluster's controllers write (`ScalingReplicaSet`, `SuccessfulCreate`,
//! `Scheduled`, `FailedScheduling`, ...), as core/v1 Events that `kubectl describe` and
//! `kubectl events` show.
//!
//! client-go's recorder (`kubegen::record`, which operators use) stamps events with the
//! wall clock; the cluster's events are stamped with the server's clock instead
//! (`crate::clock`), so a test on a paused clock sees them at the same virtual times as
//! the objects they describe, and two runs write the same events. Names follow client-go
//! (`<object>.<hex nanoseconds>`), with a sequence number added to the nanoseconds so
//! events written at one instant of a paused clock stay distinct. Events are not
//! aggregated or rate limited; a failed write is logged and dropped, as client-go drops
//! them.

use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::{
    api::core::v1::{Event, EventSource, ObjectReference},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use kube_core::Resource;
use kubegen::client::{Client, ResourceClient, params::PostParams};

/// Writes Events for one component of the cluster.
pub(crate) struct Recorder {
    client: Client,
    component: &'static str,
    sequence: AtomicU64,
}

/// An event's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    /// Something went as it should.
    Normal,
    /// Something the user may need to act on.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl Recorder {
    /// A recorder writing as `component` (`deployment-controller`, `default-scheduler`,
    /// ...).
    pub(crate) fn new(client: Client, component: &'static str) -> Self {
        Recorder {
            client,
            component,
            sequence: AtomicU64::new(0),
        }
    }

    /// Writes an event about `target`.
    pub(crate) async fn record<K>(
        &self,
        target: &K,
        event_type: EventType,
        reason: &str,
        message: impl Into<String>,
    ) where
        K: Resource<DynamicType = ()>,
    {
        let mut event = self.event(target, event_type, reason, message.into());
        let namespace = event.metadata.namespace.clone().unwrap_or_default();
        let events: ResourceClient<Event> =
            ResourceClient::namespaced(self.client.clone(), &namespace);
        // Another recorder wrote about the same object at the same instant: a fresh name.
        for _ in 0..8 {
            match events.create(&PostParams::default(), &event).await {
                Err(e) if e.is_already_exists() => {
                    event.metadata.name = self
                        .event(target, event_type, reason, String::new())
                        .metadata
                        .name;
                }
                Err(err) => {
                    tracing::debug!(%err, reason, component = self.component, "dropping an event");
                    return;
                }
                Ok(_) => return,
            }
        }
    }

    /// The Event object (`record.makeEvent`): in the target's namespace (`default` for a
    /// cluster-scoped target).
    fn event<K>(&self, target: &K, event_type: EventType, reason: &str, message: String) -> Event
    where
        K: Resource<DynamicType = ()>,
    {
        let meta = target.meta();
        let name = meta.name.clone().unwrap_or_default();
        let namespace = meta
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        let now = crate::clock::now();
        let nanos = u64::try_from(now.as_nanosecond()).unwrap_or_default();
        let unique = nanos.wrapping_add(self.sequence.fetch_add(1, Ordering::Relaxed));
        Event {
            metadata: ObjectMeta {
                name: Some(format!("{name}.{unique:x}")),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            involved_object: ObjectReference {
                api_version: Some(K::api_version(&()).into_owned()),
                kind: Some(K::kind(&()).into_owned()),
                name: Some(name),
                namespace: meta.namespace.clone(),
                uid: meta.uid.clone(),
                resource_version: meta.resource_version.clone(),
                field_path: None,
            },
            reason: Some(reason.to_string()),
            message: Some(message),
            source: Some(EventSource {
                component: Some(self.component.to_string()),
                host: None,
            }),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: Some(1),
            type_: Some(event_type.as_str().to_string()),
            reporting_component: Some(self.component.to_string()),
            reporting_instance: Some(self.component.to_string()),
            ..Event::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;

    use super::*;

    #[tokio::test]
    async fn events_name_and_reference_their_object() {
        let recorder = Recorder::new(
            Client::new(crate::InProcess::new()),
            "deployment-controller",
        );
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "uid": "u-1"},
        }))
        .unwrap_or_default();
        let a = recorder.event(&d, EventType::Normal, "ScalingReplicaSet", "m".into());
        let b = recorder.event(&d, EventType::Normal, "ScalingReplicaSet", "m".into());
        assert_ne!(a.metadata.name, b.metadata.name);
        assert!(
            a.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("web."))
        );
        assert_eq!(a.metadata.namespace.as_deref(), Some("shop"));
        let r = &a.involved_object;
        assert_eq!(
            (
                r.kind.as_deref(),
                r.api_version.as_deref(),
                r.uid.as_deref()
            ),
            (Some("Deployment"), Some("apps/v1"), Some("u-1"))
        );
        assert_eq!(
            a.source.and_then(|s| s.component).as_deref(),
            Some("deployment-controller")
        );
    }
}
