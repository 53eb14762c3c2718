//! [`DeltaFifo`]: the queue between a reflector and an informer.
//!
//! Unlike [`Fifo`](crate::cache::Fifo) it keeps every change ([`Delta`]) of an object since it was
//! last popped, and it reads (never writes) the consumer's cache — its *known objects* — to
//! decide what a delete, a relist ([`DeltaFifo::replace`]) or a resync must queue. The
//! consumer applies popped deltas to that cache.

use std::{
    fmt,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use ahash::AHashSet;

use crate::Cacheable;
use crate::cache::{
    CacheError, DeletedFinalStateUnknown, DeletedObject, Delta, DeltaType, Deltas, KeyFunc,
    KnownObjects, PagedReplace, PopError, ProcessError, Queue, Queued, ReflectorSink,
    meta_namespace_key,
    queue::core::{QueueCore, QueueState},
    queue::drain::ProcessItem,
    store::index::StoreKey,
};

/// Mutates an object before it is queued, for example to drop `managedFields`. Applied to
/// every object entering the queue except tombstones and resync re-deliveries (those come
/// from the cache and were transformed already). Runs in place when the object is not
/// shared, so it costs no copy.
pub type TransformFunc<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

/// Options of a [`DeltaFifo`] (client-go's `DeltaFIFOOptions`).
pub struct DeltaFifoOptions<K> {
    key_func: KeyFunc<K>,
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    emit_delta_type_replaced: bool,
    transformer: Option<TransformFunc<K>>,
}

impl<K: Cacheable> Default for DeltaFifoOptions<K> {
    fn default() -> Self {
        Self {
            key_func: Arc::new(|obj: &K| meta_namespace_key(obj)),
            known_objects: None,
            emit_delta_type_replaced: false,
            transformer: None,
        }
    }
}

impl<K: Cacheable> DeltaFifoOptions<K> {
    /// Keys objects with `key_func` instead of [`meta_namespace_key`].
    #[must_use]
    pub fn key_func(mut self, key_func: KeyFunc<K>) -> Self {
        self.key_func = key_func;
        self
    }

    /// The consumer's cache: consulted by delete, replace and resync.
    #[must_use]
    pub fn known_objects(mut self, known: impl KnownObjects<K>) -> Self {
        self.known_objects = Some(Arc::new(known));
        self
    }

    /// Queue [`Delta::Replaced`] instead of [`Delta::Sync`] for listed objects (shared
    /// informers turn this on, so handlers can tell a relist from a resync).
    #[must_use]
    pub fn emit_delta_type_replaced(mut self, emit: bool) -> Self {
        self.emit_delta_type_replaced = emit;
        self
    }

    /// Transforms objects as they enter the queue.
    #[must_use]
    pub fn transformer(mut self, transformer: TransformFunc<K>) -> Self {
        self.transformer = Some(transformer);
        self
    }
}

type State<K> = QueueState<Deltas<K>>;

struct Shared<K> {
    core: QueueCore<Deltas<K>>,
    options: DeltaFifoOptions<K>,
    /// The paged relist in progress, if any.
    paged: parking_lot::Mutex<Option<PagedList>>,
    /// Whether `paged` is [`PagedList::Fresh`] (read without the lock on every write).
    fresh_list: AtomicBool,
}

/// What a paged relist in progress remembers.
enum PagedList {
    /// It started with nothing known and nothing queued, so everything known or queued
    /// since came from its pages — until a write from elsewhere, which turns it into
    /// `Tracking` first. It has nothing to compare at the end: no key can be missing from
    /// the list. The first list of an informer's cache is one, and skips the bookkeeping.
    Fresh,
    /// The keys listed so far.
    Tracking(AHashSet<StoreKey>),
}

/// A queue of per-object change lists; cheap to clone. See the module docs.
pub struct DeltaFifo<K> {
    shared: Arc<Shared<K>>,
}

impl<K> Clone for DeltaFifo<K> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<K> fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.core.lock();
        f.debug_struct("DeltaFifo")
            .field("queued", &state.queue.len())
            .field("sync", &state.sync)
            .finish()
    }
}

impl<K: Cacheable> DeltaFifo<K> {
    /// An empty queue with these options.
    pub fn new(options: DeltaFifoOptions<K>) -> Self {
        Self {
            shared: Arc::new(Shared {
                core: QueueCore::new(),
                options,
                paged: parking_lot::Mutex::new(None),
                fresh_list: AtomicBool::new(false),
            }),
        }
    }

    fn key_of(&self, obj: &K) -> Result<String, CacheError> {
        Ok((self.shared.options.key_func)(obj)?)
    }

    /// The key of a deleted object: a tombstone's recorded key, otherwise the key function's.
    fn key_of_deleted(&self, obj: &DeletedObject<K>) -> Result<String, CacheError> {
        match obj {
            DeletedObject::Object(obj) => self.key_of(obj),
            DeletedObject::Tombstone(t) => Ok(t.key.clone()),
        }
    }

    fn transform(&self, mut obj: Arc<K>) -> Arc<K> {
        if let Some(transformer) = &self.shared.options.transformer {
            transformer(Arc::make_mut(&mut obj));
        }
        obj
    }

    /// Appends `delta` to `key`'s list (queuing the key if it had none) and wakes poppers.
    fn queue_locked(&self, state: &mut State<K>, key: &str, delta: Delta<K>) {
        match state.items.get_mut(key) {
            Some(deltas) => deltas.push_dedup(delta),
            None => state.push_new(StoreKey::from(key), Deltas::one(delta)),
        }
    }

    fn add_with_type(&self, delta_type: DeltaType, obj: Arc<K>) -> Result<(), CacheError> {
        self.end_fresh_list();
        let key = self.key_of(&obj)?;
        let obj = self.transform(obj);
        let mut state = self.shared.core.lock();
        state.sync.written();
        self.queue_locked(&mut state, &key, Delta::with_type(delta_type, obj));
        drop(state);
        self.shared.core.wake();
        Ok(())
    }

    /// Queues an [`Delta::Added`].
    pub fn add(&self, obj: Arc<K>) -> Result<(), CacheError> {
        self.add_with_type(DeltaType::Added, obj)
    }

    /// Queues an [`Delta::Updated`].
    pub fn update(&self, obj: Arc<K>) -> Result<(), CacheError> {
        self.add_with_type(DeltaType::Updated, obj)
    }

    /// Queues a [`Delta::Deleted`] carrying the object — unless the key is neither known
    /// nor queued, in which case a relist already reported the deletion and nothing is
    /// queued.
    pub fn delete(&self, obj: Arc<K>) -> Result<(), CacheError> {
        self.end_fresh_list();
        let key = self.key_of(&obj)?;
        let obj = self.transform(obj);
        let mut state = self.shared.core.lock();
        state.sync.written();
        let queued = state.items.contains_key(key.as_str());
        let known = match &self.shared.options.known_objects {
            Some(known) => known.get_by_key(&key).is_some(),
            None => false,
        };
        if !queued && !known {
            return Ok(());
        }
        self.queue_locked(&mut state, &key, Delta::Deleted(DeletedObject::Object(obj)));
        drop(state);
        self.shared.core.wake();
        Ok(())
    }

    /// Puts popped deltas back unless newer ones were queued for their key meanwhile (those
    /// win); they go to the tail.
    pub fn add_if_not_present(&self, deltas: Deltas<K>) -> Result<(), CacheError> {
        self.end_fresh_list();
        let Some(newest) = deltas.newest() else {
            return Ok(());
        };
        let key = match newest {
            Delta::Deleted(d) => self.key_of_deleted(d)?,
            other => match other.object() {
                Some(obj) => self.key_of(obj)?,
                None => return Ok(()),
            },
        };
        let mut state = self.shared.core.lock();
        state.sync.written();
        state.add_if_not_present(StoreKey::from(key), deltas);
        drop(state);
        self.shared.core.wake();
        Ok(())
    }

    /// Replaces the content after a (re)list: queues [`Delta::Replaced`] (or
    /// [`Delta::Sync`]) for every listed object, and a [`Delta::Deleted`] tombstone for
    /// every object that is queued or known but not listed — its delete event was missed.
    ///
    /// As in current client-go, deletion is detected against queued items first (their
    /// newest state becomes the tombstone's object) and then against known objects that
    /// have nothing queued.
    pub fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError> {
        let _ = resource_version;
        self.end_fresh_list();
        let listed = self.prepare_listed(objs)?;
        let mut state = self.shared.core.lock();
        let mut listed_keys: AHashSet<StoreKey> = AHashSet::with_capacity(listed.len());
        self.queue_listed_locked(&mut state, listed, Some(&mut listed_keys));
        // Under the queue lock, like client-go (the pop loop also takes the known objects'
        // lock inside the queue's, never the other way round).
        let unlisted_known = self.unlisted_known_keys(&listed_keys);
        let tombstones = self.detect_deletions_locked(&mut state, &listed_keys, unlisted_known);
        state.sync.listed(listed_keys.len() + tombstones);
        drop(state);
        self.shared.core.wake();
        Ok(())
    }

    /// Starts a relist whose objects arrive page by page ([`DeltaFifo::replace_page`], then
    /// [`DeltaFifo::replace_finish`]): each page is queued as it arrives, so the consumer
    /// replaces cached objects while later pages are still being fetched, and only the listed
    /// keys are kept until the end. Starting again forgets the keys of an unfinished relist.
    pub fn replace_begin(&self) {
        let mut paged = self.shared.paged.lock();
        // Under the queue lock, so an item being popped is either still queued or already
        // applied to the known objects (the pop loop applies it under this lock).
        let fresh = {
            let state = self.shared.core.lock();
            state.items.is_empty()
                && self
                    .shared
                    .options
                    .known_objects
                    .as_ref()
                    .is_none_or(|known| known.is_empty())
        };
        *paged = Some(if fresh {
            PagedList::Fresh
        } else {
            PagedList::Tracking(AHashSet::new())
        });
        self.shared.fresh_list.store(fresh, Ordering::SeqCst);
    }

    /// Queues one page of a relist started with [`DeltaFifo::replace_begin`].
    pub fn replace_page(&self, objs: Vec<Arc<K>>) -> Result<(), CacheError> {
        let listed = self.prepare_listed(objs)?;
        // The listed keys go straight into the relist's set (only the reflector's relist
        // touches it, so holding it across the queue lock contends with nobody).
        let mut paged = self.shared.paged.lock();
        let paged = paged.get_or_insert_with(|| PagedList::Tracking(AHashSet::new()));
        {
            let mut state = self.shared.core.lock();
            match paged {
                PagedList::Fresh => self.queue_listed_locked(&mut state, listed, None),
                PagedList::Tracking(keys) => {
                    keys.reserve(listed.len());
                    self.queue_listed_locked(&mut state, listed, Some(keys));
                }
            }
        }
        self.shared.core.wake();
        Ok(())
    }

    /// Ends a paged relist: queues tombstones for what was queued or known but not listed.
    /// For the first relist, `has_synced` waits for everything queued at this point.
    pub fn replace_finish(&self, resource_version: &str) -> Result<(), CacheError> {
        let _ = resource_version;
        let paged = self.shared.paged.lock().take();
        self.shared.fresh_list.store(false, Ordering::SeqCst);
        let listed_keys = match paged {
            // Everything known or queued was listed: nothing can have vanished.
            Some(PagedList::Fresh) => None,
            Some(PagedList::Tracking(listed_keys)) => Some(listed_keys),
            // Finished without a begin: nothing was listed.
            None => Some(AHashSet::new()),
        };
        let unlisted_known = listed_keys
            .as_ref()
            .map(|listed| self.unlisted_known_keys(listed));
        let mut state = self.shared.core.lock();
        if let (Some(listed_keys), Some(unlisted_known)) = (&listed_keys, unlisted_known) {
            self.detect_deletions_locked(&mut state, listed_keys, unlisted_known);
        }
        let queued = state.queue.len();
        state.sync.listed(queued);
        drop(state);
        self.shared.core.wake();
        Ok(())
    }

    /// Before a write that does not come from the paged relist in progress: a
    /// [`PagedList::Fresh`] relist starts tracking, with every key known or queued so far
    /// (all of them listed by it) as its listed keys. One atomic load otherwise.
    fn end_fresh_list(&self) {
        if !self.shared.fresh_list.load(Ordering::SeqCst) {
            return;
        }
        let mut paged = self.shared.paged.lock();
        if !matches!(*paged, Some(PagedList::Fresh)) {
            return;
        }
        let state = self.shared.core.lock();
        let mut listed: AHashSet<StoreKey> = state.items.keys().cloned().collect();
        if let Some(known) = &self.shared.options.known_objects {
            known.for_each_key(&mut |key| {
                if !listed.contains(key) {
                    listed.insert(StoreKey::from(key));
                }
            });
        }
        drop(state);
        *paged = Some(PagedList::Tracking(listed));
        self.shared.fresh_list.store(false, Ordering::SeqCst);
    }

    /// Keys and transforms listed objects (outside the lock).
    fn prepare_listed(&self, objs: Vec<Arc<K>>) -> Result<Vec<(String, Arc<K>)>, CacheError> {
        objs.into_iter()
            .map(|obj| Ok((self.key_of(&obj)?, self.transform(obj))))
            .collect()
    }

    /// The known keys missing from `listed` (visited in place: a relist of a large cache
    /// copies only the few keys that vanished, not every key).
    fn unlisted_known_keys(&self, listed: &AHashSet<StoreKey>) -> Vec<String> {
        let mut unlisted = Vec::new();
        if let Some(known) = &self.shared.options.known_objects {
            known.for_each_key(&mut |key| {
                if !listed.contains(key) {
                    unlisted.push(key.to_owned());
                }
            });
        }
        // In key order, whatever the cache's hashing: the same relist queues the same
        // deletions in the same order.
        unlisted.sort_unstable();
        unlisted
    }

    /// Queues the listed objects, adding their keys to `listed_keys` when given.
    fn queue_listed_locked(
        &self,
        state: &mut State<K>,
        listed: Vec<(String, Arc<K>)>,
        mut listed_keys: Option<&mut AHashSet<StoreKey>>,
    ) {
        let delta_type = if self.shared.options.emit_delta_type_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        for (key, obj) in listed {
            let delta = Delta::with_type(delta_type, obj);
            let shared = match state.items.get_mut(key.as_str()) {
                Some(deltas) => {
                    deltas.push_dedup(delta);
                    match &mut listed_keys {
                        // One shared key for the queue and the listed-key set.
                        Some(_) => state
                            .items
                            .get_key_value(key.as_str())
                            .map(|(k, _)| k.clone()),
                        None => None,
                    }
                }
                None => {
                    let shared = StoreKey::from(key);
                    state.push_new(shared.clone(), Deltas::one(delta));
                    Some(shared)
                }
            };
            if let (Some(keys), Some(shared)) = (&mut listed_keys, shared) {
                keys.insert(shared);
            }
        }
    }

    /// Queues a tombstone for every queued key not listed (with its newest queued state),
    /// then for every known key not listed (`unlisted_known`) and not queued; returns how
    /// many.
    fn detect_deletions_locked(
        &self,
        state: &mut State<K>,
        listed_keys: &AHashSet<StoreKey>,
        unlisted_known: Vec<String>,
    ) -> usize {
        let vanished_queued: Vec<(StoreKey, Option<Arc<K>>)> = state
            .items
            .iter()
            .filter(|(key, _)| !listed_keys.contains(key.as_ref()))
            .map(|(key, deltas)| {
                (
                    key.clone(),
                    deltas.newest().and_then(Delta::object).cloned(),
                )
            })
            .collect();
        let mut tombstones = vanished_queued.len();
        for (key, obj) in vanished_queued {
            let tombstone = DeletedFinalStateUnknown {
                key: key.to_string(),
                obj,
            };
            self.queue_locked(
                state,
                &key,
                Delta::Deleted(DeletedObject::Tombstone(tombstone)),
            );
        }
        if let Some(known) = &self.shared.options.known_objects {
            for key in unlisted_known {
                #[cfg(feature = "planted-bugs")]
                if crate::planted_bugs::REPLACE_DROPS_DELETIONS
                    .load(std::sync::atomic::Ordering::Relaxed)
                {
                    continue;
                }
                if state.items.contains_key(key.as_str()) {
                    continue;
                }
                let obj = known.get_by_key(&key);
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj,
                };
                self.queue_locked(
                    state,
                    &key,
                    Delta::Deleted(DeletedObject::Tombstone(tombstone)),
                );
                tombstones += 1;
            }
        }
        tombstones
    }

    /// Queues a [`Delta::Sync`] for every known object that has nothing queued (a queued
    /// key will be delivered anyway, and a stale cached copy must not follow a newer event).
    /// Without known objects this does nothing.
    pub fn resync(&self) -> Result<(), CacheError> {
        let Some(known) = &self.shared.options.known_objects else {
            return Ok(());
        };
        let mut state = self.shared.core.lock();
        let mut queued_any = false;
        // In key order, so the same cache resyncs the same way.
        let mut keys = known.list_keys();
        keys.sort_unstable();
        for key in keys {
            let Some(obj) = known.get_by_key(&key) else {
                tracing::debug!(%key, "key vanished from known objects during resync");
                continue;
            };
            let id = self.key_of(&obj)?;
            if state.items.get(id.as_str()).is_some_and(|d| !d.is_empty()) {
                continue;
            }
            self.queue_locked(&mut state, &id, Delta::Sync(obj));
            queued_any = true;
        }
        drop(state);
        if queued_any {
            self.shared.core.wake();
        }
        Ok(())
    }

    /// Waits for the next key and hands all of its deltas, oldest first, to `process`
    /// together with whether they belong to the initial list (popped before the queue had
    /// synced). `process` runs while the queue is locked: keys are processed one at a time,
    /// and [`DeltaFifo::has_synced`] cannot turn true before the last initial item is
    /// processed. [`ProcessError::Requeue`] puts the deltas back with
    /// [`DeltaFifo::add_if_not_present`]. Returns [`PopError::Closed`] once closed and drained.
    pub async fn pop<E>(
        &self,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<Deltas<K>, PopError<E>> {
        self.shared
            .core
            .pop(|_, deltas, initial| process(deltas, initial))
            .await
    }

    /// Up to `max` [`DeltaFifo::pop`]s under one hold of the queue's lock, also handing
    /// `process` each key; returns how many keys were processed ([`Queue::pop_batch`] is
    /// the same for the informer).
    #[cfg(test)]
    pub(crate) async fn pop_many_keyed<E>(
        &self,
        max: usize,
        process: impl FnMut(&StoreKey, &Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<usize, PopError<E>> {
        self.shared.core.pop_many(max, process).await
    }

    /// The deltas queued under `key` (a copy).
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        self.shared.core.lock().items.get(key).cloned()
    }

    /// The newest queued state of every key that has one.
    pub fn list(&self) -> Vec<Arc<K>> {
        let state = self.shared.core.lock();
        state
            .items
            .values()
            .filter_map(|d| d.newest().and_then(Delta::object).cloned())
            .collect()
    }

    /// Every queued key, in pop order.
    pub fn list_keys(&self) -> Vec<String> {
        self.shared
            .core
            .lock()
            .queue
            .iter()
            .map(|k| k.to_string())
            .collect()
    }

    /// How many keys are queued.
    pub fn len(&self) -> usize {
        self.shared.core.lock().queue.len()
    }

    /// Resolves once fewer than `limit` keys are queued, or the queue is closed (the
    /// backpressure a paged relist uses, so it never runs far ahead of the consumer).
    pub async fn wait_for_backlog_below(&self, limit: usize) {
        self.shared.core.wait_len_below(limit).await;
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes the queue: pops drain what is queued, then report [`PopError::Closed`].
    pub fn close(&self) {
        self.shared.core.close();
    }

    /// Whether [`DeltaFifo::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.core.is_closed()
    }

    /// True once the first [`DeltaFifo::replace`] batch (tombstones included) has been
    /// popped and processed, or when anything else was queued before the first replace.
    /// Stays true.
    pub fn has_synced(&self) -> bool {
        self.shared.core.has_synced()
    }
}

impl<K: Cacheable> ReflectorSink<K> for DeltaFifo<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), CacheError> {
        DeltaFifo::add(self, obj)
    }

    fn update(&self, obj: Arc<K>) -> Result<(), CacheError> {
        DeltaFifo::update(self, obj)
    }

    fn delete(&self, obj: &Arc<K>) -> Result<(), CacheError> {
        DeltaFifo::delete(self, obj.clone())
    }

    fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError> {
        DeltaFifo::replace(self, objs, resource_version)
    }

    fn resync(&self) -> Result<(), CacheError> {
        DeltaFifo::resync(self)
    }

    fn paged_replace(&self) -> Option<&dyn PagedReplace<K>> {
        Some(self)
    }
}

impl<K: Cacheable> Queue<K> for DeltaFifo<K> {
    fn pop_batch<'a>(
        &'a self,
        max: usize,
        process: &'a mut ProcessItem<'_, K>,
    ) -> futures::future::BoxFuture<'a, Result<usize, PopError<CacheError>>> {
        Box::pin(self.shared.core.pop_many(max, |key, deltas, initial| {
            process(
                Queued::Deltas {
                    key,
                    deltas: deltas.as_slice(),
                },
                initial,
            )
            .map_err(ProcessError::Failed)
        }))
    }

    fn has_synced(&self) -> bool {
        DeltaFifo::has_synced(self)
    }

    fn close(&self) {
        DeltaFifo::close(self);
    }

    fn is_closed(&self) -> bool {
        DeltaFifo::is_closed(self)
    }

    fn len(&self) -> usize {
        DeltaFifo::len(self)
    }
}

impl<K: Cacheable> PagedReplace<K> for DeltaFifo<K> {
    fn replace_begin(&self) {
        DeltaFifo::replace_begin(self);
    }

    fn replace_page(&self, objs: Vec<Arc<K>>) -> Result<(), CacheError> {
        DeltaFifo::replace_page(self, objs)
    }

    fn replace_finish(&self, resource_version: &str) -> Result<(), CacheError> {
        DeltaFifo::replace_finish(self, resource_version)
    }

    fn wait_for_backlog_below(&self, limit: usize) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(DeltaFifo::wait_for_backlog_below(self, limit))
    }
}

#[cfg(test)]
mod tests {
    use std::{
        sync::atomic::{AtomicBool, AtomicUsize, Ordering},
        time::Duration,
    };

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::cache::{
        Indexer,
        testing::{cm, cm_with},
    };

    type Q = DeltaFifo<ConfigMap>;

    fn with_known(known: &Indexer<ConfigMap>) -> Q {
        DeltaFifo::new(DeltaFifoOptions::default().known_objects(known.clone()))
    }

    fn rv(obj: Option<&Arc<ConfigMap>>) -> Option<String> {
        obj.and_then(|o| o.metadata.resource_version.clone())
    }

    /// (type, resourceVersion, is tombstone) of each delta.
    fn summary(deltas: &Deltas<ConfigMap>) -> Vec<(DeltaType, Option<String>, bool)> {
        deltas
            .as_slice()
            .iter()
            .map(|d| {
                let tomb = matches!(d, Delta::Deleted(DeletedObject::Tombstone(_)));
                (d.delta_type(), rv(d.object()), tomb)
            })
            .collect()
    }

    async fn pop(q: &Q) -> Deltas<ConfigMap> {
        q.pop::<()>(|_, _| Ok(())).await.unwrap()
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_owned())
    }

    #[tokio::test]
    async fn pop_many_processes_up_to_max_keys_in_order_like_single_pops() {
        let q = Q::new(DeltaFifoOptions::default());
        let objs = (0..5).map(|i| Arc::new(cm("ns", &format!("k{i}"))));
        q.replace(objs.collect(), "1").unwrap();
        let mut seen = Vec::new();
        let mut record = |key: &StoreKey, deltas: &Deltas<ConfigMap>, initial: bool| {
            assert_eq!(deltas.len(), 1);
            seen.push((key.to_string(), initial));
            Ok::<(), ProcessError<()>>(())
        };
        assert_eq!(q.pop_many_keyed(3, &mut record).await, Ok(3));
        assert!(!q.has_synced(), "two initial keys are still queued");
        assert_eq!(q.pop_many_keyed(10, &mut record).await, Ok(2));
        assert!(q.has_synced());
        let keys: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["ns/k0", "ns/k1", "ns/k2", "ns/k3", "ns/k4"]);
        assert!(seen.iter().all(|(_, initial)| *initial));
    }

    #[tokio::test]
    async fn pop_many_stops_at_a_requeue_and_puts_the_key_back() {
        let q = Q::new(DeltaFifoOptions::default());
        for name in ["a", "b", "c"] {
            q.add(Arc::new(cm("ns", name))).unwrap();
        }
        let mut processed = Vec::new();
        let result = q
            .pop_many_keyed(10, |key, _, _| {
                processed.push(key.to_string());
                if key.as_ref() == "ns/b" {
                    Err(ProcessError::Requeue("retry"))
                } else {
                    Ok(())
                }
            })
            .await;
        assert_eq!(
            result,
            Err(PopError::Process {
                error: "retry",
                requeued: true
            })
        );
        assert_eq!(processed, ["ns/a", "ns/b"]);
        assert_eq!(q.list_keys(), ["ns/c", "ns/b"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_backlog_wait_wakes_once_pops_take_the_queue_under_its_limit() {
        let q = Q::new(DeltaFifoOptions::default());
        for i in 0..10 {
            q.add(Arc::new(cm("ns", &format!("k{i}")))).unwrap();
        }
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.wait_for_backlog_below(5).await }
        });
        for _ in 0..5 {
            pop(&q).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!waiter.is_finished(), "five keys are still queued");
        pop(&q).await;
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("the pop that took the backlog under the limit did not wake the waiter")
            .unwrap();
        assert_eq!(q.len(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn a_backlog_wait_returns_at_once_under_the_limit_and_when_closed() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        tokio::time::timeout(Duration::from_secs(1), q.wait_for_backlog_below(2))
            .await
            .expect("one key is under a limit of two");
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.wait_for_backlog_below(1).await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!waiter.is_finished());
        q.close();
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("closing the queue must release a producer waiting on it")
            .unwrap();
    }

    #[tokio::test]
    async fn pop_hands_over_every_delta_of_a_key_oldest_first() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        q.update(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        q.update(Arc::new(cm_with("ns", "a", "3", &[]))).unwrap();
        q.delete(Arc::new(cm_with("ns", "a", "4", &[]))).unwrap();
        use DeltaType::*;
        assert_eq!(
            summary(&pop(&q).await),
            vec![
                (Added, s("1"), false),
                (Updated, s("2"), false),
                (Updated, s("3"), false),
                (Deleted, s("4"), false)
            ]
        );
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn repeated_deletes_collapse_into_one() {
        let known = Indexer::default();
        known.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        let q = with_known(&known);
        q.delete(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        q.delete(Arc::new(cm_with("ns", "a", "3", &[]))).unwrap();
        assert_eq!(
            summary(&pop(&q).await),
            vec![(DeltaType::Deleted, s("2"), false)]
        );
    }

    #[test]
    fn delete_of_a_key_neither_known_nor_queued_queues_nothing() {
        let known = Indexer::default();
        let q = with_known(&known);
        q.delete(Arc::new(cm("ns", "ghost"))).unwrap();
        assert!(q.is_empty());
        let q = Q::new(DeltaFifoOptions::default());
        q.delete(Arc::new(cm("ns", "ghost"))).unwrap();
        assert!(
            q.is_empty(),
            "without known objects only the queue is consulted"
        );
    }

    #[tokio::test]
    async fn delete_of_a_known_key_queues_the_real_object() {
        let known = Indexer::default();
        known.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        let q = with_known(&known);
        q.delete(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        assert_eq!(
            summary(&pop(&q).await),
            vec![(DeltaType::Deleted, s("2"), false)]
        );
    }

    #[tokio::test]
    async fn delete_of_a_queued_but_unknown_key_is_queued() {
        let q = with_known(&Indexer::default());
        q.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        q.delete(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        use DeltaType::*;
        assert_eq!(
            summary(&pop(&q).await),
            vec![(Added, s("1"), false), (Deleted, s("2"), false)]
        );
    }

    #[tokio::test]
    async fn replace_queues_sync_for_listed_objects_by_default() {
        let q = Q::new(DeltaFifoOptions::default());
        q.replace(vec![Arc::new(cm_with("ns", "a", "1", &[]))], "1")
            .unwrap();
        assert_eq!(
            summary(&pop(&q).await),
            vec![(DeltaType::Sync, s("1"), false)]
        );
    }

    #[tokio::test]
    async fn replace_queues_replaced_when_asked_to() {
        let q = Q::new(DeltaFifoOptions::default().emit_delta_type_replaced(true));
        q.replace(vec![Arc::new(cm_with("ns", "a", "1", &[]))], "1")
            .unwrap();
        assert_eq!(
            summary(&pop(&q).await),
            vec![(DeltaType::Replaced, s("1"), false)]
        );
    }

    #[tokio::test]
    async fn replace_queues_a_tombstone_for_each_known_object_missing_from_the_list() {
        let known = Indexer::default();
        known
            .add(Arc::new(cm_with("ns", "kept", "1", &[])))
            .unwrap();
        known
            .add(Arc::new(cm_with("ns", "gone", "7", &[])))
            .unwrap();
        let q = with_known(&known);
        q.replace(vec![Arc::new(cm_with("ns", "kept", "2", &[]))], "9")
            .unwrap();
        let gone = q.get_by_key("ns/gone").expect("tombstone queued");
        assert_eq!(summary(&gone), vec![(DeltaType::Deleted, s("7"), true)]);
        let Some(Delta::Deleted(DeletedObject::Tombstone(t))) = gone.newest() else {
            panic!()
        };
        assert_eq!(t.key, "ns/gone");
        assert_eq!(
            summary(&q.get_by_key("ns/kept").unwrap()),
            vec![(DeltaType::Sync, s("2"), false)]
        );
        assert!(
            known.get_by_key("ns/gone").is_some(),
            "the queue never writes known objects"
        );
    }

    #[tokio::test]
    async fn replace_detects_deletions_among_queued_items_with_their_newest_state() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        q.update(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        q.replace(vec![Arc::new(cm_with("ns", "b", "3", &[]))], "3")
            .unwrap();
        use DeltaType::*;
        assert_eq!(
            summary(&q.get_by_key("ns/a").unwrap()),
            vec![
                (Added, s("1"), false),
                (Updated, s("2"), false),
                (Deleted, s("2"), true)
            ]
        );
    }

    #[tokio::test]
    async fn a_queued_unknown_object_missing_from_a_relist_is_also_deleted() {
        // Known objects hold "k"; "q" was added by a watch event not yet popped.
        let known = Indexer::default();
        known.add(Arc::new(cm_with("ns", "k", "1", &[]))).unwrap();
        let q = with_known(&known);
        q.add(Arc::new(cm_with("ns", "q", "2", &[]))).unwrap();
        q.replace(vec![], "5").unwrap();
        let queued = q.get_by_key("ns/q").unwrap();
        assert_eq!(
            queued.newest().map(Delta::delta_type),
            Some(DeltaType::Deleted)
        );
        assert!(
            q.get_by_key("ns/k")
                .unwrap()
                .newest()
                .is_some_and(|d| matches!(d, Delta::Deleted(DeletedObject::Tombstone(_))))
        );
    }

    #[tokio::test]
    async fn a_paged_relist_tombstones_what_no_page_listed() {
        let known = Indexer::default();
        known
            .add(Arc::new(cm_with("ns", "kept", "1", &[])))
            .unwrap();
        known
            .add(Arc::new(cm_with("ns", "gone", "1", &[])))
            .unwrap();
        let q = with_known(&known);
        q.add(Arc::new(cm_with("ns", "queued-gone", "2", &[])))
            .unwrap();
        q.replace_begin();
        q.replace_page(vec![Arc::new(cm_with("ns", "kept", "3", &[]))])
            .unwrap();
        q.replace_page(vec![Arc::new(cm_with("ns", "new", "3", &[]))])
            .unwrap();
        q.replace_finish("3").unwrap();
        let tomb = |k: &str| {
            q.get_by_key(k)
                .unwrap()
                .newest()
                .is_some_and(|d| matches!(d, Delta::Deleted(DeletedObject::Tombstone(_))))
        };
        assert!(tomb("ns/gone") && tomb("ns/queued-gone"));
        assert_eq!(
            summary(&q.get_by_key("ns/kept").unwrap()),
            vec![(DeltaType::Sync, s("3"), false)]
        );
        assert_eq!(
            summary(&q.get_by_key("ns/new").unwrap()),
            vec![(DeltaType::Sync, s("3"), false)]
        );
    }

    /// Pops one key and applies its newest object to `known`, as an informer would.
    async fn pop_into(q: &Q, known: &Indexer<ConfigMap>) {
        let deltas = pop(q).await;
        if let Some(obj) = deltas.newest().and_then(Delta::object) {
            known.add(obj.clone()).unwrap();
        }
    }

    #[tokio::test]
    async fn a_first_paged_list_into_an_empty_cache_queues_no_tombstones() {
        let known = Indexer::default();
        let q = with_known(&known);
        q.replace_begin();
        q.replace_page(vec![Arc::new(cm("ns", "a")), Arc::new(cm("ns", "b"))])
            .unwrap();
        pop_into(&q, &known).await;
        q.replace_page(vec![Arc::new(cm("ns", "c"))]).unwrap();
        q.replace_finish("2").unwrap();
        assert_eq!(
            q.list_keys(),
            vec!["ns/b", "ns/c"],
            "only what was not popped"
        );
        for key in ["ns/b", "ns/c"] {
            let deltas = q.get_by_key(key).unwrap();
            assert!(
                deltas
                    .as_slice()
                    .iter()
                    .all(|d| d.delta_type() == DeltaType::Sync),
                "{key}: no tombstone"
            );
        }
        pop_into(&q, &known).await;
        pop_into(&q, &known).await;
        assert!(q.has_synced());
        assert_eq!(known.len(), 3);
    }

    #[tokio::test]
    async fn a_write_from_elsewhere_during_a_first_paged_list_is_still_compared() {
        let known = Indexer::default();
        let q = with_known(&known);
        q.replace_begin();
        q.replace_page(vec![Arc::new(cm("ns", "a"))]).unwrap();
        pop_into(&q, &known).await;
        // Not from the list: the relist must now compare, as a relist of a full cache does.
        q.add(Arc::new(cm("ns", "stray"))).unwrap();
        q.replace_page(vec![Arc::new(cm("ns", "b"))]).unwrap();
        q.replace_finish("2").unwrap();
        let stray = q.get_by_key("ns/stray").unwrap();
        assert!(
            matches!(
                stray.newest(),
                Some(Delta::Deleted(DeletedObject::Tombstone(_)))
            ),
            "queued but not listed: a tombstone follows its add"
        );
        assert!(
            q.get_by_key("ns/a").is_none(),
            "known and listed: nothing queued"
        );
        assert_eq!(
            summary(&q.get_by_key("ns/b").unwrap()),
            vec![(DeltaType::Sync, None, false)]
        );
    }

    #[tokio::test]
    async fn a_first_paged_relist_syncs_only_after_finish_and_everything_queued_is_popped() {
        let q = Q::new(DeltaFifoOptions::default());
        q.replace_begin();
        q.replace_page(vec![Arc::new(cm("ns", "a"))]).unwrap();
        let mut initial = None;
        q.pop::<()>(|_, i| {
            initial = Some(i);
            Ok(())
        })
        .await
        .unwrap();
        assert_eq!(
            initial,
            Some(true),
            "popped mid-list: part of the initial list"
        );
        assert!(!q.has_synced(), "not before the list is finished");
        q.replace_page(vec![Arc::new(cm("ns", "b"))]).unwrap();
        q.replace_finish("2").unwrap();
        assert!(!q.has_synced(), "b is still queued");
        pop(&q).await;
        assert!(q.has_synced());
    }

    #[tokio::test]
    async fn restarting_a_paged_relist_forgets_the_unfinished_keys() {
        let known = Indexer::default();
        known.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        let q = with_known(&known);
        q.replace_begin();
        q.replace_page(vec![Arc::new(cm_with("ns", "a", "1", &[]))])
            .unwrap();
        pop(&q).await;
        q.replace_begin(); // e.g. an expired continue token: start over
        q.replace_page(vec![]).unwrap();
        q.replace_finish("5").unwrap();
        let deltas = q
            .get_by_key("ns/a")
            .expect("a was not in the restarted list");
        assert!(matches!(
            deltas.newest(),
            Some(Delta::Deleted(DeletedObject::Tombstone(_)))
        ));
    }

    #[tokio::test]
    async fn resync_queues_sync_for_known_objects_with_nothing_queued() {
        let known = Indexer::default();
        known
            .add(Arc::new(cm_with("ns", "idle", "1", &[])))
            .unwrap();
        known
            .add(Arc::new(cm_with("ns", "busy", "1", &[])))
            .unwrap();
        let q = with_known(&known);
        q.update(Arc::new(cm_with("ns", "busy", "2", &[]))).unwrap();
        q.resync().unwrap();
        assert_eq!(
            summary(&q.get_by_key("ns/idle").unwrap()),
            vec![(DeltaType::Sync, s("1"), false)]
        );
        assert_eq!(
            summary(&q.get_by_key("ns/busy").unwrap()),
            vec![(DeltaType::Updated, s("2"), false)],
            "a stale cached copy must not follow a newer queued event"
        );
    }

    #[test]
    fn resync_without_known_objects_does_nothing() {
        let q = Q::new(DeltaFifoOptions::default());
        q.resync().unwrap();
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn a_relist_after_a_queued_delete_still_delivers_the_listed_state() {
        // Newer client-go no longer drops a Sync that follows a Deleted.
        let known = Indexer::default();
        known.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        let q = with_known(&known);
        q.delete(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        q.replace(vec![Arc::new(cm_with("ns", "a", "3", &[]))], "3")
            .unwrap();
        use DeltaType::*;
        assert_eq!(
            summary(&pop(&q).await),
            vec![(Deleted, s("2"), false), (Sync, s("3"), false)]
        );
    }

    #[tokio::test]
    async fn has_synced_waits_for_the_first_replace_batch_including_tombstones() {
        let known = Indexer::default();
        known
            .add(Arc::new(cm_with("ns", "gone", "1", &[])))
            .unwrap();
        let q = with_known(&known);
        assert!(!q.has_synced(), "nothing happened yet");
        q.replace(vec![Arc::new(cm("ns", "a"))], "1").unwrap();
        assert!(!q.has_synced());
        pop(&q).await;
        assert!(
            !q.has_synced(),
            "the tombstone is part of the initial batch"
        );
        q.add(Arc::new(cm("ns", "late"))).unwrap();
        pop(&q).await;
        assert!(q.has_synced());
        q.replace(vec![Arc::new(cm("ns", "x"))], "2").unwrap();
        assert!(q.has_synced(), "stays true after later relists");
    }

    #[test]
    fn any_write_before_the_first_replace_means_synced() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        assert!(q.has_synced());
        let q = Q::new(DeltaFifoOptions::default());
        q.delete(Arc::new(cm("ns", "a"))).unwrap();
        assert!(q.has_synced(), "even a delete that queued nothing");
    }

    #[tokio::test]
    async fn initial_list_items_are_flagged_as_such() {
        let q = Q::new(DeltaFifoOptions::default());
        q.replace(vec![Arc::new(cm("ns", "a")), Arc::new(cm("ns", "b"))], "1")
            .unwrap();
        let mut flags = Vec::new();
        for _ in 0..2 {
            q.pop::<()>(|_, initial| {
                flags.push(initial);
                Ok(())
            })
            .await
            .unwrap();
        }
        q.add(Arc::new(cm("ns", "c"))).unwrap();
        q.pop::<()>(|_, initial| {
            flags.push(initial);
            Ok(())
        })
        .await
        .unwrap();
        assert_eq!(flags, vec![true, true, false]);
    }

    #[tokio::test]
    async fn has_synced_turns_true_only_after_the_last_initial_item_is_processed() {
        let q = Q::new(DeltaFifoOptions::default());
        q.replace(vec![Arc::new(cm("ns", "a"))], "1").unwrap();
        let processed = Arc::new(AtomicBool::new(false));
        let observer = {
            let (q, processed) = (q.clone(), processed.clone());
            move || {
                let synced = q.has_synced();
                (synced, processed.load(Ordering::SeqCst))
            }
        };
        let mut handle = None;
        q.pop::<()>(|_, _| {
            handle = Some(std::thread::spawn(observer));
            std::thread::sleep(Duration::from_millis(20));
            processed.store(true, Ordering::SeqCst);
            Ok(())
        })
        .await
        .unwrap();
        let (synced, was_processed) = handle.unwrap().join().unwrap();
        assert!(synced);
        assert!(
            was_processed,
            "has_synced answered before processing finished"
        );
    }

    #[tokio::test]
    async fn requeued_deltas_go_back_to_the_tail() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        q.add(Arc::new(cm_with("ns", "b", "1", &[]))).unwrap();
        let err = q
            .pop(|_, _| Err(ProcessError::Requeue("again")))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            PopError::Process {
                error: "again",
                requeued: true
            }
        );
        assert_eq!(q.list_keys(), vec!["ns/b", "ns/a"]);
    }

    #[tokio::test]
    async fn add_if_not_present_yields_to_newer_queued_deltas() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        let old = pop(&q).await;
        q.update(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        q.add_if_not_present(old.clone()).unwrap();
        assert_eq!(
            summary(&pop(&q).await),
            vec![(DeltaType::Updated, s("2"), false)]
        );
        q.add_if_not_present(old).unwrap();
        assert_eq!(
            summary(&pop(&q).await),
            vec![(DeltaType::Added, s("1"), false)]
        );
    }

    #[tokio::test]
    async fn failed_process_drops_the_deltas() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        let err = q
            .pop(|_, _| Err(ProcessError::Failed(1)))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            PopError::Process {
                error: 1,
                requeued: false
            }
        );
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn close_drains_the_queue_then_reports_closed() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        q.close();
        assert!(q.is_closed());
        pop(&q).await;
        assert_eq!(
            q.pop::<()>(|_, _| Ok(())).await.unwrap_err(),
            PopError::Closed
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_pops_process_one_key_at_a_time() {
        let q = Q::new(DeltaFifoOptions::default());
        for i in 0..200 {
            q.add(Arc::new(cm("ns", &format!("o{i}")))).unwrap();
        }
        q.close();
        let active = Arc::new(AtomicUsize::new(0));
        let max_seen = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let (q, active, max_seen) = (q.clone(), active.clone(), max_seen.clone());
            tasks.push(tokio::spawn(async move {
                let mut popped = 0;
                while q
                    .pop::<()>(|_, _| {
                        let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                        max_seen.fetch_max(now, Ordering::SeqCst);
                        std::hint::spin_loop();
                        active.fetch_sub(1, Ordering::SeqCst);
                        Ok(())
                    })
                    .await
                    .is_ok()
                {
                    popped += 1;
                }
                popped
            }));
        }
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        assert_eq!(total, 200);
        assert_eq!(max_seen.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn transformer_applies_to_incoming_objects_but_not_to_resync_or_tombstones() {
        let calls = Arc::new(AtomicUsize::new(0));
        let known = Indexer::default();
        known
            .add(Arc::new(cm_with("ns", "cached", "1", &[("keep", "me")])))
            .unwrap();
        let q = DeltaFifo::new(
            DeltaFifoOptions::default()
                .known_objects(known.clone())
                .transformer(Arc::new({
                    let calls = calls.clone();
                    move |obj: &mut ConfigMap| {
                        calls.fetch_add(1, Ordering::SeqCst);
                        obj.metadata.labels = None;
                    }
                })),
        );
        q.add(Arc::new(cm_with("ns", "a", "1", &[("drop", "me")])))
            .unwrap();
        q.replace(
            vec![Arc::new(cm_with("ns", "b", "1", &[("drop", "me")]))],
            "1",
        )
        .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2, "add and listed object");
        let a = pop(&q).await;
        assert!(
            a.newest()
                .and_then(Delta::object)
                .unwrap()
                .metadata
                .labels
                .is_none()
        );
        // "cached" was tombstoned by the replace (not listed): no transform for it.
        while !q.is_empty() {
            pop(&q).await;
        }
        q.resync().unwrap();
        assert_eq!(
            calls.load(Ordering::SeqCst),
            2,
            "resync re-delivers cached objects untouched"
        );
        let synced = pop(&q).await;
        assert!(
            synced
                .newest()
                .and_then(Delta::object)
                .unwrap()
                .metadata
                .labels
                .is_some()
        );
    }

    #[test]
    fn list_returns_the_newest_state_and_get_by_key_a_copy() {
        let q = Q::new(DeltaFifoOptions::default());
        q.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        q.update(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        assert_eq!(rv(q.list().first()), s("2"));
        let copy = q.get_by_key("ns/a").unwrap();
        drop(copy);
        assert_eq!(q.get_by_key("ns/a").unwrap().len(), 2);
        assert!(q.get_by_key("ns/none").is_none());
    }

    #[test]
    fn an_object_without_a_key_is_rejected() {
        let q = Q::new(DeltaFifoOptions::default());
        assert!(matches!(
            q.add(Arc::new(cm("ns", ""))),
            Err(CacheError::Key(_))
        ));
        assert!(q.is_empty());
    }
}
