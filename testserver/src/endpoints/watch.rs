//! Watch streams: initial state, resume from a resourceVersion, selector transitions
//! (an object that stops matching arrives as DELETED, one that starts matching as ADDED),
//! bookmarks, the initial-events-end bookmark of streaming lists, timeouts, and the 410
//! ERROR event for a compacted resourceVersion. Watch faults ([`WatchFaults`]) hold events
//! back here: a stall before anything is sent (and before a close), a delivery delay between
//! the watch task and the stream.

use std::{pin::Pin, sync::Arc};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use tokio::{sync::mpsc, time::Instant};
use tokio_util::sync::CancellationToken;

use crate::{
    engine::{Engine, Target, WatchOptions, parse_rv},
    errors::{ApiError, ApiResult, Cause},
    faults::WatchFaults,
    meta,
    selectors::{FieldSelector, LabelSelector},
    store::{EventType, StoredEvent},
};

/// A stream of newline-terminated JSON watch events.
pub type WatchStream = Pin<Box<dyn Stream<Item = Bytes> + Send>>;

/// The annotation that marks the end of a streaming list's initial events.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// One JSON watch event line, `type` first as kube-apiserver writes it (a client decoding
/// the adjacently tagged event need not buffer the object).
pub(crate) fn event_line(kind: &str, obj: &Value) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    if serde_json::to_writer(&mut out, obj).is_err() {
        out.extend_from_slice(b"null");
    }
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// The single ERROR event a watch gets when its resourceVersion is too old.
pub fn error_stream(err: &ApiError) -> WatchStream {
    let line = event_line("ERROR", &err.to_status());
    futures::stream::iter(vec![line]).boxed()
}

fn invalid_options(causes: Vec<Cause>) -> ApiError {
    ApiError::invalid("meta.k8s.io", "ListOptions", "", causes)
}

struct Filter {
    labels: LabelSelector,
    fields: FieldSelector,
    namespace: Option<String>,
}

impl Filter {
    fn matches(&self, obj: &Value) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| meta::namespace(obj) == ns)
            && self.labels.matches_object(obj)
            && self.fields.matches_object(obj)
    }
}

/// The watch task's end of a stream: each line with the time it may be delivered.
struct Sender {
    tx: mpsc::Sender<(Instant, Bytes)>,
    faults: Arc<WatchFaults>,
    /// This watch's serial number for [`WatchFaults`].
    serial: u64,
    cancel: CancellationToken,
}

impl Sender {
    /// Waits out a stall, then queues `line` for delivery after the delivery delay;
    /// `false` once the watch is over (the client went away or the server stops).
    async fn send(&self, line: Bytes) -> bool {
        if !self.stall_over().await {
            return false;
        }
        let due = Instant::now() + self.faults.delivery_delay().unwrap_or_default();
        self.tx.send((due, line)).await.is_ok()
    }

    /// Waits while watches are stalled; `false` if the watch ended meanwhile.
    async fn stall_over(&self) -> bool {
        self.faults
            .wait_while_stalled(self.serial, &self.cancel, self.tx.closed())
            .await
    }
}

/// Opens a watch. Parameter errors are returned before the stream starts (as HTTP errors);
/// a compacted resourceVersion yields a stream with one ERROR event, like kube-apiserver.
/// `faults` may stall the stream or delay its events.
pub fn watch(
    engine: &Arc<Engine>,
    target: &Target,
    opts: &WatchOptions,
    faults: Arc<WatchFaults>,
    cancel: CancellationToken,
) -> ApiResult<WatchStream> {
    let rt = target.rt.clone();
    let labels = LabelSelector::parse(opts.label_selector.as_deref().unwrap_or_default())
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let fields = FieldSelector::parse(
        opts.field_selector.as_deref().unwrap_or_default(),
        &rt.field_labels,
    )
    .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let rv_match = opts
        .resource_version_match
        .as_deref()
        .filter(|s| !s.is_empty());
    let streaming = opts.send_initial_events == Some(true);
    if opts.send_initial_events.is_some() {
        if rv_match != Some("NotOlderThan") {
            return Err(invalid_options(vec![Cause::invalid(
                "resourceVersionMatch",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )]));
        }
        if streaming && !opts.allow_bookmarks {
            return Err(invalid_options(vec![Cause::invalid(
                "allowWatchBookmarks",
                "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
            )]));
        }
    } else if rv_match.is_some() {
        return Err(invalid_options(vec![Cause::invalid(
            "resourceVersionMatch",
            "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        )]));
    }
    let rv = opts.resource_version.as_deref().filter(|s| !s.is_empty());
    let from = match (streaming, rv) {
        (true, Some(r)) if r != "0" => {
            let n = parse_rv(r)?;
            if n > engine.store().current_rv() {
                return Err(ApiError::new(
                    504,
                    crate::errors::Reason::Timeout,
                    format!("Too large resource version: {n}"),
                ));
            }
            None
        }
        (true, _) | (false, None) | (false, Some("0")) => None,
        (false, Some(r)) => Some(parse_rv(r)?),
    };
    let sub = match engine.store().subscribe(&rt.group_resource(), from) {
        Ok(sub) => sub,
        Err(err) if err.code == 410 => return Ok(error_stream(&err)),
        Err(err) => return Err(err),
    };
    let filter = Filter {
        labels,
        fields,
        namespace: if rt.namespaced {
            target.namespace.clone().filter(|n| !n.is_empty())
        } else {
            None
        },
    };
    let (tx, rx) = mpsc::channel::<(Instant, Bytes)>(256);
    let out = Sender {
        tx,
        serial: faults.register(),
        faults,
        cancel: cancel.clone(),
    };
    let engine = engine.clone();
    let allow_bookmarks = opts.allow_bookmarks;
    let timeout = opts.timeout;
    tokio::spawn(async move {
        let mut sub = sub;
        let mut last_rv = from.unwrap_or(sub.rv);
        let bookmark = |rv: u64, end: bool| -> Bytes {
            let mut metadata = json!({"resourceVersion": rv.to_string()});
            if end {
                metadata["annotations"] = json!({INITIAL_EVENTS_END: "true"});
            }
            event_line(
                "BOOKMARK",
                &json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": metadata}),
            )
        };
        if let Some(initial) = sub.initial.take() {
            for obj in initial {
                if filter.matches(&obj) {
                    let obj = engine.present(&rt, obj);
                    if !out.send(event_line("ADDED", &obj)).await {
                        return;
                    }
                }
            }
            if streaming && !out.send(bookmark(sub.rv, true)).await {
                return;
            }
        }
        for ev in std::mem::take(&mut sub.backlog) {
            last_rv = last_rv.max(ev.rv);
            if let Some(line) = translate(&engine, &rt, &filter, &ev)
                && !out.send(line).await
            {
                return;
            }
        }
        let sleep = async move {
            match timeout {
                Some(d) => tokio::time::sleep(d).await,
                None => futures::future::pending::<()>().await,
            }
        };
        tokio::pin!(sleep);
        let period = engine.config().bookmark_interval;
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                // A stalled watch does not even close: it ends once the stall is over.
                _ = &mut sleep => {
                    out.stall_over().await;
                    break;
                }
                _ = out.tx.closed() => break,
                _ = ticker.tick(), if allow_bookmarks => {
                    if !out.stall_over().await {
                        return;
                    }
                    let snapshot = engine.store().current_rv();
                    while let Ok(ev) = sub.rx.try_recv() {
                        last_rv = last_rv.max(ev.rv);
                        if let Some(line) = translate(&engine, &rt, &filter, &ev)
                            && !out.send(line).await {
                                return;
                            }
                    }
                    last_rv = last_rv.max(snapshot);
                    if !out.send(bookmark(last_rv, false)).await {
                        return;
                    }
                }
                ev = sub.rx.recv() => match ev {
                    Some(ev) => {
                        last_rv = last_rv.max(ev.rv);
                        if let Some(line) = translate(&engine, &rt, &filter, &ev)
                            && !out.send(line).await {
                                return;
                            }
                    }
                    None => {
                        out.stall_over().await;
                        break;
                    }
                },
            }
        }
    });
    // Each line waits for its delivery time (now, unless a delivery delay is set).
    Ok(futures::stream::unfold(rx, |mut rx| async move {
        let (due, line) = rx.recv().await?;
        tokio::time::sleep_until(due).await;
        Some((line, rx))
    })
    .boxed())
}

/// Turns a stored event into what this watcher sees, applying selector transitions.
fn translate(
    engine: &Engine,
    rt: &crate::registry::ResourceType,
    filter: &Filter,
    ev: &StoredEvent,
) -> Option<Bytes> {
    let new_matches = filter.matches(&ev.object);
    let old_matches = ev.old.as_deref().is_some_and(|o| filter.matches(o));
    let (kind, obj) = match ev.kind {
        EventType::Added => (new_matches.then_some("ADDED")?, ev.object.clone()),
        EventType::Deleted => (old_matches.then_some("DELETED")?, ev.object.clone()),
        EventType::Modified => match (old_matches, new_matches) {
            (true, true) => ("MODIFIED", ev.object.clone()),
            (false, true) => ("ADDED", ev.object.clone()),
            (true, false) => {
                // kube-apiserver sends the previous state stamped with the new revision.
                let mut old = ev.old.as_deref().cloned().unwrap_or(Value::Null);
                meta::meta_mut(&mut old)
                    .insert("resourceVersion".into(), Value::String(ev.rv.to_string()));
                ("DELETED", Arc::new(old))
            }
            (false, false) => return None,
        },
    };
    Some(event_line(kind, &engine.present(rt, obj)))
}

/// A watch of a custom resource served in a version other than its storage version
/// (`crate::conversion`): each event's object, read in the storage version, converted to
/// the request's version through the CRD's webhook, one call per event; a bookmark gets
/// the request's `apiVersion`. A failed conversion ends the watch with an ERROR event
/// carrying its Status (kube-apiserver's message, code 500). kube-apiserver converts in
/// the watch's encoder and, when that fails, logs `unable to encode watch object` and
/// closes the stream without an event (`handlers/watch.go` `HandleHTTP`); the ERROR event
/// here tells the client why, and it ends the watch the same way.
pub(crate) fn convert_events(
    stream: WatchStream,
    plan: Arc<crate::conversion::Plan>,
    services: Arc<crate::webhook::Services>,
) -> WatchStream {
    futures::stream::unfold(Some((stream, plan, services)), |state| async move {
        let (mut stream, plan, services) = state?;
        let line = stream.next().await?;
        match convert_line(&plan, &services, &line).await {
            Ok(out) => Some((out, Some((stream, plan, services)))),
            Err(err) => {
                tracing::warn!(%err, kind = %plan.request.kind, "watch event conversion failed");
                Some((event_line("ERROR", &err.to_status()), None))
            }
        }
    })
    .boxed()
}

/// One JSON event line in the request's version.
async fn convert_line(
    plan: &crate::conversion::Plan,
    services: &crate::webhook::Services,
    line: &Bytes,
) -> ApiResult<Bytes> {
    let mut event: Value =
        serde_json::from_slice(line).map_err(|e| ApiError::internal(e.to_string()))?;
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match kind.as_str() {
        "ADDED" | "MODIFIED" | "DELETED" => {
            let obj = event.get_mut("object").map(Value::take).unwrap_or_default();
            let mut converted = plan.to_request_via(services, vec![Arc::new(obj)]).await?;
            let obj = converted
                .pop()
                .ok_or_else(|| ApiError::internal("conversion returned no object"))?;
            Ok(event_line(&kind, &obj))
        }
        "BOOKMARK" => {
            if let Some(obj) = event.get_mut("object").and_then(Value::as_object_mut) {
                obj.insert(
                    "apiVersion".into(),
                    Value::String(plan.request.api_version()),
                );
            }
            let obj = event.get("object").cloned().unwrap_or_default();
            Ok(event_line(&kind, &obj))
        }
        _ => Ok(line.clone()),
    }
}
