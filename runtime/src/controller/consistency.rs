//! [`ConsistencyStore`]: read-your-own-writes for informer caches (kube-controller-manager's
//! `ConsistencyStore`, KEP-5647, Kubernetes 1.36).
//!
//! A controller that writes an object and is woken again before its informer has seen the
//! write reconciles from a stale cache: it updates with an old resourceVersion (409
//! Conflict), creates what it already created ("already exists"), or decides on a state
//! that no longer holds. The store remembers, per object key, the resourceVersion each of
//! the controller's own writes returned ([`wrote_at`](ConsistencyStore::wrote_at), or
//! [`deleted`](ConsistencyStore::deleted)); a read or a reconcile of that key first waits
//! ([`ensure_ready`](ConsistencyStore::ensure_ready)) until the cache has caught up:
//!
//! * the cached object's resourceVersion is at least the written one (the write, or a
//!   later change, has been applied), or
//! * the informer's store resourceVersion (what the cache has applied from its watch, in
//!   order: [`SharedIndexInformer::last_store_sync_resource_version`]) is at least the
//!   written one — everything up to the write has been applied, whatever happened to the
//!   object since (deleted by someone else, for instance);
//! * for a delete, the key is gone from the cache.
//!
//! A key that is ready is forgotten. resourceVersions are compared as integers, as
//! kube-apiserver's are comparable (KEP-5504); one that is not an integer cannot be waited
//! for and counts as ready. The wait is bounded: a caller that times out must not act on
//! the stale state (the controller requeues the request and counts it in
//! `stale_sync_skips_total`).

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::{
    Object,
    cache::{
        DeletedObject, Dispatch, HandlerOptions, InformerError, ResourceEventHandler,
        SharedIndexInformer,
    },
};

/// What the controller last wrote for a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    /// A create, update or patch that returned this resourceVersion.
    At(u64),
    /// A delete.
    Deleted,
}

/// Wakes waiters whenever the informer applies a change.
struct Waker(Arc<Notify>);

impl<K> ResourceEventHandler<K> for Waker {
    fn on_add(&self, _obj: &Arc<K>, _is_in_initial_list: bool) {
        self.0.notify_waiters();
    }
    fn on_update(&self, _old: &Arc<K>, _new: &Arc<K>) {
        self.0.notify_waiters();
    }
    fn on_delete(&self, _obj: &DeletedObject<K>) {
        self.0.notify_waiters();
    }
}

/// How often a waiter looks again when no change wakes it: the informer records its store
/// resourceVersion just after telling the handlers, so a wake-up can come a moment early.
const RECHECK: Duration = Duration::from_millis(10);

/// The controller's own writes per key, and whether its informer's cache has seen them;
/// see the module docs. Cheap to share (`Arc`).
pub struct ConsistencyStore<K: Object> {
    informer: SharedIndexInformer<K>,
    written: Mutex<HashMap<String, Written>>,
    /// `written.len()`, readable without the lock: with nothing written, every key is ready
    /// at the cost of one atomic load (the common case of a reconcile).
    pending: AtomicUsize,
    changed: Arc<Notify>,
}

impl<K: Object> std::fmt::Debug for ConsistencyStore<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsistencyStore")
            .field("pending", &self.written.lock().len())
            .finish_non_exhaustive()
    }
}

fn parse(resource_version: &str) -> Option<u64> {
    resource_version.parse().ok()
}

impl<K: Object> ConsistencyStore<K> {
    /// A store for writes of objects that `informer` caches (it registers a handler to be
    /// woken by the informer's changes).
    pub fn new(informer: &SharedIndexInformer<K>) -> Result<Arc<Self>, InformerError> {
        let changed = Arc::new(Notify::new());
        // Waking waiters never blocks: a task, not a thread.
        informer.add_event_handler_with_options(
            Waker(changed.clone()),
            HandlerOptions::new().dispatch(Dispatch::Task),
        )?;
        Ok(Arc::new(Self {
            informer: informer.clone(),
            written: Mutex::new(HashMap::new()),
            pending: AtomicUsize::new(0),
            changed,
        }))
    }

    /// Records that a write of `key` (`namespace/name`, or `name`) returned
    /// `resource_version`; a later write of the same key supersedes it.
    pub fn wrote_at(&self, key: &str, resource_version: &str) {
        #[cfg(feature = "planted-bugs")]
        if crate::planted_bugs::CONSISTENCY_FORGETS_WRITES.load(Ordering::Relaxed) {
            return;
        }
        let Some(rv) = parse(resource_version) else {
            return;
        };
        let mut written = self.written.lock();
        let entry = written.entry(key.to_owned()).or_insert(Written::At(rv));
        match entry {
            Written::At(previous) => *previous = (*previous).max(rv),
            Written::Deleted => *entry = Written::At(rv),
        }
        self.pending.store(written.len(), Ordering::Release);
    }

    /// Records that the controller deleted `key`.
    pub fn deleted(&self, key: &str) {
        let mut written = self.written.lock();
        written.insert(key.to_owned(), Written::Deleted);
        self.pending.store(written.len(), Ordering::Release);
    }

    /// Forgets `key` (a caller that gave up on it, or no longer cares).
    pub fn clear(&self, key: &str) {
        let mut written = self.written.lock();
        written.remove(key);
        self.pending.store(written.len(), Ordering::Release);
    }

    /// How many keys wait for the cache.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }

    /// Whether the cache reflects every write of `key` made through this store; a key
    /// found ready is forgotten.
    pub fn is_ready(&self, key: &str) -> bool {
        if self.pending.load(Ordering::Acquire) == 0 {
            return true;
        }
        let mut written = self.written.lock();
        let Some(&write) = written.get(key) else {
            return true;
        };
        let cached = self.informer.indexer().get_by_key(key);
        let ready = match write {
            Written::Deleted => cached.is_none(),
            Written::At(rv) => {
                let object_rv = cached
                    .as_ref()
                    .and_then(|o| o.meta().resource_version.as_deref().and_then(parse));
                let store_rv = parse(&self.informer.last_store_sync_resource_version());
                object_rv.is_some_and(|v| v >= rv) || store_rv.is_some_and(|v| v >= rv)
            }
        };
        if ready {
            written.remove(key);
            self.pending.store(written.len(), Ordering::Release);
        }
        ready
    }

    /// Waits up to `timeout` until every key is ready (before a list); whether they are.
    pub async fn ensure_all_ready(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        let keys: Vec<String> = self.written.lock().keys().cloned().collect();
        for key in keys {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if !self.ensure_ready(&key, left).await {
                return false;
            }
        }
        true
    }

    /// Waits up to `timeout` for [`is_ready`](Self::is_ready); whether it became ready.
    pub async fn ensure_ready(&self, key: &str, timeout: Duration) -> bool {
        if self.is_ready(key) {
            return true;
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.is_ready(key) {
                return true;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return false;
            }
            let next = (now + RECHECK).min(deadline);
            tokio::select! {
                biased;
                () = changed => {}
                () = tokio::time::sleep_until(next) => {}
            }
        }
    }
}
