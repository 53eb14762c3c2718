//! Watch reactors of the fake (`kubegen_testserver::fake::Fake`, client-go's
//! `testing/fake.go` `PrependWatchReactor` / `AddWatchReactor` / `InvokesWatch` and
//! `watch.FakeWatcher`): a reactor answers a watch with a `FakeWatcher` the test drives,
//! prepended reactors run before added ones, a reactor that does not handle the watch
//! (or watches another resource) falls through to the server's own watch (client-go's
//! default tracker watch reactor in `testing/fixture.go`), a reactor may fail the watch,
//! and an informer runs on a driven watch.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use futures::{StreamExt, stream::BoxStream};
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{
    ObjectMeta,
    params::{PostParams, WatchParams},
    watch::WatchEvent,
};
use kubegen::{
    client::{Error, ResourceClient},
    informers::SharedInformerFactory,
};
use kubegen_testserver::{
    ApiError,
    fake::{Fake, FakeWatcher},
};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

fn cm(name: &str, rv: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            resource_version: Some(rv.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn config_maps(fake: &Fake) -> ResourceClient<ConfigMap> {
    ResourceClient::namespaced(fake.client(), "default")
}

type Events = BoxStream<'static, Result<WatchEvent<ConfigMap>, Error>>;

async fn watch(fake: &Fake) -> Events {
    config_maps(fake)
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed()
}

/// The next event's type and object name (10 s at most).
async fn next(events: &mut Events) -> Option<(&'static str, String)> {
    let item = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event or the end of the watch")?;
    Some(match item.unwrap() {
        WatchEvent::Added(o) => ("ADDED", o.metadata.name.unwrap()),
        WatchEvent::Modified(o) => ("MODIFIED", o.metadata.name.unwrap()),
        WatchEvent::Deleted(o) => ("DELETED", o.metadata.name.unwrap()),
        WatchEvent::Bookmark(b) => ("BOOKMARK", b.metadata.resource_version),
        WatchEvent::Error(e) => ("ERROR", e.reason),
    })
}

/// `PrependWatchReactor` + `FakeWatcher.Add/Modify/Delete/Stop`: the client sees the
/// events the test sends, in order, and the end of the watch at the stop; events sent
/// before the client connected wait for it.
#[tokio::test]
async fn a_watch_reactor_answers_with_a_fake_watcher_the_test_drives() {
    let fake = Fake::new();
    let watcher = FakeWatcher::new();
    let answer = watcher.clone();
    fake.prepend_watch_reactor("configmaps", move |action| {
        assert_eq!(action.request.namespace, "default");
        Some(Ok(answer.clone()))
    });
    watcher.add(&cm("early", "1"));
    let mut events = watch(&fake).await;
    assert_eq!(watcher.open_watches(), 1);
    watcher.modify(&cm("early", "2"));
    watcher.delete(&cm("early", "3"));
    watcher.bookmark("v1", "ConfigMap", "4");
    watcher.error(&ApiError::gone("too old resource version: 1 (4)"));
    assert_eq!(next(&mut events).await, Some(("ADDED", "early".into())));
    assert_eq!(next(&mut events).await, Some(("MODIFIED", "early".into())));
    assert_eq!(next(&mut events).await, Some(("DELETED", "early".into())));
    assert_eq!(next(&mut events).await, Some(("BOOKMARK", "4".into())));
    assert_eq!(next(&mut events).await, Some(("ERROR", "Gone".into())));
    watcher.stop();
    assert!(watcher.is_stopped());
    assert_eq!(next(&mut events).await, None, "the stop ends the watch");
    watcher.add(&cm("late", "5"));
    assert!(
        fake.actions()
            .iter()
            .any(|a| a.matches("watch", "configmaps")),
        "the watch is in the action log"
    );
}

/// `InvokesWatch` walks the chain in order: prepended reactors first, then the added
/// ones in the order they were added; the first that handles the watch answers it.
#[tokio::test]
async fn prepended_watch_reactors_run_before_added_ones() {
    let fake = Fake::new();
    let order = Arc::new(Mutex::new(Vec::new()));
    let watcher = FakeWatcher::new();
    let log = |name: &'static str, answer: Option<FakeWatcher>| {
        let order = order.clone();
        move |_: &kubegen_testserver::Action| {
            order.lock().push(name);
            answer.clone().map(Ok)
        }
    };
    fake.add_watch_reactor("*", log("added first", None));
    fake.add_watch_reactor("configmaps", log("added second", Some(watcher.clone())));
    fake.add_watch_reactor("*", log("never reached", Some(FakeWatcher::new())));
    fake.prepend_watch_reactor("*", log("prepended first", None));
    fake.prepend_watch_reactor("configmaps", log("prepended last", None));
    let mut events = watch(&fake).await;
    assert_eq!(
        *order.lock(),
        [
            "prepended last",
            "prepended first",
            "added first",
            "added second"
        ]
    );
    watcher.add(&cm("from-added-second", "1"));
    assert_eq!(
        next(&mut events).await,
        Some(("ADDED", "from-added-second".into()))
    );
}

/// A reactor that does not handle the watch (`None`), and a reactor for another
/// resource, leave it to the server's watch (client-go's default watch reactor over
/// the tracker).
#[tokio::test]
async fn a_watch_reactor_that_does_not_handle_falls_through_to_the_server_watch() {
    let fake = Fake::new();
    let asked = Arc::new(AtomicUsize::new(0));
    let other = Arc::new(AtomicUsize::new(0));
    fake.prepend_watch_reactor("configmaps", {
        let asked = asked.clone();
        move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            None
        }
    });
    fake.prepend_watch_reactor("secrets", {
        let other = other.clone();
        move |_| {
            other.fetch_add(1, Ordering::SeqCst);
            Some(Ok(FakeWatcher::new()))
        }
    });
    let mut events = watch(&fake).await;
    config_maps(&fake)
        .create(&PostParams::default(), &cm("real", ""))
        .await
        .unwrap();
    assert_eq!(next(&mut events).await, Some(("ADDED", "real".into())));
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(other.load(Ordering::SeqCst), 0);
}

/// A reactor may fail the watch: the client gets the error's Status.
#[tokio::test]
async fn a_watch_reactor_can_fail_the_watch() {
    let fake = Fake::new();
    fake.prepend_watch_reactor("*", |_| Some(Err(ApiError::forbidden("no watching"))));
    let err = config_maps(&fake)
        .watch(&WatchParams::default(), "0")
        .await
        .err()
        .unwrap();
    match err {
        Error::Api(status) => assert_eq!(status.code, 403),
        other => panic!("unexpected error {other:?}"),
    }
    // reactors of other verbs are untouched
    assert!(
        config_maps(&fake)
            .get("missing")
            .await
            .unwrap_err()
            .is_not_found()
    );
}

/// An informer on a driven watch: its streaming list ends at the initial-events-end
/// bookmark, then the test's changes reach the lister.
#[tokio::test]
async fn an_informer_runs_on_a_fake_watcher() {
    let fake = Fake::new();
    let watcher = FakeWatcher::new();
    let answer = watcher.clone();
    fake.prepend_watch_reactor("configmaps", move |_| Some(Ok(answer.clone())));
    watcher.add(&cm("seeded", "10"));
    watcher.initial_events_end("v1", "ConfigMap", "10");
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let informer = factory.informer_for::<ConfigMap>();
    factory.start();
    let stop = CancellationToken::new();
    tokio::time::timeout(Duration::from_secs(10), factory.wait_for_cache_sync(&stop))
        .await
        .unwrap();
    assert!(informer.has_synced());
    let lister = factory.lister_for::<ConfigMap>();
    assert!(lister.namespaced("default").get("seeded").is_ok());
    watcher.add(&cm("driven", "11"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while lister.namespaced("default").get("driven").is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the added object reaches the lister"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    factory.shutdown().await;
}
