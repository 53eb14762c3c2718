//! The event recorder writing core/v1 Events to the in-memory API server: what lands on the
//! server for single, repeated, similar and spammy events, and how failures are handled.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Event, EventSource, Pod, PodSpec};
use kube_core::{
    ObjectMeta,
    params::{DeleteParams, PostParams},
};
use kubegen::{
    client::{Client, ResourceClient},
    record::{BroadcasterConfig, ClientEventSink, EventBroadcaster, EventType},
};
use kubegen_testserver::{FailRule, Verb};
use record_support::{events, server_and_client, until};

mod record_support;

async fn pod(client: &Client, name: &str) -> Pod {
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(client.clone(), "default");
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "web".into(),
                image: Some("nginx".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    pods.create(&PostParams::default(), &pod).await.unwrap()
}

fn source() -> EventSource {
    EventSource {
        component: Some("record-test".into()),
        host: Some("node-1".into()),
    }
}

/// A broadcaster writing to the server, with quick retries.
fn broadcaster(client: &Client) -> EventBroadcaster {
    let b = EventBroadcaster::with_config(
        BroadcasterConfig::new().retry_interval(Duration::from_millis(20)),
    );
    b.start_recording_to_sink(ClientEventSink::new(client.clone()));
    b
}

#[tokio::test]
async fn an_event_is_written_with_type_reason_message_involved_object_and_source() {
    let (_server, client) = server_and_client().await;
    let web = pod(&client, "web").await;
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    recorder.event(&web, EventType::Normal, "Scheduled", "assigned to node-1");
    b.shutdown().await;

    let evs = events::<Event>(&client).await;
    assert_eq!(evs.len(), 1);
    let e = &evs[0];
    assert_eq!(e.type_.as_deref(), Some("Normal"));
    assert_eq!(e.reason.as_deref(), Some("Scheduled"));
    assert_eq!(e.message.as_deref(), Some("assigned to node-1"));
    assert_eq!(e.count, Some(1));
    assert_eq!(e.metadata.namespace.as_deref(), Some("default"));
    assert!(e.metadata.name.as_deref().unwrap().starts_with("web."));
    let o = &e.involved_object;
    assert_eq!(o.kind.as_deref(), Some("Pod"));
    assert_eq!(o.api_version.as_deref(), Some("v1"));
    assert_eq!(o.name.as_deref(), Some("web"));
    assert_eq!(o.namespace.as_deref(), Some("default"));
    assert_eq!(o.uid, web.metadata.uid);
    assert_eq!(e.source, Some(source()));
    assert_eq!(e.reporting_component.as_deref(), Some("record-test"));
    assert_eq!(e.reporting_instance.as_deref(), Some("node-1"));
    assert!(e.first_timestamp.is_some() && e.last_timestamp.is_some());
}

#[tokio::test]
async fn three_identical_events_are_one_event_with_count_3() {
    let (_server, client) = server_and_client().await;
    let web = pod(&client, "web").await;
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    for _ in 0..3 {
        recorder.event(&web, "Warning", "BackOff", "restarting failed container");
    }
    b.shutdown().await;

    let evs = events::<Event>(&client).await;
    assert_eq!(evs.len(), 1, "{evs:#?}");
    assert_eq!(evs[0].count, Some(3));
    assert_eq!(evs[0].type_.as_deref(), Some("Warning"));
    assert!(evs[0].last_timestamp >= evs[0].first_timestamp);
}

#[tokio::test]
async fn eleven_similar_events_are_aggregated_into_a_combined_message() {
    let (_server, client) = server_and_client().await;
    let web = pod(&client, "web").await;
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    for i in 0..11 {
        recorder.eventf(
            &web,
            EventType::Warning,
            "FailedMount",
            format_args!("volume {i} not found"),
        );
    }
    b.shutdown().await;

    let evs = events::<Event>(&client).await;
    // nine events as they came, then one aggregate written for the 10th and patched for the 11th
    assert_eq!(evs.len(), 10, "{evs:#?}");
    let combined: Vec<&Event> = evs
        .iter()
        .filter(|e| {
            e.message
                .as_deref()
                .unwrap()
                .starts_with("(combined from similar events): ")
        })
        .collect();
    assert_eq!(combined.len(), 1);
    assert_eq!(
        combined[0].message.as_deref(),
        Some("(combined from similar events): volume 10 not found")
    );
    assert_eq!(combined[0].count, Some(2));
    assert_eq!(combined[0].reason.as_deref(), Some("FailedMount"));
}

#[tokio::test]
async fn the_spam_filter_stops_a_source_after_a_burst_of_25_events_per_object() {
    let (_server, client) = server_and_client().await;
    let (noisy, quiet) = (pod(&client, "noisy").await, pod(&client, "quiet").await);
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    for i in 0..40 {
        // distinct reasons: neither aggregated nor counted, only the spam filter applies
        recorder.event(&noisy, EventType::Normal, &format!("Reason{i}"), "m");
    }
    recorder.event(&quiet, EventType::Normal, "Reason0", "m");
    b.shutdown().await;

    let evs = events::<Event>(&client).await;
    let about = |name: &str| {
        evs.iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .count()
    };
    assert_eq!(about("noisy"), 25);
    assert_eq!(about("quiet"), 1);
}

#[tokio::test]
async fn only_normal_and_warning_events_are_recorded() {
    let (_server, client) = server_and_client().await;
    let web = pod(&client, "web").await;
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    recorder.event(&web, "Error", "Bad", "not a valid type");
    recorder.event(&web, "normal", "Bad", "types are case-sensitive");
    recorder.event(&web, "Normal", "Good", "valid");
    recorder.event(&web, EventType::Warning, "AlsoGood", "valid");
    b.shutdown().await;

    let mut reasons: Vec<String> = events(&client)
        .await
        .into_iter()
        .map(|e: Event| e.reason.unwrap())
        .collect();
    reasons.sort();
    assert_eq!(reasons, ["AlsoGood", "Good"]);
}

#[tokio::test]
async fn a_transient_server_failure_is_retried_until_the_event_is_written() {
    let (server, client) = server_and_client().await;
    let web = pod(&client, "web").await;
    server.fail(
        FailRule::on(Verb::Create)
            .resource("events")
            .code(500)
            .times(3),
    );
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    recorder.event(&web, EventType::Normal, "Retried", "written on the 4th try");

    let evs = until::<Event>(&client, "event never written", |e| !e.is_empty()).await;
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].reason.as_deref(), Some("Retried"));
    b.shutdown().await;
}

#[tokio::test]
async fn a_rejected_event_is_not_retried() {
    let (server, client) = server_and_client().await;
    let web = pod(&client, "web").await;
    // a 403 is final: the broadcaster gives up at once, the next event goes through
    server.fail(FailRule::on(Verb::Create).resource("events").code(403));
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    recorder.event(&web, EventType::Normal, "Forbidden", "rejected");
    recorder.event(&web, EventType::Normal, "Allowed", "written");
    b.shutdown().await;

    let reasons: Vec<String> = events(&client)
        .await
        .into_iter()
        .map(|e: Event| e.reason.unwrap())
        .collect();
    assert_eq!(reasons, ["Allowed"]);
}

#[tokio::test]
async fn a_repeat_of_a_deleted_event_creates_it_again() {
    let (_server, client) = server_and_client().await;
    let web = pod(&client, "web").await;
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    let api: ResourceClient<Event> = ResourceClient::namespaced(client.clone(), "default");

    recorder.event(&web, EventType::Normal, "Pulled", "image pulled");
    let first = until::<Event>(&client, "event written", |e| !e.is_empty())
        .await
        .pop()
        .unwrap();
    let name = first.metadata.name.clone().unwrap();
    api.delete(&name, &DeleteParams::default()).await.unwrap();

    // the repeat is a patch of a missing event: the broadcaster creates it instead
    recorder.event(&web, EventType::Normal, "Pulled", "image pulled");
    b.shutdown().await;
    let evs = events::<Event>(&client).await;
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].metadata.name.as_deref(), Some(name.as_str()));
    assert_eq!(evs[0].count, Some(2));
}

#[tokio::test]
async fn annotated_events_carry_their_annotations_and_reference_objects_by_reference() {
    let (_server, client) = server_and_client().await;
    let web = pod(&client, "web").await;
    let b = broadcaster(&client);
    let recorder = b.new_recorder(source());
    let reference = kube_core::Resource::object_ref(&web, &());
    recorder.annotated_event(
        reference,
        [("team".to_owned(), "web".to_owned())].into(),
        EventType::Normal,
        "Annotated",
        "with annotations",
    );
    b.shutdown().await;

    let evs = events::<Event>(&client).await;
    assert_eq!(evs.len(), 1);
    let annotations = evs[0].metadata.annotations.clone().unwrap();
    assert_eq!(annotations.get("team").map(String::as_str), Some("web"));
    assert_eq!(evs[0].involved_object.name.as_deref(), Some("web"));
}
