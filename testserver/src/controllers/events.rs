//! Events the workload controllers record about their objects (client-go's
//! `record.EventRecorder.Eventf`, as kube-controller-manager's controllers call it): a
//! core/v1 Event named `<object>.<hex nanoseconds>`, timestamped on the server's clock
//! (so a paused clock stamps it with virtual time), written through the cluster's client.
//! Recording never fails a reconcile: an Event that cannot be written is logged.

use k8s_openapi::{
    api::core::v1::{Event, EventSource, ObjectReference},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use kubegen::client::{Client, ResourceClient, params::PostParams};

/// An Event's type: `Normal` or `Warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Something expected happened.
    Normal,
    /// Something the user should look at.
    Warning,
}

/// Records an Event about the object `involved` (its kind, API version, namespace, name and
/// uid must be set) from `component`.
pub(crate) async fn record(
    client: &Client,
    component: &str,
    involved: ObjectReference,
    kind: Kind,
    reason: &str,
    message: String,
) {
    let now = crate::clock::now();
    let namespace = involved
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "default".into());
    let object = involved.name.clone().unwrap_or_default();
    let mut event = Event {
        metadata: ObjectMeta {
            name: Some(format!("{object}.{:x}", now.as_nanosecond())),
            namespace: Some(namespace.clone()),
            ..ObjectMeta::default()
        },
        involved_object: involved,
        reason: Some(reason.into()),
        message: Some(message),
        type_: Some(
            match kind {
                Kind::Normal => "Normal",
                Kind::Warning => "Warning",
            }
            .into(),
        ),
        source: Some(EventSource {
            component: Some(component.into()),
            host: None,
        }),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        count: Some(1),
        reporting_component: Some(component.into()),
        reporting_instance: Some(component.into()),
        ..Event::default()
    };
    let events: ResourceClient<Event> = ResourceClient::namespaced(client.clone(), &namespace);
    // Two events about one object at one instant of a paused clock: the next nanosecond.
    for bump in 1..=8 {
        match events.create(&PostParams::default(), &event).await {
            Err(err) if err.is_already_exists() => {
                let nanos = now.as_nanosecond() + bump;
                event.metadata.name = Some(format!("{object}.{nanos:x}"));
            }
            Err(err) => {
                tracing::debug!(%err, reason, "event not recorded");
                return;
            }
            Ok(_) => return,
        }
    }
}
