//! Object builders for the cache tests.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube_core::ObjectMeta;

/// A ConfigMap `namespace/name` (empty namespace = none).
pub(crate) fn cm(namespace: &str, name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// A ConfigMap with labels and a resourceVersion.
pub(crate) fn cm_with(namespace: &str, name: &str, rv: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut obj = cm(namespace, name);
    obj.metadata.resource_version = Some(rv.to_owned());
    obj.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
    );
    obj
}

/// A Node (cluster-scoped) named `name`.
pub(crate) fn node(name: &str) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..Node::default()
    }
}

/// An in-memory API for one resource: a ListerWatcher with a global resourceVersion, a
/// replayable event history and faults (failing lists/watches, dropped watches, undecodable
/// events). It records every list and watch it was asked, with the time (tokio's clock), so
/// a test asserts what the reflector asked; lists and watches can be scripted (answered by
/// a test's function instead of the in-memory state).
pub(crate) mod fake_api {
    use std::{
        collections::{BTreeMap, VecDeque},
        sync::Arc,
    };

    use futures::{FutureExt, StreamExt, future::BoxFuture};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
    use kube_core::{
        ObjectList, Status, TypeMeta, WatchEvent,
        params::{ListParams, VersionMatch, WatchParams},
    };
    use parking_lot::Mutex;
    use tokio::{sync::mpsc, time::Instant};

    use crate::{
        Object,
        cache::{ListerWatcher, WatchStream, meta_namespace_key},
        client::{Error as ClientError, TransportError},
    };

    type Sink<K> = mpsc::UnboundedSender<Result<WatchEvent<K>, ClientError>>;

    /// Answers a list instead of the in-memory state; `None` lets the state answer.
    pub(crate) type ListScript<K> =
        Box<dyn Fn(&ListParams) -> Option<Result<ObjectList<K>, ClientError>> + Send>;
    /// Answers a watch instead of the in-memory state: the events of a stream that then
    /// ends (or the error opening it); `None` lets the state answer.
    pub(crate) type WatchScript<K> =
        Box<dyn Fn(&WatchParams, &str) -> Option<Result<Vec<WatchEvent<K>>, ClientError>> + Send>;

    /// One request the fake was asked, as the reflector asked it.
    #[derive(Debug, Clone)]
    pub(crate) enum Request {
        /// A list: resourceVersion, resourceVersionMatch, limit, continue, timeout.
        List(ListParams, Instant),
        /// A watch: allowWatchBookmarks, sendInitialEvents, timeout; and the resourceVersion.
        Watch(WatchParams, String, Instant),
    }

    /// What a list asked, in the terms of the API: `(resourceVersion, limit, continue,
    /// resourceVersionMatch)`, with `""` and 0 for unset (client-go's `ListOptions` zero
    /// values).
    pub(crate) fn asked(p: &ListParams) -> (String, u32, String, String) {
        let version_match = match p.version_match {
            None => "",
            Some(VersionMatch::NotOlderThan) => "NotOlderThan",
            Some(VersionMatch::Exact) => "Exact",
        };
        (
            p.resource_version.clone().unwrap_or_default(),
            p.limit.unwrap_or(0),
            p.continue_token.clone().unwrap_or_default(),
            version_match.to_owned(),
        )
    }

    struct State<K: Clone> {
        objects: BTreeMap<String, K>,
        rv: u64,
        history: Vec<(u64, WatchEvent<K>)>,
        watchers: Vec<Sink<K>>,
        list_failures: VecDeque<ClientError>,
        watch_failures: VecDeque<ClientError>,
        lists: usize,
        watches: usize,
        last_watch: Option<(WatchParams, String)>,
        requests: Vec<Request>,
        list_script: Option<ListScript<K>>,
        watch_script: Option<WatchScript<K>>,
        stalled_watches: usize,
    }

    /// The fake API; clones share state.
    pub(crate) struct FakeApi<K: Clone> {
        state: Arc<Mutex<State<K>>>,
    }

    impl<K: Clone> Clone for FakeApi<K> {
        fn clone(&self) -> Self {
            Self {
                state: self.state.clone(),
            }
        }
    }

    pub(crate) fn gone() -> ClientError {
        ClientError::Api(Box::new(Status {
            code: 410,
            reason: "Expired".into(),
            message: "too old".into(),
            ..Status::default()
        }))
    }

    pub(crate) fn refused() -> ClientError {
        ClientError::Transport(TransportError::Connect("connection refused".into()))
    }

    impl<K: Object> FakeApi<K> {
        pub(crate) fn new() -> Self {
            Self {
                state: Arc::new(Mutex::new(State {
                    objects: BTreeMap::new(),
                    rv: 1,
                    history: Vec::new(),
                    watchers: Vec::new(),
                    list_failures: VecDeque::new(),
                    watch_failures: VecDeque::new(),
                    lists: 0,
                    watches: 0,
                    last_watch: None,
                    requests: Vec::new(),
                    list_script: None,
                    watch_script: None,
                    stalled_watches: 0,
                })),
            }
        }

        fn emit(state: &mut State<K>, rv: u64, event: WatchEvent<K>) {
            state.watchers.retain(|w| w.send(Ok(event.clone())).is_ok());
            state.history.push((rv, event));
        }

        /// Creates or replaces `obj`, stamping a new resourceVersion; returns it.
        pub(crate) fn upsert(&self, mut obj: K) -> K {
            let mut s = self.state.lock();
            s.rv += 1;
            let rv = s.rv;
            obj.meta_mut().resource_version = Some(rv.to_string());
            let key = meta_namespace_key(&obj).unwrap();
            let existed = s.objects.insert(key, obj.clone()).is_some();
            let event = if existed {
                WatchEvent::Modified(obj.clone())
            } else {
                WatchEvent::Added(obj.clone())
            };
            Self::emit(&mut s, rv, event);
            obj
        }

        /// Deletes `key`, telling watchers.
        pub(crate) fn delete(&self, key: &str) {
            let mut s = self.state.lock();
            if let Some(mut obj) = s.objects.remove(key) {
                s.rv += 1;
                let rv = s.rv;
                obj.meta_mut().resource_version = Some(rv.to_string());
                Self::emit(&mut s, rv, WatchEvent::Deleted(obj));
            }
        }

        /// Creates or replaces `obj` with a new resourceVersion but no watch event (as if
        /// the event was lost); returns it.
        pub(crate) fn upsert_silently(&self, mut obj: K) -> K {
            let mut s = self.state.lock();
            s.rv += 1;
            obj.meta_mut().resource_version = Some(s.rv.to_string());
            let key = meta_namespace_key(&obj).unwrap();
            s.objects.insert(key, obj.clone());
            obj
        }

        /// Deletes `key` without any watch event (as if the event was lost).
        pub(crate) fn delete_silently(&self, key: &str) {
            let mut s = self.state.lock();
            s.objects.remove(key);
            s.rv += 1;
        }

        /// Ends every open watch cleanly.
        pub(crate) fn drop_watches(&self) {
            self.state.lock().watchers.clear();
        }

        /// Sends an undecodable item to every open watch.
        pub(crate) fn send_garbage(&self) {
            let s = self.state.lock();
            for w in &s.watchers {
                let garbage = serde_json::from_str::<u8>("not json").unwrap_err();
                let _ = w.send(Err(ClientError::Decode(garbage)));
            }
        }

        /// Sends an ERROR event with a 410 Status to every open watch.
        pub(crate) fn send_gone(&self) {
            let s = self.state.lock();
            for w in &s.watchers {
                let _ = w.send(Ok(WatchEvent::Error(Box::new(Status {
                    code: 410,
                    reason: "Expired".into(),
                    ..Status::default()
                }))));
            }
        }

        /// Sends a bookmark at `rv` to every open watch.
        pub(crate) fn send_bookmark(&self, rv: &str) {
            let s = self.state.lock();
            for w in &s.watchers {
                let _ = w.send(Ok(WatchEvent::Bookmark(bookmark(rv, false))));
            }
        }

        /// Sends an ERROR event with `status` to every open watch.
        pub(crate) fn send_error(&self, status: &Status) {
            let s = self.state.lock();
            for w in &s.watchers {
                let _ = w.send(Ok(WatchEvent::Error(Box::new(status.clone()))));
            }
        }

        /// Answers lists with `script` (where it returns `Some`).
        pub(crate) fn script_lists(
            &self,
            script: impl Fn(&ListParams) -> Option<Result<ObjectList<K>, ClientError>> + Send + 'static,
        ) {
            self.state.lock().list_script = Some(Box::new(script));
        }

        /// Answers watches with `script` (where it returns `Some`).
        pub(crate) fn script_watches(
            &self,
            script: impl Fn(&WatchParams, &str) -> Option<Result<Vec<WatchEvent<K>>, ClientError>>
            + Send
            + 'static,
        ) {
            self.state.lock().watch_script = Some(Box::new(script));
        }

        /// Every list and watch asked so far, in order.
        pub(crate) fn requests(&self) -> Vec<Request> {
            self.state.lock().requests.clone()
        }

        /// Every list asked so far, with when.
        pub(crate) fn list_requests(&self) -> Vec<(ListParams, Instant)> {
            self.requests()
                .into_iter()
                .filter_map(|r| match r {
                    Request::List(p, at) => Some((p, at)),
                    Request::Watch(..) => None,
                })
                .collect()
        }

        /// Every watch asked so far: its parameters, resourceVersion and when.
        pub(crate) fn watch_requests(&self) -> Vec<(WatchParams, String, Instant)> {
            self.requests()
                .into_iter()
                .filter_map(|r| match r {
                    Request::Watch(p, rv, at) => Some((p, rv, at)),
                    Request::List(..) => None,
                })
                .collect()
        }

        /// The next watch opens and then never sends anything nor ends (a half-dead
        /// connection).
        pub(crate) fn stall_next_watch(&self) {
            self.state.lock().stalled_watches += 1;
        }

        pub(crate) fn fail_next_list(&self, e: ClientError) {
            self.state.lock().list_failures.push_back(e);
        }

        pub(crate) fn fail_next_watch(&self, e: ClientError) {
            self.state.lock().watch_failures.push_back(e);
        }

        pub(crate) fn lists(&self) -> usize {
            self.state.lock().lists
        }

        pub(crate) fn watches(&self) -> usize {
            self.state.lock().watches
        }

        pub(crate) fn open_watches(&self) -> usize {
            self.state
                .lock()
                .watchers
                .iter()
                .filter(|w| !w.is_closed())
                .count()
        }

        pub(crate) fn last_watch(&self) -> Option<(WatchParams, String)> {
            self.state.lock().last_watch.clone()
        }

        pub(crate) fn keys(&self) -> Vec<String> {
            self.state.lock().objects.keys().cloned().collect()
        }
    }

    impl<K: Object> ListerWatcher<K> for FakeApi<K> {
        fn list(
            &self,
            params: ListParams,
        ) -> BoxFuture<'static, Result<ObjectList<K>, ClientError>> {
            let mut s = self.state.lock();
            s.lists += 1;
            s.requests
                .push(Request::List(params.clone(), Instant::now()));
            let scripted = s.list_script.as_ref().and_then(|script| script(&params));
            let result = match (s.list_failures.pop_front(), scripted) {
                (Some(e), _) => Err(e),
                (None, Some(answer)) => answer,
                (None, None) => {
                    // Pages of `limit`, the continue token being the last key sent.
                    let after = params.continue_token.unwrap_or_default();
                    let limit = params.limit.map_or(usize::MAX, |l| l as usize);
                    let mut rest = s
                        .objects
                        .iter()
                        .filter(|(key, _)| after.is_empty() || key.as_str() > after.as_str());
                    let page: Vec<(&String, &K)> = rest.by_ref().take(limit).collect();
                    let continue_ = match (rest.next(), page.last()) {
                        (Some(_), Some((last, _))) => Some((*last).clone()),
                        _ => None,
                    };
                    let items = page.into_iter().map(|(_, obj)| obj.clone()).collect();
                    Ok(ObjectList {
                        types: TypeMeta {
                            api_version: "v1".into(),
                            kind: "List".into(),
                        },
                        metadata: ListMeta {
                            resource_version: Some(s.rv.to_string()),
                            continue_,
                            ..ListMeta::default()
                        },
                        items,
                    })
                }
            };
            async move { result }.boxed()
        }

        fn watch(
            &self,
            params: WatchParams,
            resource_version: String,
        ) -> BoxFuture<'static, Result<WatchStream<K>, ClientError>> {
            let mut s = self.state.lock();
            s.watches += 1;
            s.last_watch = Some((params.clone(), resource_version.clone()));
            s.requests.push(Request::Watch(
                params.clone(),
                resource_version.clone(),
                Instant::now(),
            ));
            if let Some(e) = s.watch_failures.pop_front() {
                return async move { Err(e) }.boxed();
            }
            if s.stalled_watches > 0 {
                s.stalled_watches -= 1;
                return async move { Ok(futures::stream::pending().boxed()) }.boxed();
            }
            if let Some(scripted) = s
                .watch_script
                .as_ref()
                .and_then(|script| script(&params, &resource_version))
            {
                return async move {
                    let events = scripted?;
                    Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
                }
                .boxed();
            }
            let (tx, rx) = mpsc::unbounded_channel();
            let from: u64 = resource_version.parse().unwrap_or(0);
            if params.send_initial_events {
                for obj in s.objects.values() {
                    let _ = tx.send(Ok(WatchEvent::Added(obj.clone())));
                }
                let _ = tx.send(Ok(WatchEvent::Bookmark(bookmark(&s.rv.to_string(), true))));
            } else {
                for (rv, event) in &s.history {
                    if *rv > from {
                        let _ = tx.send(Ok(event.clone()));
                    }
                }
            }
            s.watchers.push(tx);
            let stream = tokio_stream_from(rx);
            async move { Ok(stream) }.boxed()
        }
    }

    /// A bookmark at `rv`, marking the end of initial events when `end`.
    pub(crate) fn bookmark(rv: &str, end: bool) -> kube_core::watch::Bookmark {
        let mut metadata = serde_json::json!({"resourceVersion": rv});
        if end {
            metadata["annotations"] = serde_json::json!({"k8s.io/initial-events-end": "true"});
        }
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata
        }))
        .unwrap()
    }

    /// A list answer at `rv` with `items`, continued by `continue_` when given.
    pub(crate) fn list_of<K: Clone>(
        rv: &str,
        items: Vec<K>,
        continue_: Option<&str>,
    ) -> ObjectList<K> {
        ObjectList {
            types: TypeMeta {
                api_version: "v1".into(),
                kind: "List".into(),
            },
            metadata: ListMeta {
                resource_version: Some(rv.to_owned()),
                continue_: continue_.map(str::to_owned),
                ..ListMeta::default()
            },
            items,
        }
    }

    /// An API error with `code`, `reason` and `message`.
    pub(crate) fn api_error(code: u16, reason: &str, message: &str) -> ClientError {
        ClientError::Api(Box::new(Status {
            code,
            reason: reason.into(),
            message: message.into(),
            ..Status::default()
        }))
    }

    fn tokio_stream_from<K: Send + 'static>(
        mut rx: mpsc::UnboundedReceiver<Result<WatchEvent<K>, ClientError>>,
    ) -> WatchStream<K> {
        futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
    }
}
