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
/// events).
pub(crate) mod fake_api {
    use std::{
        collections::{BTreeMap, VecDeque},
        sync::Arc,
    };

    use futures::{FutureExt, StreamExt, future::BoxFuture};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
    use kube_core::{
        ObjectList, Status, TypeMeta, WatchEvent,
        params::{ListParams, WatchParams},
    };
    use parking_lot::Mutex;
    use tokio::sync::mpsc;

    use crate::{
        Object,
        cache::{ListerWatcher, WatchStream, meta_namespace_key},
        client::{Error as ClientError, TransportError},
    };

    type Sink<K> = mpsc::UnboundedSender<Result<WatchEvent<K>, ClientError>>;

    struct State<K> {
        objects: BTreeMap<String, K>,
        rv: u64,
        history: Vec<(u64, WatchEvent<K>)>,
        watchers: Vec<Sink<K>>,
        list_failures: VecDeque<ClientError>,
        watch_failures: VecDeque<ClientError>,
        lists: usize,
        watches: usize,
        last_watch: Option<(WatchParams, String)>,
    }

    /// The fake API; clones share state.
    pub(crate) struct FakeApi<K> {
        state: Arc<Mutex<State<K>>>,
    }

    impl<K> Clone for FakeApi<K> {
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
            let result = match s.list_failures.pop_front() {
                Some(e) => Err(e),
                None => {
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
            if let Some(e) = s.watch_failures.pop_front() {
                return async move { Err(e) }.boxed();
            }
            let (tx, rx) = mpsc::unbounded_channel();
            let from: u64 = resource_version.parse().unwrap_or(0);
            if params.send_initial_events {
                for obj in s.objects.values() {
                    let _ = tx.send(Ok(WatchEvent::Added(obj.clone())));
                }
                let bookmark: kube_core::watch::Bookmark =
                    serde_json::from_value(serde_json::json!({
                        "apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"resourceVersion": s.rv.to_string(),
                                     "annotations": {"k8s.io/initial-events-end": "true"}}
                    }))
                    .unwrap();
                let _ = tx.send(Ok(WatchEvent::Bookmark(bookmark)));
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

    fn tokio_stream_from<K: Send + 'static>(
        mut rx: mpsc::UnboundedReceiver<Result<WatchEvent<K>, ClientError>>,
    ) -> WatchStream<K> {
        futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
    }
}
