//! The `events.k8s.io/v1` recorder (`kubegen::record::events`) writing to the in-memory API
//! server: the fields of a written Event, repeats counted as one Event's series (created,
//! patched, refreshed, finished, flushed at shutdown), the spam filter shared with the
//! core/v1 recorder, retries, the manager's recorder, and `kubectl events` showing them.
//! Ports the behaviours of client-go's `tools/events/eventseries_test.go`
//! (`TestEventSeriesf`, `TestFinishSeries`, `TestRefreshExistingEventSeries`) against a
//! server instead of a fake sink.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{process::Command, time::Duration};

use k8s_openapi::api::{
    core::v1::{ConfigMap, Event as CoreEvent},
    events::v1::Event,
};
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    client::{Client, ResourceClient},
    manager::Manager,
    record::{
        BroadcasterConfig, CorrelatorOptions, EventType,
        events::{ClientEventSink, EventBroadcaster, SeriesConfig},
    },
};
use kubegen_testserver::{FailRule, Verb};
use record_support::{events, server_and_client, until};

mod record_support;

/// A ConfigMap to report about (any object will do).
async fn object(client: &Client, name: &str) -> ConfigMap {
    let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "default");
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    api.create(&PostParams::default(), &cm).await.unwrap()
}

/// A broadcaster writing to the server with quick retries and `series` timing.
fn broadcaster(
    client: &Client,
    config: BroadcasterConfig,
    series: SeriesConfig,
) -> EventBroadcaster {
    let b = EventBroadcaster::with_config(config.retry_interval(Duration::from_millis(20)), series);
    b.start_recording_to_sink(ClientEventSink::new(client.clone()));
    b
}

fn quick(client: &Client) -> EventBroadcaster {
    broadcaster(client, BroadcasterConfig::new(), SeriesConfig::new())
}

fn series_count(e: &Event) -> Option<i32> {
    e.series.as_ref().map(|s| s.count)
}

#[tokio::test]
async fn an_event_carries_regarding_related_action_note_type_and_reporting_fields() {
    let (_server, client) = server_and_client().await;
    let web = object(&client, "web").await;
    let node = object(&client, "node-config").await;
    let b = quick(&client);
    let recorder = b.new_recorder_with_instance("example.com/ctl", "ctl-0");
    recorder.event(
        &web,
        Some((&node).into()),
        EventType::Warning,
        "Invalid",
        "Validate",
        format_args!("{} keys missing", 2),
    );
    let evs = until::<Event>(&client, "event written", |e| !e.is_empty()).await;
    assert_eq!(evs.len(), 1);
    let e = &evs[0];
    assert!(e.metadata.name.as_deref().unwrap().starts_with("web."));
    assert_eq!(e.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(e.reporting_controller.as_deref(), Some("example.com/ctl"));
    assert_eq!(e.reporting_instance.as_deref(), Some("ctl-0"));
    assert_eq!(e.type_.as_deref(), Some("Warning"));
    assert_eq!(e.reason.as_deref(), Some("Invalid"));
    assert_eq!(e.action.as_deref(), Some("Validate"));
    assert_eq!(e.note.as_deref(), Some("2 keys missing"));
    let regarding = e.regarding.as_ref().unwrap();
    assert_eq!(regarding.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(regarding.name.as_deref(), Some("web"));
    assert_eq!(regarding.uid, web.metadata.uid);
    assert_eq!(
        e.related.as_ref().unwrap().name.as_deref(),
        Some("node-config")
    );
    assert!(e.event_time.is_some(), "eventTime is set");
    assert!(e.series.is_none());
    // the same Event, seen through core/v1 (one storage, as in kube-apiserver)
    let core: ResourceClient<CoreEvent> = ResourceClient::namespaced(client.clone(), "default");
    let as_core = core.get(e.metadata.name.as_deref().unwrap()).await.unwrap();
    assert_eq!(as_core.message.as_deref(), Some("2 keys missing"));
    assert_eq!(as_core.involved_object.name.as_deref(), Some("web"));
    assert_eq!(
        as_core.reporting_component.as_deref(),
        Some("example.com/ctl")
    );
    b.shutdown().await;
}

/// `TestEventSeriesf`: the same event twice is one Event with `series.count` 2; a third
/// counts in memory and reaches the server at shutdown.
#[tokio::test]
async fn the_same_event_twice_is_one_event_with_a_series_of_two() {
    let (_server, client) = server_and_client().await;
    let web = object(&client, "web").await;
    let b = quick(&client);
    let recorder = b.new_recorder("example.com/ctl");
    assert!(
        recorder
            .reporting_instance()
            .starts_with("example.com/ctl-")
    );
    let emit = || recorder.event(&web, None, EventType::Normal, "Synced", "Sync", "in sync");
    emit();
    until::<Event>(&client, "first written", |e| e.len() == 1).await;
    emit();
    let evs = until::<Event>(&client, "series of 2", |e| {
        e.len() == 1 && series_count(&e[0]) == Some(2)
    })
    .await;
    let first_name = evs[0].metadata.name.clone();
    assert!(
        evs[0].series.as_ref().unwrap().last_observed_time.0
            >= evs[0].event_time.as_ref().unwrap().0
    );
    // another reason is another Event
    recorder.event(&web, None, EventType::Normal, "Other", "Sync", "else");
    emit();
    until::<Event>(&client, "second event", |e| e.len() == 2).await;
    b.shutdown().await;
    let evs = events::<Event>(&client).await;
    let synced = evs.iter().find(|e| e.metadata.name == first_name).unwrap();
    assert_eq!(series_count(synced), Some(3), "flushed at shutdown");
    assert_eq!(evs.len(), 2);
}

/// `TestRefreshExistingEventSeries` and `TestFinishSeries`: series are written again on
/// the refresh period; a series without repeats for the finish time is written one last
/// time and forgotten, so the next occurrence is a new Event.
#[tokio::test]
async fn series_are_refreshed_then_finished() {
    let (_server, client) = server_and_client().await;
    let web = object(&client, "web").await;
    let b = broadcaster(
        &client,
        BroadcasterConfig::new(),
        SeriesConfig::new()
            .refresh_time(Duration::from_millis(300))
            .finish_time(Duration::from_secs(2)),
    );
    let recorder = b.new_recorder("example.com/ctl");
    for _ in 0..5 {
        recorder.event(&web, None, EventType::Normal, "Synced", "Sync", "in sync");
    }
    let evs = until::<Event>(&client, "refreshed to 5", |e| {
        e.len() == 1 && series_count(&e[0]) == Some(5)
    })
    .await;
    assert_eq!(evs.len(), 1);
    // no repeats for the finish time: forgotten; the next one is a new Event
    tokio::time::sleep(Duration::from_millis(4500)).await;
    recorder.event(&web, None, EventType::Normal, "Synced", "Sync", "in sync");
    let evs = until::<Event>(&client, "a new event after the series finished", |e| {
        e.len() == 2
    })
    .await;
    assert_eq!(evs.iter().filter(|e| e.series.is_none()).count(), 1);
    b.shutdown().await;
}

/// The core/v1 correlator's spam filter, shared: a burst per reporting controller and
/// object, then nothing until tokens refill; another object has its own bucket.
#[tokio::test]
async fn the_spam_filter_drops_events_beyond_the_burst() {
    let (_server, client) = server_and_client().await;
    let web = object(&client, "web").await;
    let db = object(&client, "db").await;
    let b = broadcaster(
        &client,
        BroadcasterConfig::new().correlator(CorrelatorOptions::new().burst(3).qps(0.0)),
        SeriesConfig::new(),
    );
    let recorder = b.new_recorder("example.com/ctl");
    for i in 0..6 {
        recorder.event(
            &web,
            None,
            EventType::Normal,
            &format!("Reason{i}"),
            "Sync",
            "spam",
        );
    }
    recorder.event(&db, None, EventType::Normal, "Fine", "Sync", "own bucket");
    b.shutdown().await;
    let evs = events::<Event>(&client).await;
    let about = |name: &str| {
        evs.iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .count()
    };
    assert_eq!(about("web"), 3, "{evs:#?}");
    assert_eq!(about("db"), 1);
}

#[tokio::test]
async fn a_transient_failure_is_retried_until_the_event_is_written() {
    let (server, client) = server_and_client().await;
    let web = object(&client, "web").await;
    server.fail(
        FailRule::on(Verb::Create)
            .resource("events")
            .code(503)
            .times(3),
    );
    let b = quick(&client);
    b.new_recorder("example.com/ctl").event(
        &web,
        None,
        EventType::Normal,
        "Retried",
        "Sync",
        "4th try",
    );
    until::<Event>(&client, "written after retries", |e| e.len() == 1).await;
    b.shutdown().await;
}

/// The manager hands out the `events.k8s.io/v1` recorder next to the core/v1 one.
#[tokio::test]
async fn the_manager_hands_out_an_events_recorder() {
    let (_server, client) = server_and_client().await;
    let web = object(&client, "web").await;
    let mut manager = Manager::builder(client.clone()).build().unwrap();
    let recorder = manager.events_recorder("example.com/operator");
    recorder.event(
        &web,
        None,
        EventType::Normal,
        "Reconciled",
        "Reconcile",
        "done",
    );
    let legacy = manager.event_recorder("operator");
    legacy.event(&web, EventType::Normal, "Legacy", "core/v1");
    let evs = until::<Event>(&client, "both recorders wrote", |e| e.len() == 2).await;
    let reconciled = evs
        .iter()
        .find(|e| e.reason.as_deref() == Some("Reconciled"))
        .unwrap();
    assert_eq!(
        reconciled.reporting_controller.as_deref(),
        Some("example.com/operator")
    );
    assert_eq!(reconciled.action.as_deref(), Some("Reconcile"));
}

/// `kubectl events` (which lists core/v1 Events) shows what the `events.k8s.io/v1`
/// recorder wrote. kubectl is part of the test environment: this fails without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_events_shows_the_events() {
    let (server, client) = server_and_client().await;
    let web = object(&client, "web").await;
    let b = quick(&client);
    let recorder = b.new_recorder("example.com/ctl");
    recorder.event(
        &web,
        None,
        EventType::Warning,
        "BadConfig",
        "Validate",
        "key x is missing",
    );
    recorder.event(
        &web,
        None,
        EventType::Warning,
        "BadConfig",
        "Validate",
        "key x is missing",
    );
    until::<Event>(&client, "series of 2", |e| {
        e.len() == 1 && series_count(&e[0]) == Some(2)
    })
    .await;
    b.shutdown().await;
    let dir = std::env::temp_dir().join(format!("kubegen-events-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let output = tokio::task::spawn_blocking(move || {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--cache-dir")
            .arg(kubeconfig.with_file_name("cache"))
            .args(["events", "-n", "default"])
            .output()
    })
    .await
    .unwrap()
    .expect("kubectl is installed");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("BadConfig"), "{stdout}");
    assert!(stdout.to_lowercase().contains("configmap/web"), "{stdout}");
    assert!(stdout.contains("key x is missing"), "{stdout}");
    assert!(stdout.contains("Warning"), "{stdout}");
}
