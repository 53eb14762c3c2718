//! The object store: every object of every resource, one global resourceVersion counter
//! (like etcd's revision), a bounded history of change events for watch resume, and the
//! open watch subscriptions.
//!
//! All writes go through [`Store::write`], an atomic read-modify-write under one lock, so
//! optimistic-concurrency checks cannot race.

use std::{
    collections::{BTreeMap, HashMap, HashSet, VecDeque},
    ops::Bound,
    sync::Arc,
};

use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::{
    errors::{ApiError, ApiResult},
    meta,
    registry::GroupResource,
};

/// An object's key inside its resource: `(namespace, name)`, namespace `""` when
/// cluster-scoped. Ordered like etcd keys, so lists come out sorted.
pub type ObjKey = (String, String);

/// The kind of change a [`StoredEvent`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object changed.
    Modified,
    /// The object was removed.
    Deleted,
}

/// One change, as kept in history and delivered to watchers.
#[derive(Debug)]
pub struct StoredEvent {
    /// The resourceVersion of the change.
    pub rv: u64,
    /// The resource it belongs to.
    pub gr: GroupResource,
    /// What happened.
    pub kind: EventType,
    /// The object after the change (for deletes, the last state stamped with `rv`).
    pub object: Arc<Value>,
    /// The object before the change (modifications and deletes).
    pub old: Option<Arc<Value>>,
}

/// What a write closure decides to do.
#[derive(Debug)]
pub enum Write {
    /// Store this object (create or replace).
    Put(Value),
    /// Remove the object.
    Delete,
    /// Leave everything as it is (a no-op update does not bump the resourceVersion).
    Unchanged,
}

/// The result of [`Store::write`].
#[derive(Debug, Clone)]
pub struct WriteOutcome {
    /// The object as stored (or as it would be, on a dry run; or the removed object).
    pub object: Arc<Value>,
    /// The event emitted, if anything changed.
    pub event: Option<EventType>,
}

/// One page of a list.
#[derive(Debug)]
pub struct ListPage {
    /// Matching objects in key order.
    pub items: Vec<Arc<Value>>,
    /// The revision the list reflects.
    pub rv: u64,
    /// Where the next page starts (exclusive), when more keys remain.
    pub next: Option<ObjKey>,
    /// How many objects (before filtering) follow the page.
    pub remaining: usize,
}

/// A new watch subscription.
#[derive(Debug)]
pub struct Subscription {
    /// The current objects, when the watch starts from "now" (no resourceVersion).
    pub initial: Option<Vec<Arc<Value>>>,
    /// Events after the requested resourceVersion that are already in history.
    pub backlog: Vec<Arc<StoredEvent>>,
    /// Future events.
    pub rx: mpsc::UnboundedReceiver<Arc<StoredEvent>>,
    /// The revision at subscription time.
    pub rv: u64,
}

struct Watcher {
    gr: GroupResource,
    tx: mpsc::UnboundedSender<Arc<StoredEvent>>,
}

#[derive(Default)]
struct Inner {
    rv: u64,
    objects: HashMap<GroupResource, BTreeMap<ObjKey, Arc<Value>>>,
    history: VecDeque<Arc<StoredEvent>>,
    compacted: u64,
    watchers: Vec<Watcher>,
    dependents: HashMap<String, HashSet<(GroupResource, ObjKey)>>,
    by_uid: HashMap<String, (GroupResource, ObjKey)>,
}

/// The in-memory object store.
pub struct Store {
    inner: Mutex<Inner>,
    history_limit: usize,
}

impl Store {
    /// An empty store keeping at most `history_limit` events for watch resume.
    pub fn new(history_limit: usize) -> Self {
        Store {
            inner: Mutex::new(Inner {
                rv: 1,
                ..Inner::default()
            }),
            history_limit: history_limit.max(1),
        }
    }

    /// The current global resourceVersion.
    pub fn current_rv(&self) -> u64 {
        self.inner.lock().rv
    }

    /// The oldest resourceVersion a watch or continue token may still resume from.
    pub fn compacted_rv(&self) -> u64 {
        self.inner.lock().compacted
    }

    /// One object.
    pub fn get(&self, gr: &GroupResource, key: &ObjKey) -> Option<Arc<Value>> {
        self.inner.lock().objects.get(gr)?.get(key).cloned()
    }

    /// Atomically reads the object at `key`, lets `decide` choose a write, and applies it.
    ///
    /// On a `Put` the store stamps `metadata.resourceVersion`; with `dry_run` nothing is
    /// stored, no event is emitted, and an update keeps the current resourceVersion.
    pub fn write<F>(
        &self,
        gr: &GroupResource,
        key: &ObjKey,
        dry_run: bool,
        decide: F,
    ) -> ApiResult<WriteOutcome>
    where
        F: FnOnce(Option<&Arc<Value>>) -> ApiResult<Write>,
    {
        let mut inner = self.inner.lock();
        let current = inner.objects.get(gr).and_then(|m| m.get(key)).cloned();
        let decision = decide(current.as_ref())?;
        match decision {
            Write::Unchanged => match current {
                Some(object) => Ok(WriteOutcome {
                    object,
                    event: None,
                }),
                None => Err(ApiError::internal("no-op write on a missing object")),
            },
            Write::Put(mut value) => {
                if dry_run {
                    // kube-apiserver's `DryRunnableStorage.GuaranteedUpdate` returns the
                    // would-be object at the current resourceVersion (nothing was
                    // written); a dry-run create has none.
                    if let Some(rv) = current
                        .as_deref()
                        .and_then(|c| c.pointer("/metadata/resourceVersion"))
                        .cloned()
                    {
                        meta::meta_mut(&mut value).insert("resourceVersion".into(), rv);
                    }
                    return Ok(WriteOutcome {
                        object: Arc::new(value),
                        event: None,
                    });
                }
                inner.rv += 1;
                let rv = inner.rv;
                meta::meta_mut(&mut value)
                    .insert("resourceVersion".into(), Value::String(rv.to_string()));
                let object = Arc::new(value);
                inner.reindex(gr, key, current.as_deref(), Some(&object));
                inner
                    .objects
                    .entry(gr.clone())
                    .or_default()
                    .insert(key.clone(), object.clone());
                let kind = if current.is_some() {
                    EventType::Modified
                } else {
                    EventType::Added
                };
                self.record(&mut inner, gr, kind, object.clone(), current);
                Ok(WriteOutcome {
                    object,
                    event: Some(kind),
                })
            }
            Write::Delete => {
                let Some(old) = current else {
                    return Err(ApiError::internal("delete of a missing object"));
                };
                if dry_run {
                    return Ok(WriteOutcome {
                        object: old,
                        event: None,
                    });
                }
                inner.rv += 1;
                let rv = inner.rv;
                if let Some(map) = inner.objects.get_mut(gr) {
                    map.remove(key);
                }
                inner.reindex(gr, key, Some(&old), None);
                let mut last = (*old).clone();
                meta::meta_mut(&mut last)
                    .insert("resourceVersion".into(), Value::String(rv.to_string()));
                let object = Arc::new(last);
                self.record(
                    &mut inner,
                    gr,
                    EventType::Deleted,
                    object.clone(),
                    Some(old),
                );
                Ok(WriteOutcome {
                    object,
                    event: Some(EventType::Deleted),
                })
            }
        }
    }

    fn record(
        &self,
        inner: &mut Inner,
        gr: &GroupResource,
        kind: EventType,
        object: Arc<Value>,
        old: Option<Arc<Value>>,
    ) {
        let event = Arc::new(StoredEvent {
            rv: inner.rv,
            gr: gr.clone(),
            kind,
            object,
            old,
        });
        inner.history.push_back(event.clone());
        while inner.history.len() > self.history_limit {
            if let Some(dropped) = inner.history.pop_front() {
                inner.compacted = dropped.rv;
            }
        }
        inner
            .watchers
            .retain(|w| w.gr != *gr || w.tx.send(event.clone()).is_ok());
    }

    /// Lists `gr` (in `namespace`, or everywhere), as of `at_rv` when given.
    ///
    /// Starts after `start_after`, keeps objects `filter` accepts, and stops after `limit`.
    /// A past revision is rebuilt from history; one older than the kept history is
    /// `410 Expired`.
    pub fn list(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        at_rv: Option<u64>,
        start_after: Option<&ObjKey>,
        limit: Option<usize>,
        filter: &dyn Fn(&Value) -> bool,
    ) -> ApiResult<ListPage> {
        let inner = self.inner.lock();
        let rv = at_rv.unwrap_or(inner.rv);
        if rv < inner.compacted {
            return Err(ApiError::expired(format!(
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list. (requested {rv}, compacted {})",
                inner.compacted
            )));
        }
        let empty = BTreeMap::new();
        let current = inner.objects.get(gr).unwrap_or(&empty);
        // Undo every change after `rv`, newest first, so each key ends at its state at `rv`.
        let mut overlay: BTreeMap<ObjKey, Option<Arc<Value>>> = BTreeMap::new();
        if rv < inner.rv {
            for event in inner.history.iter().rev() {
                if event.rv <= rv {
                    break;
                }
                if event.gr != *gr {
                    continue;
                }
                let key = key_of(&event.object);
                let before = match event.kind {
                    EventType::Added => None,
                    EventType::Modified | EventType::Deleted => event.old.clone(),
                };
                overlay.insert(key, before);
            }
        }
        let lower: Bound<ObjKey> = match (start_after, namespace) {
            (Some(k), _) => Bound::Excluded(k.clone()),
            (None, Some(ns)) => Bound::Included((ns.to_string(), String::new())),
            (None, None) => Bound::Unbounded,
        };
        let in_ns = |k: &ObjKey| namespace.is_none_or(|ns| k.0 == ns);
        let mut items = Vec::new();
        let mut next = None;
        let mut remaining = 0;
        let limit = limit.unwrap_or(usize::MAX);
        if overlay.is_empty() {
            let mut iter = current
                .range((lower, Bound::Unbounded))
                .take_while(|(k, _)| in_ns(k));
            for (k, v) in iter.by_ref() {
                if filter(v) {
                    items.push(v.clone());
                    if items.len() >= limit {
                        next = Some(k.clone());
                        break;
                    }
                }
            }
            if next.is_some() {
                remaining = iter.count();
                if remaining == 0 {
                    next = None;
                }
            }
        } else {
            let mut merged: BTreeMap<ObjKey, Arc<Value>> = current
                .range((lower.clone(), Bound::Unbounded))
                .take_while(|(k, _)| in_ns(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (k, v) in overlay.range((lower, Bound::Unbounded)) {
                if !in_ns(k) {
                    continue;
                }
                match v {
                    Some(v) => merged.insert(k.clone(), v.clone()),
                    None => merged.remove(k),
                };
            }
            let mut iter = merged.into_iter();
            for (k, v) in iter.by_ref() {
                if filter(&v) {
                    items.push(v);
                    if items.len() >= limit {
                        next = Some(k);
                        break;
                    }
                }
            }
            if next.is_some() {
                remaining = iter.count();
                if remaining == 0 {
                    next = None;
                }
            }
        }
        Ok(ListPage {
            items,
            rv,
            next,
            remaining,
        })
    }

    /// Subscribes to changes of `gr` after `from` (or from now, with the current objects).
    ///
    /// A `from` older than the kept history is `410 Gone`.
    pub fn subscribe(&self, gr: &GroupResource, from: Option<u64>) -> ApiResult<Subscription> {
        let mut inner = self.inner.lock();
        let (tx, rx) = mpsc::unbounded_channel();
        let rv = inner.rv;
        let (initial, backlog) = match from {
            None => {
                let objects = inner
                    .objects
                    .get(gr)
                    .map(|m| m.values().cloned().collect())
                    .unwrap_or_default();
                (Some(objects), Vec::new())
            }
            Some(from) => {
                if from < inner.compacted {
                    return Err(ApiError::gone(format!(
                        "too old resource version: {from} ({})",
                        inner.compacted
                    )));
                }
                let start = inner.history.partition_point(|e| e.rv <= from);
                let backlog = inner
                    .history
                    .range(start..)
                    .filter(|e| e.gr == *gr)
                    .cloned()
                    .collect();
                (None, backlog)
            }
        };
        inner.watchers.push(Watcher { gr: gr.clone(), tx });
        Ok(Subscription {
            initial,
            backlog,
            rx,
            rv,
        })
    }

    /// Ends every open watch subscription (their streams finish).
    pub fn drop_watchers(&self) {
        self.inner.lock().watchers.clear();
    }

    /// Number of open watch subscriptions.
    pub fn watcher_count(&self) -> usize {
        let mut inner = self.inner.lock();
        inner.watchers.retain(|w| !w.tx.is_closed());
        inner.watchers.len()
    }

    /// Forgets all history up to now: resuming from any earlier revision is 410.
    pub fn compact(&self) {
        let mut inner = self.inner.lock();
        inner.history.clear();
        inner.compacted = inner.rv;
    }

    /// How many objects of `gr` are stored.
    pub fn count(&self, gr: &GroupResource) -> usize {
        self.inner.lock().objects.get(gr).map_or(0, BTreeMap::len)
    }

    /// Keys of every object of `gr` (optionally only in `namespace`).
    pub fn keys(&self, gr: &GroupResource, namespace: Option<&str>) -> Vec<ObjKey> {
        let inner = self.inner.lock();
        inner
            .objects
            .get(gr)
            .map(|m| {
                m.keys()
                    .filter(|k| namespace.is_none_or(|ns| k.0 == ns))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every resource that has at least one object in `namespace`.
    pub fn resources_in_namespace(&self, namespace: &str) -> Vec<GroupResource> {
        let inner = self.inner.lock();
        inner
            .objects
            .iter()
            .filter(|(_, m)| {
                m.range((namespace.to_string(), String::new())..)
                    .next()
                    .is_some_and(|(k, _)| k.0 == namespace)
            })
            .map(|(gr, _)| gr.clone())
            .collect()
    }

    /// Objects whose ownerReferences name `owner_uid`.
    pub fn dependents_of(&self, owner_uid: &str) -> Vec<(GroupResource, ObjKey)> {
        let inner = self.inner.lock();
        let mut deps: Vec<_> = inner
            .dependents
            .get(owner_uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        deps.sort();
        deps
    }

    /// Where the object with this uid lives, if it exists.
    pub fn locate_uid(&self, uid: &str) -> Option<(GroupResource, ObjKey)> {
        self.inner.lock().by_uid.get(uid).cloned()
    }
}

impl Inner {
    fn reindex(
        &mut self,
        gr: &GroupResource,
        key: &ObjKey,
        old: Option<&Value>,
        new: Option<&Arc<Value>>,
    ) {
        let entry = (gr.clone(), key.clone());
        if let Some(old) = old {
            self.by_uid.remove(meta::uid(old));
            for uid in meta::owner_uids(old) {
                if let Some(set) = self.dependents.get_mut(&uid) {
                    set.remove(&entry);
                    if set.is_empty() {
                        self.dependents.remove(&uid);
                    }
                }
            }
        }
        if let Some(new) = new {
            self.by_uid
                .insert(meta::uid(new).to_string(), entry.clone());
            for uid in meta::owner_uids(new) {
                self.dependents
                    .entry(uid)
                    .or_default()
                    .insert(entry.clone());
            }
        }
    }
}

/// The key of an object.
pub fn key_of(obj: &Value) -> ObjKey {
    (
        meta::namespace(obj).to_string(),
        meta::name(obj).to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(ns: &str, name: &str, v: i64) -> Value {
        json!({"metadata": {"namespace": ns, "name": name}, "data": {"v": v.to_string()}})
    }

    fn put(store: &Store, ns: &str, name: &str, v: i64) -> u64 {
        let gr = GroupResource::new("", "configmaps");
        let key = (ns.to_string(), name.to_string());
        let out = store
            .write(&gr, &key, false, |_| Ok(Write::Put(cm(ns, name, v))))
            .unwrap();
        meta::resource_version(&out.object).parse().unwrap()
    }

    #[test]
    fn every_write_bumps_the_global_revision() {
        let store = Store::new(100);
        let a = put(&store, "ns", "a", 1);
        let b = put(&store, "ns", "b", 1);
        assert_eq!(b, a + 1);
        assert_eq!(store.current_rv(), b);
    }

    #[test]
    fn list_at_a_past_revision_undoes_later_changes() {
        let store = Store::new(100);
        let gr = GroupResource::new("", "configmaps");
        put(&store, "ns", "a", 1);
        let rv = put(&store, "ns", "b", 1);
        put(&store, "ns", "a", 2);
        put(&store, "ns", "c", 1);
        let page = store
            .list(&gr, Some("ns"), Some(rv), None, None, &|_| true)
            .unwrap();
        let names: Vec<_> = page
            .items
            .iter()
            .map(|o| meta::name(o).to_string())
            .collect();
        assert_eq!(names, vec!["a", "b"]);
        assert_eq!(page.items[0]["data"]["v"], "1");
    }

    #[test]
    fn history_limit_compacts_and_old_watches_are_gone() {
        let store = Store::new(2);
        let gr = GroupResource::new("", "configmaps");
        let first = put(&store, "ns", "a", 1);
        put(&store, "ns", "a", 2);
        put(&store, "ns", "a", 3);
        put(&store, "ns", "a", 4);
        let err = store.subscribe(&gr, Some(first)).unwrap_err();
        assert_eq!(err.code, 410);
        assert!(store.subscribe(&gr, Some(store.current_rv() - 1)).is_ok());
    }

    #[test]
    fn paging_reports_next_key_only_when_more_remain() {
        let store = Store::new(100);
        let gr = GroupResource::new("", "configmaps");
        for n in ["a", "b", "c"] {
            put(&store, "ns", n, 1);
        }
        let p1 = store
            .list(&gr, None, None, None, Some(2), &|_| true)
            .unwrap();
        assert_eq!(p1.items.len(), 2);
        let next = p1.next.unwrap();
        let p2 = store
            .list(&gr, None, None, Some(&next), Some(2), &|_| true)
            .unwrap();
        assert_eq!(p2.items.len(), 1);
        assert!(p2.next.is_none());
    }

    proptest::proptest! {
        /// Lists at any kept past revision equal a model replayed up to that revision, and
        /// a watch from any kept revision replays exactly the later changes.
        #[test]
        fn past_lists_and_watch_backlogs_match_a_model(
            ops in proptest::collection::vec((0u8..4, proptest::option::of(0i64..3)), 1..40),
            limit in 1usize..30,
        ) {
            let store = Store::new(limit);
            let gr = GroupResource::new("", "configmaps");
            let mut model: BTreeMap<String, i64> = BTreeMap::new();
            let mut snapshots: Vec<(u64, BTreeMap<String, i64>)> = vec![(store.current_rv(), model.clone())];
            for (k, v) in ops {
                let name = format!("k{k}");
                let key = ("ns".to_string(), name.clone());
                match v {
                    Some(v) => {
                        put(&store, "ns", &name, v);
                        model.insert(name, v);
                    }
                    None if model.contains_key(&name) => {
                        store.write(&gr, &key, false, |_| Ok(Write::Delete)).unwrap();
                        model.remove(&name);
                    }
                    None => continue,
                }
                snapshots.push((store.current_rv(), model.clone()));
            }
            for (rv, snap) in &snapshots {
                let listed = store.list(&gr, None, Some(*rv), None, None, &|_| true);
                if *rv < store.compacted_rv() {
                    proptest::prop_assert_eq!(listed.unwrap_err().code, 410);
                    continue;
                }
                let got: BTreeMap<String, i64> = listed
                    .unwrap()
                    .items
                    .iter()
                    .map(|o| (meta::name(o).to_string(), o["data"]["v"].as_str().unwrap().parse().unwrap()))
                    .collect();
                proptest::prop_assert_eq!(&got, snap);
                let sub = store.subscribe(&gr, Some(*rv)).unwrap();
                let later = snapshots.iter().filter(|(r, _)| r > rv).count();
                proptest::prop_assert_eq!(sub.backlog.len(), later);
            }
        }
    }
}
