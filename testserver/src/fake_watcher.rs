//! [`FakeWatcher`] (client-go's `watch.FakeWatcher` / `RaceFreeFakeWatcher`): a watch a
//! test drives by hand, what a watch reactor answers a watch request with
//! ([`InProcess::prepend_watch_reactor`](crate::InProcess::prepend_watch_reactor)).
//!
//! The client sees an ordinary watch response: one JSON event per line (`ADDED`,
//! `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`) as the test sends them, ending when the
//! test calls [`FakeWatcher::stop`]. Events sent while no watch is open wait for the next
//! one (so a test may send before the client has connected); each event goes to every
//! watch open when it is sent.

use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::{endpoints::watch::event_line, errors::ApiError};

#[derive(Default)]
struct State {
    open: Vec<mpsc::UnboundedSender<Bytes>>,
    pending: Vec<Bytes>,
    stopped: bool,
}

/// A hand-driven watch. Cheap to clone; clones drive the same watch.
#[derive(Clone, Default)]
pub struct FakeWatcher {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for FakeWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("FakeWatcher")
            .field("open", &state.open.len())
            .field("pending", &state.pending.len())
            .field("stopped", &state.stopped)
            .finish()
    }
}

impl FakeWatcher {
    /// A watcher with no watch open and nothing sent.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends an `ADDED` event for `obj` (client-go's `FakeWatcher.Add`).
    pub fn add(&self, obj: &impl Serialize) {
        self.action("ADDED", obj);
    }

    /// Sends a `MODIFIED` event for `obj`.
    pub fn modify(&self, obj: &impl Serialize) {
        self.action("MODIFIED", obj);
    }

    /// Sends a `DELETED` event for `obj`.
    pub fn delete(&self, obj: &impl Serialize) {
        self.action("DELETED", obj);
    }

    /// Sends a `BOOKMARK` event at `resource_version` for objects of `api_version` and
    /// `kind`.
    pub fn bookmark(&self, api_version: &str, kind: &str, resource_version: &str) {
        self.action(
            "BOOKMARK",
            &json!({
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"resourceVersion": resource_version},
            }),
        );
    }

    /// Sends the `BOOKMARK` that ends a streaming list's initial events (annotated
    /// `k8s.io/initial-events-end`), what a reflector asking `sendInitialEvents=true`
    /// (an informer's default) waits for before it reports synced.
    pub fn initial_events_end(&self, api_version: &str, kind: &str, resource_version: &str) {
        self.action(
            "BOOKMARK",
            &json!({
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {
                    "resourceVersion": resource_version,
                    "annotations": {"k8s.io/initial-events-end": "true"},
                },
            }),
        );
    }

    /// Sends an `ERROR` event carrying `err`'s Status (e.g. a 410 Gone).
    pub fn error(&self, err: &ApiError) {
        self.action("ERROR", &err.to_status());
    }

    /// Sends an event of type `kind` for `obj` (client-go's `FakeWatcher.Action`). An
    /// object that does not serialize is sent as `null`; after [`stop`](Self::stop)
    /// nothing is sent.
    pub fn action(&self, kind: &str, obj: &impl Serialize) {
        let obj = serde_json::to_value(obj).unwrap_or(Value::Null);
        let line = event_line(kind, &obj);
        let mut state = self.state.lock();
        if state.stopped {
            tracing::debug!(kind, "fake watcher stopped; event not sent");
            return;
        }
        state.open.retain(|tx| !tx.is_closed());
        if state.open.is_empty() {
            state.pending.push(line);
            return;
        }
        for tx in &state.open {
            let _ = tx.send(line.clone());
        }
    }

    /// Ends every watch open (the client sees its stream end) and every later one at
    /// once (client-go's `FakeWatcher.Stop`).
    pub fn stop(&self) {
        let mut state = self.state.lock();
        state.stopped = true;
        state.open.clear();
    }

    /// Whether [`stop`](Self::stop) was called.
    pub fn is_stopped(&self) -> bool {
        self.state.lock().stopped
    }

    /// How many watches are open (a client connected and has not gone away).
    pub fn open_watches(&self) -> usize {
        let mut state = self.state.lock();
        state.open.retain(|tx| !tx.is_closed());
        state.open.len()
    }

    /// A new watch: the events waiting for one, then every event sent until the stop.
    pub(crate) fn open(&self) -> BoxStream<'static, Bytes> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.state.lock();
        for line in state.pending.drain(..) {
            let _ = tx.send(line);
        }
        if !state.stopped {
            state.open.push(tx);
        }
        futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|line| (line, rx))
        })
        .boxed()
    }
}
