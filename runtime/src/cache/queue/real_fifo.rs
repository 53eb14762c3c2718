//! [`RealFifo`]: the informer's default queue (client-go 1.36's `RealFIFO`, the only
//! informer queue since `InOrderInformers` went GA).
//!
//! Every change the reflector reports is queued as it came, in server order across keys:
//! nothing is merged per key, so a handler sees an object's every state and the changes of
//! different objects in the order the server made them. A relist is queued as one
//! [`Relist`] item (listed objects plus tombstones for what went missing) and a resync as
//! one [`Resync`] item — client-go's atomic events — so the consumer applies each in one
//! step. A watch bookmark is queued too, so the consumer knows how far it is current.

use std::{collections::VecDeque, fmt, sync::Arc};

use ahash::{AHashMap, AHashSet};
use futures::future::BoxFuture;
use parking_lot::Mutex;

use crate::Cacheable;
use crate::cache::{
    CacheError, DeletedFinalStateUnknown, Delta, DeltaType, KeyFunc, KnownObjects, PagedReplace,
    PopError, Queue, Queued, ReflectorSink, Relist, Resync, TransformFunc, queue::core::PopWaiters,
    queue::drain::ProcessItem, queue::sync_state::SyncState, store::index::StoreKey,
    store::keys::meta_namespace_store_key,
};

/// Options of a [`RealFifo`] (client-go's `RealFIFOOptions`).
pub struct RealFifoOptions<K> {
    /// `None`: [`meta_namespace_key`](crate::cache::meta_namespace_key), built straight into the shared key.
    key_func: Option<KeyFunc<K>>,
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    transformer: Option<TransformFunc<K>>,
}

impl<K: Cacheable> Default for RealFifoOptions<K> {
    fn default() -> Self {
        Self {
            key_func: None,
            known_objects: None,
            transformer: None,
        }
    }
}

impl<K: Cacheable> RealFifoOptions<K> {
    /// Keys objects with `key_func` instead of [`meta_namespace_key`](crate::cache::meta_namespace_key).
    #[must_use]
    pub fn key_func(mut self, key_func: KeyFunc<K>) -> Self {
        self.key_func = Some(key_func);
        self
    }

    /// The consumer's cache: a relist tombstones what it holds but the list lacks, and a
    /// resync re-delivers it. Without it, a relist compares against the queue only and a
    /// resync does nothing.
    #[must_use]
    pub fn known_objects(mut self, known: impl KnownObjects<K>) -> Self {
        self.known_objects = Some(Arc::new(known));
        self
    }

    /// Transforms objects as they enter the queue (not tombstones or resyncs: those come
    /// from the cache and were transformed already).
    #[must_use]
    pub fn transformer(mut self, transformer: TransformFunc<K>) -> Self {
        self.transformer = Some(transformer);
        self
    }
}

/// One queued item.
enum Entry<K> {
    Change(StoreKey, Delta<K>),
    Relist(Relist<K>),
    Resync(Resync<K>),
    Bookmark(String),
}

struct State<K> {
    items: VecDeque<Entry<K>>,
    /// The first population's progress (the first relist is one item) and whether the
    /// queue was closed.
    sync: SyncState,
}

impl<K> State<K> {
    fn has_synced(&self) -> bool {
        self.sync.has_synced()
    }
}

/// Keyed, transformed listed objects.
type Listed<K> = Vec<(StoreKey, Arc<K>)>;

struct Shared<K> {
    state: Mutex<State<K>>,
    pops: PopWaiters,
    options: RealFifoOptions<K>,
    /// The pages of a paged relist in progress.
    paged: Mutex<Option<Listed<K>>>,
}

/// An in-order queue of changes; cheap to clone. See the module docs.
pub struct RealFifo<K> {
    shared: Arc<Shared<K>>,
}

impl<K> Clone for RealFifo<K> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<K> fmt::Debug for RealFifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("RealFifo")
            .field("queued", &state.items.len())
            .field("sync", &state.sync)
            .finish()
    }
}

/// What [`RealFifo::pop`] hands back: one item, owned.
#[derive(Debug)]
pub enum Popped<K> {
    /// One change of one object.
    Delta(Arc<str>, Delta<K>),
    /// A relist.
    Relist(Relist<K>),
    /// A resync.
    Resync(Resync<K>),
    /// A bookmark's resourceVersion.
    Bookmark(String),
}

impl<K> Popped<K> {
    /// The item as the deltas a non-atomic queue would hand over (a bookmark has none).
    pub fn into_deltas(self) -> Vec<Delta<K>> {
        match self {
            Self::Delta(_, delta) => vec![delta],
            Self::Relist(relist) => relist.deltas(),
            Self::Resync(resync) => resync.deltas(),
            Self::Bookmark(_) => Vec::new(),
        }
    }
}

impl<K: Cacheable> RealFifo<K> {
    /// An empty queue with these options.
    pub fn new(options: RealFifoOptions<K>) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    items: VecDeque::new(),
                    sync: SyncState::new(),
                }),
                pops: PopWaiters::new(),
                options,
                paged: Mutex::new(None),
            }),
        }
    }

    fn key_of(&self, obj: &K) -> Result<StoreKey, CacheError> {
        Ok(match &self.shared.options.key_func {
            Some(key_func) => StoreKey::from(key_func(obj)?),
            None => meta_namespace_store_key(obj)?,
        })
    }

    fn transform(&self, mut obj: Arc<K>) -> Arc<K> {
        if let Some(transformer) = &self.shared.options.transformer {
            transformer(Arc::make_mut(&mut obj));
        }
        obj
    }

    fn push(&self, entry: Entry<K>) {
        let mut state = self.shared.state.lock();
        state.sync.written();
        state.items.push_back(entry);
        drop(state);
        self.shared.pops.wake();
    }

    fn queue_change(&self, delta_type: DeltaType, obj: Arc<K>) -> Result<(), CacheError> {
        let key = self.key_of(&obj)?;
        let obj = self.transform(obj);
        self.push(Entry::Change(key, Delta::with_type(delta_type, obj)));
        Ok(())
    }

    /// Queues a [`Delta::Added`].
    pub fn add(&self, obj: Arc<K>) -> Result<(), CacheError> {
        self.queue_change(DeltaType::Added, obj)
    }

    /// Queues a [`Delta::Updated`].
    pub fn update(&self, obj: Arc<K>) -> Result<(), CacheError> {
        self.queue_change(DeltaType::Updated, obj)
    }

    /// Queues a [`Delta::Deleted`] carrying the object (always: unlike the keyed queue, an
    /// in-order queue has nothing to merge it into).
    pub fn delete(&self, obj: Arc<K>) -> Result<(), CacheError> {
        self.queue_change(DeltaType::Deleted, obj)
    }

    /// Queues that the cache is current up to `resource_version` (a watch bookmark).
    pub fn bookmark(&self, resource_version: &str) {
        self.push(Entry::Bookmark(resource_version.to_owned()));
    }

    /// Queues a relist as one [`Relist`] item: tombstones first — for each key whose last
    /// queued change is not a deletion and that the list lacks (with that change's object),
    /// then for each known key the list lacks that has nothing queued (with the cached
    /// object) — then the listed objects. For the first relist, [`RealFifo::has_synced`]
    /// waits for everything queued at this point.
    pub fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError> {
        let listed = self.prepare_listed(objs)?;
        self.queue_relist(listed, resource_version);
        Ok(())
    }

    /// Starts a relist whose objects arrive page by page ([`RealFifo::replace_page`], then
    /// [`RealFifo::replace_finish`]); starting again forgets an unfinished one. The pages
    /// are gathered and queued as one [`Relist`] at the end: a relist is applied atomically.
    pub fn replace_begin(&self) {
        *self.shared.paged.lock() = Some(Vec::new());
    }

    /// One page of a relist started with [`RealFifo::replace_begin`].
    pub fn replace_page(&self, objs: Vec<Arc<K>>) -> Result<(), CacheError> {
        let listed = self.prepare_listed(objs)?;
        self.shared
            .paged
            .lock()
            .get_or_insert_with(Vec::new)
            .extend(listed);
        Ok(())
    }

    /// Ends a paged relist: queues it as one [`Relist`], as [`RealFifo::replace`] does.
    pub fn replace_finish(&self, resource_version: &str) -> Result<(), CacheError> {
        let listed = self.shared.paged.lock().take().unwrap_or_default();
        self.queue_relist(listed, resource_version);
        Ok(())
    }

    /// Keys and transforms listed objects (outside the lock). A listed object the known
    /// objects (the consumer's cache) already hold unchanged — same key, uid and
    /// resourceVersion — is replaced by the cached `Arc` and the fresh decode dropped at
    /// once, so a relist holds only what changed beside the cache, not a second copy of it.
    /// (client-go keeps both copies until the swap; the content of one uid at one
    /// resourceVersion never changes, so the cached object is what the list would hold.)
    fn prepare_listed(&self, objs: Vec<Arc<K>>) -> Result<Listed<K>, CacheError> {
        // An empty cache (an informer's first list) has nothing to offer: no lookups.
        let cached = self
            .shared
            .options
            .known_objects
            .as_ref()
            .filter(|known| !known.is_empty());
        objs.into_iter()
            .map(|obj| {
                let key = self.key_of(&obj)?;
                let unchanged = cached
                    .and_then(|known| known.get_by_key(&key))
                    .filter(|cached| same_version(cached.as_ref(), obj.as_ref()));
                let obj = match unchanged {
                    Some(cached) => cached,
                    None => self.transform(obj),
                };
                Ok((key, obj))
            })
            .collect()
    }

    fn queue_relist(&self, listed: Listed<K>, resource_version: &str) {
        let mut state = self.shared.state.lock();
        let known = self.shared.options.known_objects.as_ref();
        let nothing_to_compare =
            state.items.is_empty() && known.is_none_or(|known| known.is_empty());
        // An empty queue over an empty cache (an informer's first list) has nothing that can
        // have gone missing: no listed-key set is built.
        let tombstones = if nothing_to_compare {
            Vec::new()
        } else {
            let listed_keys: AHashSet<&str> = listed.iter().map(|(k, _)| k.as_ref()).collect();
            tombstones_locked(&state, known, &listed_keys)
        };
        state.items.push_back(Entry::Relist(Relist {
            tombstones,
            objects: listed,
            resource_version: resource_version.to_owned(),
        }));
        let queued = state.items.len();
        state.sync.listed(queued);
        drop(state);
        self.shared.pops.wake();
    }

    /// Queues one [`Resync`] of every known object that has nothing queued (a queued key
    /// will be delivered anyway, and a stale cached copy must not follow a newer event).
    /// Without known objects, or with nothing to re-deliver, nothing is queued.
    pub fn resync(&self) -> Result<(), CacheError> {
        let Some(known) = &self.shared.options.known_objects else {
            return Ok(());
        };
        let mut state = self.shared.state.lock();
        let queued = queued_keys_locked(&state);
        let mut objects = Vec::new();
        // In key order, so the same cache resyncs the same way.
        let mut keys = known.list_keys();
        keys.sort_unstable();
        for key in keys {
            if queued.contains(key.as_str()) {
                continue;
            }
            let Some(obj) = known.get_by_key(&key) else {
                tracing::debug!(%key, "key vanished from known objects during resync");
                continue;
            };
            objects.push((StoreKey::from(key), obj));
        }
        if objects.is_empty() {
            return Ok(());
        }
        state.items.push_back(Entry::Resync(Resync { objects }));
        drop(state);
        self.shared.pops.wake();
        Ok(())
    }

    /// Waits for the next item and returns it, with whether it belongs to the initial list.
    pub async fn pop(&self) -> Result<(Popped<K>, bool), PopError<CacheError>> {
        self.shared
            .pops
            .wait_for(|| {
                let mut state = self.shared.state.lock();
                match take_locked(&mut state) {
                    Some((entry, initial)) => Some(Ok((
                        match entry {
                            Entry::Change(key, delta) => Popped::Delta(key, delta),
                            Entry::Relist(relist) => Popped::Relist(relist),
                            Entry::Resync(resync) => Popped::Resync(resync),
                            Entry::Bookmark(rv) => Popped::Bookmark(rv),
                        },
                        initial,
                    ))),
                    None => state.sync.is_closed().then_some(Err(PopError::Closed)),
                }
            })
            .await
    }

    /// See [`Queue::pop_batch`].
    pub async fn pop_batch(
        &self,
        max: usize,
        process: &mut ProcessItem<'_, K>,
    ) -> Result<usize, PopError<CacheError>> {
        self.shared
            .pops
            .wait_for(|| {
                let mut state = self.shared.state.lock();
                let mut done = 0;
                while done < max.max(1) {
                    let Some((entry, initial)) = take_locked(&mut state) else {
                        break;
                    };
                    let result = match entry {
                        Entry::Change(key, delta) => process(
                            Queued::Deltas {
                                key: &key,
                                deltas: std::slice::from_ref(&delta),
                            },
                            initial,
                        ),
                        Entry::Relist(relist) => process(Queued::Relist(relist), initial),
                        Entry::Resync(resync) => process(Queued::Resync(resync), initial),
                        Entry::Bookmark(rv) => process(Queued::Bookmark(rv), initial),
                    };
                    if let Err(error) = result {
                        return Some(Err(PopError::Process {
                            error,
                            requeued: false,
                        }));
                    }
                    done += 1;
                }
                if done > 0 {
                    Some(Ok(done))
                } else {
                    state.sync.is_closed().then_some(Err(PopError::Closed))
                }
            })
            .await
    }

    /// The queued changes, oldest first, relists and resyncs expanded (a copy).
    pub fn queued_deltas(&self) -> Vec<Delta<K>> {
        let state = self.shared.state.lock();
        let mut out = Vec::new();
        for entry in &state.items {
            match entry {
                Entry::Change(_, delta) => out.push(delta.clone()),
                Entry::Relist(relist) => out.extend(relist.deltas()),
                Entry::Resync(resync) => out.extend(resync.deltas()),
                Entry::Bookmark(_) => {}
            }
        }
        out
    }

    /// How many items are queued (a relist or a resync is one).
    pub fn len(&self) -> usize {
        self.shared.state.lock().items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes the queue: pops drain what is queued, then report [`PopError::Closed`].
    pub fn close(&self) {
        self.shared.state.lock().sync.close();
        self.shared.pops.wake_all();
    }

    /// Whether [`RealFifo::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().sync.is_closed()
    }

    /// True once the first relist (and everything queued before it) has been popped and
    /// processed, or when anything else was queued before the first relist. Stays true.
    pub fn has_synced(&self) -> bool {
        self.shared.state.lock().has_synced()
    }
}

/// Whether `cached` is the state `listed` describes: the same uid at the same, non-empty
/// resourceVersion (a deleted and re-created object has a new uid; any change, a new
/// resourceVersion).
fn same_version<K: Cacheable>(cached: &K, listed: &K) -> bool {
    let (cached, listed) = (cached.meta(), listed.meta());
    listed
        .resource_version
        .as_deref()
        .is_some_and(|rv| !rv.is_empty())
        && cached.resource_version == listed.resource_version
        && cached.uid == listed.uid
}

/// Takes the next item, with whether it belongs to the initial list.
fn take_locked<K>(state: &mut State<K>) -> Option<(Entry<K>, bool)> {
    let entry = state.items.pop_front()?;
    let initial = state.sync.popped();
    Some((entry, initial))
}

/// Every key with something queued.
fn queued_keys_locked<K>(state: &State<K>) -> AHashSet<StoreKey> {
    let mut keys = AHashSet::new();
    for entry in &state.items {
        match entry {
            Entry::Change(key, _) => {
                keys.insert(key.clone());
            }
            Entry::Relist(relist) => {
                keys.extend(relist.objects.iter().map(|(k, _)| k.clone()));
                keys.extend(
                    relist
                        .tombstones
                        .iter()
                        .map(|t| StoreKey::from(t.key.as_str())),
                );
            }
            Entry::Resync(resync) => keys.extend(resync.objects.iter().map(|(k, _)| k.clone())),
            Entry::Bookmark(_) => {}
        }
    }
    keys
}

/// The tombstones a relist listing `listed` must carry (client-go's `reconcileReplacement`):
/// for each queued key whose last queued change is not a deletion and that is not listed,
/// with that change's object; then for each known key neither listed nor queued, with the
/// cached object.
fn tombstones_locked<K: 'static>(
    state: &State<K>,
    known: Option<&Arc<dyn KnownObjects<K>>>,
    listed: &AHashSet<&str>,
) -> Vec<DeletedFinalStateUnknown<K>> {
    // The last queued state of each queued key, in first-queued order; `None` = deleted.
    let mut order: Vec<StoreKey> = Vec::new();
    let mut last: AHashMap<StoreKey, Option<Arc<K>>> = AHashMap::new();
    let mut note = |key: &StoreKey, obj: Option<Arc<K>>| {
        if last.insert(key.clone(), obj).is_none() {
            order.push(key.clone());
        }
    };
    for entry in &state.items {
        match entry {
            Entry::Change(key, Delta::Deleted(_)) => note(key, None),
            Entry::Change(key, delta) => note(key, delta.object().cloned()),
            Entry::Relist(relist) => {
                for t in &relist.tombstones {
                    note(&StoreKey::from(t.key.as_str()), None);
                }
                for (key, obj) in &relist.objects {
                    note(key, Some(obj.clone()));
                }
            }
            Entry::Resync(resync) => {
                for (key, obj) in &resync.objects {
                    note(key, Some(obj.clone()));
                }
            }
            Entry::Bookmark(_) => {}
        }
    }
    let mut tombstones = Vec::new();
    for key in &order {
        if listed.contains(key.as_ref()) {
            continue;
        }
        if let Some(Some(obj)) = last.get(key) {
            tombstones.push(DeletedFinalStateUnknown {
                key: key.to_string(),
                obj: Some(obj.clone()),
            });
        }
    }
    if let Some(known) = known {
        let mut missing = Vec::new();
        known.for_each_key(&mut |key| {
            if !listed.contains(key) && !last.contains_key(key) {
                missing.push(key.to_owned());
            }
        });
        // In key order, whatever the cache's hashing: the same relist tells the same.
        missing.sort_unstable();
        for key in missing {
            let obj = known.get_by_key(&key);
            if obj.is_none() {
                tracing::debug!(%key, "known key vanished during relist; tombstone without object");
            }
            tombstones.push(DeletedFinalStateUnknown { key, obj });
        }
    }
    tombstones
}

impl<K: Cacheable> ReflectorSink<K> for RealFifo<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), CacheError> {
        RealFifo::add(self, obj)
    }

    fn update(&self, obj: Arc<K>) -> Result<(), CacheError> {
        RealFifo::update(self, obj)
    }

    fn delete(&self, obj: &Arc<K>) -> Result<(), CacheError> {
        RealFifo::delete(self, obj.clone())
    }

    fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError> {
        RealFifo::replace(self, objs, resource_version)
    }

    fn resync(&self) -> Result<(), CacheError> {
        RealFifo::resync(self)
    }

    fn bookmark(&self, resource_version: &str) {
        RealFifo::bookmark(self, resource_version);
    }

    fn paged_replace(&self) -> Option<&dyn PagedReplace<K>> {
        Some(self)
    }
}

impl<K: Cacheable> PagedReplace<K> for RealFifo<K> {
    fn replace_begin(&self) {
        RealFifo::replace_begin(self);
    }

    fn replace_page(&self, objs: Vec<Arc<K>>) -> Result<(), CacheError> {
        RealFifo::replace_page(self, objs)
    }

    fn replace_finish(&self, resource_version: &str) -> Result<(), CacheError> {
        RealFifo::replace_finish(self, resource_version)
    }
}

impl<K: Cacheable> Queue<K> for RealFifo<K> {
    fn pop_batch<'a>(
        &'a self,
        max: usize,
        process: &'a mut ProcessItem<'_, K>,
    ) -> BoxFuture<'a, Result<usize, PopError<CacheError>>> {
        Box::pin(RealFifo::pop_batch(self, max, process))
    }

    fn has_synced(&self) -> bool {
        RealFifo::has_synced(self)
    }

    fn close(&self) {
        RealFifo::close(self);
    }

    fn is_closed(&self) -> bool {
        RealFifo::is_closed(self)
    }

    fn len(&self) -> usize {
        RealFifo::len(self)
    }
}

/// Behaviours of client-go 1.36's `tools/cache/the_real_fifo_test.go`, one test per Go test
/// (named after it), on ConfigMaps keyed `ns/name` whose resourceVersion plays the Go
/// tests' value. The Go tests' "known objects" are a fixed list; here a fixed [`Indexer`].
#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::cache::{DeletedObject, Indexer, testing::cm_with};

    type Q = RealFifo<ConfigMap>;

    fn obj(name: &str, rv: u32) -> Arc<ConfigMap> {
        Arc::new(cm_with("ns", name, &rv.to_string(), &[]))
    }

    fn known(objs: &[(&str, u32)]) -> Indexer<ConfigMap> {
        let known = Indexer::default();
        for (name, rv) in objs {
            known.add(obj(name, *rv)).expect("keyed");
        }
        known
    }

    fn fifo(objs: &[(&str, u32)]) -> Q {
        RealFifo::new(RealFifoOptions::default().known_objects(known(objs)))
    }

    /// A delta as `Added foo 10`, `Deleted foo 15`, `Tombstone bar 6`, `Replaced foo 5`.
    fn show(delta: &Delta<ConfigMap>) -> String {
        let name = |o: &ConfigMap| o.metadata.name.clone().unwrap_or_default();
        let rv = |o: &ConfigMap| o.metadata.resource_version.clone().unwrap_or_default();
        match delta {
            Delta::Deleted(DeletedObject::Tombstone(t)) => match &t.obj {
                Some(o) => format!("Tombstone {} {}", name(o), rv(o)),
                None => format!("Tombstone {} -", t.key),
            },
            other => {
                let o = other.object().expect("object");
                format!("{:?} {} {}", other.delta_type(), name(o), rv(o))
            }
        }
    }

    fn shown(deltas: &[Delta<ConfigMap>]) -> Vec<String> {
        deltas.iter().map(show).collect()
    }

    /// Pops everything queued, expanding relists, as the Go tests' `popN` + `collapseDeltas`.
    async fn drain(q: &Q) -> Vec<String> {
        let mut out = Vec::new();
        while !q.is_empty() {
            let (popped, _) = q.pop().await.expect("open");
            out.extend(shown(&popped.into_deltas()));
        }
        out
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn test_real_fifo_basic_keeps_each_producers_order() {
        let q = fifo(&[]);
        let producers: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|prefix| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for i in 1..=500 {
                        q.add(obj(&format!("{prefix}{i}"), i)).expect("keyed");
                    }
                })
            })
            .collect();
        let mut last = [0u32; 2];
        for _ in 0..1000 {
            let (popped, _) = q.pop().await.expect("open");
            let Popped::Delta(_, delta) = popped else {
                panic!("a change");
            };
            let o = delta.object().expect("object");
            let producer = usize::from(o.metadata.name.as_deref().unwrap_or("").starts_with('b'));
            let rv: u32 = o
                .metadata
                .resource_version
                .as_deref()
                .unwrap_or("0")
                .parse()
                .expect("rv");
            assert!(
                rv > last[producer],
                "out of order: {rv} after {}",
                last[producer]
            );
            last[producer] = rv;
        }
        for p in producers {
            p.join().expect("producer");
        }
        assert_eq!(last, [500, 500]);
    }

    #[tokio::test]
    async fn test_real_fifo_replace_with_delete_delta_in() {
        // kubernetes/kubernetes#83810: a relist listing an object whose delete is queued
        // must still queue it, or the informer misses its re-creation.
        let q = fifo(&[("foo", 1)]);
        q.delete(obj("foo", 1)).unwrap();
        q.replace(vec![obj("foo", 2)], "").unwrap();
        assert_eq!(
            shown(&q.queued_deltas()),
            ["Deleted foo 1", "Replaced foo 2"]
        );
    }

    #[tokio::test]
    async fn test_real_fifo_replace_makes_deletions_for_objects_only_in_queue() {
        type Ops = fn(&Q);
        let cases: [(&str, Ops, &[&str]); 6] = [
            (
                "added object should be deleted on replace",
                |f| {
                    f.add(obj("foo", 2)).unwrap();
                    f.replace(vec![], "0").unwrap();
                },
                &["Added foo 2", "Tombstone foo 2"],
            ),
            (
                "deleted object should have only a single delete",
                |f| {
                    f.add(obj("foo", 2)).unwrap();
                    f.delete(obj("foo", 2)).unwrap();
                    f.replace(vec![], "0").unwrap();
                },
                &["Added foo 2", "Deleted foo 2"],
            ),
            (
                "synced objects should have a single delete",
                |f| {
                    f.add(obj("foo", 2)).unwrap();
                    f.replace(vec![obj("foo", 2)], "0").unwrap();
                    f.replace(vec![obj("foo", 2)], "0").unwrap();
                    f.replace(vec![], "0").unwrap();
                },
                &[
                    "Added foo 2",
                    "Replaced foo 2",
                    "Replaced foo 2",
                    "Tombstone foo 2",
                ],
            ),
            (
                "added objects should have a single delete on multiple replaces",
                |f| {
                    f.add(obj("foo", 2)).unwrap();
                    f.replace(vec![], "0").unwrap();
                    f.replace(vec![], "1").unwrap();
                },
                &["Added foo 2", "Tombstone foo 2"],
            ),
            (
                "added and deleted and added object should be deleted",
                |f| {
                    f.add(obj("foo", 2)).unwrap();
                    f.delete(obj("foo", 2)).unwrap();
                    f.add(obj("foo", 3)).unwrap();
                    f.replace(vec![], "0").unwrap();
                },
                &[
                    "Added foo 2",
                    "Deleted foo 2",
                    "Added foo 3",
                    "Tombstone foo 3",
                ],
            ),
            (
                "bookmarks carry no deltas",
                |f| {
                    f.bookmark("123");
                    f.replace(vec![], "0").unwrap();
                    f.replace(vec![], "1").unwrap();
                },
                &[],
            ),
        ];
        for (name, ops, expected) in cases {
            let q = fifo(&[]);
            ops(&q);
            assert_eq!(drain(&q).await, expected, "{name}");
            assert!(q.is_empty(), "{name}: nothing left");
        }
    }

    #[tokio::test]
    async fn test_real_fifo_add_update() {
        let q = fifo(&[]);
        q.add(obj("foo", 10)).unwrap();
        q.update(obj("foo", 12)).unwrap();
        q.delete(obj("foo", 15)).unwrap();
        // Every change stays queued (a keyed queue would show only the newest).
        assert_eq!(
            shown(&q.queued_deltas()),
            ["Added foo 10", "Updated foo 12", "Deleted foo 15"]
        );
        assert_eq!(drain(&q).await.len(), 3);
        q.close();
        assert!(matches!(q.pop().await, Err(PopError::Closed)));
    }

    /// A transform that appends `x` to the "xfrm" annotation: how often it ran shows.
    fn appending_transform() -> TransformFunc<ConfigMap> {
        Arc::new(|o: &mut ConfigMap| {
            o.metadata
                .annotations
                .get_or_insert_default()
                .entry("xfrm".into())
                .or_default()
                .push('x');
        })
    }

    #[tokio::test]
    async fn test_real_fifo_transformer() {
        // Each transform appends to the "xfrm" annotation: every incoming object is
        // transformed once, tombstones carry the transformed object and are not transformed.
        let xfrm = appending_transform();
        let q = RealFifo::new(
            RealFifoOptions::default()
                .known_objects(known(&[]))
                .transformer(xfrm),
        );
        q.add(obj("foo", 10)).unwrap();
        q.add(obj("bar", 11)).unwrap();
        q.update(obj("foo", 12)).unwrap();
        q.delete(obj("foo", 15)).unwrap();
        q.replace(vec![], "").unwrap();
        q.add(obj("bar", 16)).unwrap();
        q.replace(vec![], "").unwrap();
        let deltas = q.queued_deltas();
        assert_eq!(
            shown(&deltas),
            [
                "Added foo 10",
                "Added bar 11",
                "Updated foo 12",
                "Deleted foo 15",
                "Tombstone bar 11",
                "Added bar 16",
                "Tombstone bar 16",
            ]
        );
        for delta in &deltas {
            let o = delta.object().expect("object");
            let marks = o.metadata.annotations.as_ref().and_then(|a| a.get("xfrm"));
            assert_eq!(marks.map(String::as_str), Some("x"), "{}", show(delta));
        }
    }

    #[tokio::test]
    async fn test_real_fifo_enqueueing_no_lister() {
        let q = fifo(&[]);
        q.add(obj("foo", 10)).unwrap();
        q.update(obj("bar", 15)).unwrap();
        q.add(obj("qux", 17)).unwrap();
        q.delete(obj("qux", 18)).unwrap();
        // Queued even though nothing knows "baz".
        q.delete(obj("baz", 20)).unwrap();
        assert_eq!(
            drain(&q).await,
            [
                "Added foo 10",
                "Updated bar 15",
                "Added qux 17",
                "Deleted qux 18",
                "Deleted baz 20"
            ]
        );
    }

    #[tokio::test]
    async fn test_real_fifo_enqueueing_with_lister() {
        let q = fifo(&[("foo", 5), ("bar", 6), ("baz", 7)]);
        q.add(obj("foo", 10)).unwrap();
        q.update(obj("bar", 15)).unwrap();
        q.delete(obj("baz", 20)).unwrap();
        assert_eq!(
            drain(&q).await,
            ["Added foo 10", "Updated bar 15", "Deleted baz 20"]
        );
    }

    #[tokio::test]
    async fn test_real_fifo_add_replace() {
        let q = fifo(&[]);
        q.add(obj("foo", 10)).unwrap();
        q.replace(vec![obj("foo", 15)], "0").unwrap();
        assert_eq!(drain(&q).await, ["Added foo 10", "Replaced foo 15"]);
    }

    #[tokio::test]
    async fn test_real_fifo_resync_non_existing() {
        let q = fifo(&[("foo", 5)]);
        q.delete(obj("foo", 10)).unwrap();
        q.resync().unwrap();
        assert_eq!(shown(&q.queued_deltas()), ["Deleted foo 10"]);
    }

    #[tokio::test]
    async fn test_real_fifo_resync() {
        let q = fifo(&[("foo", 5)]);
        q.resync().unwrap();
        assert_eq!(shown(&q.queued_deltas()), ["Sync foo 5"]);
        assert_eq!(q.len(), 1, "a resync is one item");
    }

    #[tokio::test]
    async fn test_real_fifo_delete_existing_non_propagated() {
        let q = fifo(&[]);
        q.add(obj("foo", 5)).unwrap();
        q.delete(obj("foo", 6)).unwrap();
        assert_eq!(shown(&q.queued_deltas()), ["Added foo 5", "Deleted foo 6"]);
    }

    #[tokio::test]
    async fn test_real_fifo_replace_makes_deletions() {
        let three = [("foo", 5), ("bar", 6), ("baz", 7)];
        // A pre-existing delete.
        let q = fifo(&three);
        q.delete(obj("baz", 10)).unwrap();
        q.replace(vec![obj("foo", 5)], "0").unwrap();
        assert_eq!(
            drain(&q).await,
            ["Deleted baz 10", "Tombstone bar 6", "Replaced foo 5"]
        );
        // A pre-existing add.
        let q = fifo(&three);
        q.add(obj("baz", 10)).unwrap();
        q.replace(vec![obj("foo", 5)], "0").unwrap();
        assert_eq!(
            drain(&q).await,
            [
                "Added baz 10",
                "Tombstone baz 10",
                "Tombstone bar 6",
                "Replaced foo 5"
            ]
        );
        // Deleted and re-created in the queue, then deleted by a relist: the tombstone has
        // the newest queued object.
        let q = fifo(&three);
        q.delete(obj("bar", 6)).unwrap();
        q.add(obj("bar", 100)).unwrap();
        q.replace(vec![obj("foo", 5)], "0").unwrap();
        assert_eq!(
            drain(&q).await,
            [
                "Deleted bar 6",
                "Added bar 100",
                "Tombstone bar 100",
                "Tombstone baz 7",
                "Replaced foo 5"
            ]
        );
        // Listed first, so the later tombstone uses the listed version.
        let q = fifo(&three);
        q.replace(vec![obj("bar", 100), obj("foo", 5)], "0")
            .unwrap();
        q.replace(vec![obj("foo", 5)], "0").unwrap();
        assert_eq!(
            drain(&q).await,
            [
                "Tombstone baz 7",
                "Replaced bar 100",
                "Replaced foo 5",
                "Tombstone bar 100",
                "Replaced foo 5"
            ]
        );
        // Nothing known.
        let q = fifo(&[]);
        q.add(obj("baz", 10)).unwrap();
        q.replace(vec![obj("foo", 5)], "0").unwrap();
        assert_eq!(
            drain(&q).await,
            ["Added baz 10", "Tombstone baz 10", "Replaced foo 5"]
        );
    }

    #[tokio::test]
    async fn test_real_fifo_replace_makes_deletions_replaced() {
        let q = fifo(&[("foo", 5), ("bar", 6), ("baz", 7)]);
        q.delete(obj("baz", 10)).unwrap();
        q.replace(vec![obj("foo", 6)], "0").unwrap();
        assert_eq!(
            drain(&q).await,
            ["Deleted baz 10", "Tombstone bar 6", "Replaced foo 6"]
        );
    }

    #[tokio::test]
    async fn test_real_fifo_update_resync_race() {
        // A resync skips a key with a change queued: the stale cached copy must not follow it.
        let q = fifo(&[("foo", 5)]);
        q.update(obj("foo", 6)).unwrap();
        q.resync().unwrap();
        assert_eq!(drain(&q).await, ["Updated foo 6"]);
    }

    #[tokio::test]
    async fn test_real_fifo_has_synced_correct_on_deletion() {
        let q = fifo(&[("foo", 5), ("bar", 6), ("baz", 7)]);
        q.replace(vec![obj("foo", 5)], "0").unwrap();
        assert!(!q.has_synced());
        let (popped, initial) = q.pop().await.unwrap();
        assert!(initial, "an initial-list item");
        let mut deltas = shown(&popped.into_deltas());
        deltas[..2].sort();
        assert_eq!(
            deltas,
            ["Tombstone bar 6", "Tombstone baz 7", "Replaced foo 5"]
        );
        assert!(q.has_synced());
    }

    #[tokio::test]
    async fn test_real_fifo_detect_line_jumpers() {
        let q = fifo(&[]);
        for (name, rv) in [
            ("foo", 10),
            ("bar", 1),
            ("foo", 11),
            ("foo", 13),
            ("zab", 30),
        ] {
            q.add(obj(name, rv)).unwrap();
        }
        let (first, _) = q.pop().await.unwrap();
        assert_eq!(shown(&first.into_deltas()), ["Added foo 10"]);
        // foo does not jump back in line.
        q.add(obj("foo", 14)).unwrap();
        assert_eq!(
            drain(&q).await,
            [
                "Added bar 1",
                "Added foo 11",
                "Added foo 13",
                "Added zab 30",
                "Added foo 14"
            ]
        );
    }

    #[tokio::test]
    async fn test_real_fifo_has_synced() {
        type Ops = fn(&Q);
        let cases: [(Ops, usize, bool); 6] = [
            (|_| {}, 0, false),
            (|f| f.add(obj("a", 1)).unwrap(), 0, true),
            (|f| f.replace(vec![], "0").unwrap(), 0, false),
            (|f| f.replace(vec![], "0").unwrap(), 1, true),
            (
                |f| f.replace(vec![obj("a", 1), obj("b", 2)], "0").unwrap(),
                0,
                false,
            ),
            (
                |f| f.replace(vec![obj("a", 1), obj("a", 2)], "0").unwrap(),
                1,
                true,
            ),
        ];
        // Unlike the Go test, an empty relist is one item that must be popped: the informer
        // has synced once it has *applied* the (empty) list to its cache.
        for (i, (ops, pops, synced)) in cases.into_iter().enumerate() {
            let q = fifo(&[]);
            ops(&q);
            for _ in 0..pops {
                q.pop().await.unwrap();
            }
            assert_eq!(q.has_synced(), synced, "case {i}");
        }
    }

    #[tokio::test]
    async fn test_real_fifo_pop_should_unblock_when_closed() {
        let q = fifo(&[("foo", 5)]);
        let pops: Vec<_> = (0..10)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.pop().await.map(|_| ()) })
            })
            .collect();
        tokio::task::yield_now().await;
        q.close();
        for pop in pops {
            let result = tokio::time::timeout(std::time::Duration::from_secs(5), pop)
                .await
                .expect("pop returned after close")
                .expect("task");
            assert!(matches!(result, Err(PopError::Closed)));
        }
    }

    #[tokio::test]
    async fn test_real_fifo_pop_multiple_delta_in_batch() {
        // Batches hold up to `max` items in queue order, all under one lock hold; a relist
        // is one item however large.
        let q = fifo(&[]);
        q.replace(vec![obj("foo1", 5), obj("foo2", 5), obj("foo3", 5)], "5")
            .unwrap();
        for name in ["foo1", "foo2", "foo3"] {
            q.update(obj(name, 6)).unwrap();
        }
        let mut batches: Vec<Vec<(String, bool)>> = Vec::new();
        while !q.is_empty() {
            let mut batch = Vec::new();
            q.pop_batch(2, &mut |item, initial| {
                let deltas = match item {
                    Queued::Deltas { deltas, .. } => deltas.to_vec(),
                    Queued::Relist(relist) => relist.deltas(),
                    Queued::Resync(resync) => resync.deltas(),
                    Queued::Bookmark(_) => Vec::new(),
                };
                batch.extend(shown(&deltas).into_iter().map(|d| (d, initial)));
                Ok(())
            })
            .await
            .unwrap();
            batches.push(batch);
        }
        let t = |s: &str, initial| (s.to_owned(), initial);
        assert_eq!(
            batches,
            [
                vec![
                    t("Replaced foo1 5", true),
                    t("Replaced foo2 5", true),
                    t("Replaced foo3 5", true),
                    t("Updated foo1 6", false),
                ],
                vec![t("Updated foo2 6", false), t("Updated foo3 6", false)],
            ]
        );
    }

    #[tokio::test]
    async fn a_paged_relist_is_queued_as_one_item_at_finish() {
        let q = fifo(&[("gone", 1)]);
        q.replace_begin();
        q.replace_page(vec![obj("a", 2)]).unwrap();
        q.replace_page(vec![obj("b", 3)]).unwrap();
        assert!(
            q.is_empty(),
            "nothing is queued before the list is complete"
        );
        q.replace_finish("3").unwrap();
        assert_eq!(q.len(), 1);
        let (Popped::Relist(relist), true) = q.pop().await.unwrap() else {
            panic!("an initial relist");
        };
        assert_eq!(relist.resource_version(), "3");
        assert_eq!(
            shown(&relist.deltas()),
            ["Tombstone gone 1", "Replaced a 2", "Replaced b 3"]
        );
    }

    /// `obj` with a uid.
    fn with_uid(name: &str, rv: u32, uid: &str) -> Arc<ConfigMap> {
        let mut o = cm_with("ns", name, &rv.to_string(), &[]);
        o.metadata.uid = Some(uid.to_owned());
        Arc::new(o)
    }

    /// The listed objects of the one queued relist.
    async fn relisted(q: &Q) -> Vec<(Arc<str>, Arc<ConfigMap>)> {
        assert_eq!(q.len(), 1, "one relist queued");
        let (Popped::Relist(relist), _) = q.pop().await.unwrap() else {
            panic!("a relist");
        };
        relist.objects().to_vec()
    }

    #[tokio::test]
    async fn a_paged_relist_reuses_the_cached_object_when_uid_and_version_are_unchanged() {
        let cache = Indexer::default();
        let (a, b, c) = (
            with_uid("a", 1, "uid-a"),
            with_uid("b", 2, "uid-b"),
            with_uid("c", 3, "uid-c"),
        );
        for o in [&a, &b, &c] {
            cache.add(o.clone()).unwrap();
        }
        let q = RealFifo::new(RealFifoOptions::default().known_objects(cache));
        q.replace_begin();
        // a unchanged; b at a new version; c deleted and re-created under the same name
        // (a new uid, here even at the same version); d new.
        q.replace_page(vec![with_uid("a", 1, "uid-a"), with_uid("b", 4, "uid-b")])
            .unwrap();
        q.replace_page(vec![with_uid("c", 3, "uid-c2"), with_uid("d", 5, "uid-d")])
            .unwrap();
        q.replace_finish("5").unwrap();
        let listed = relisted(&q).await;
        let by_name = |name: &str| {
            listed
                .iter()
                .find(|(k, _)| k.as_ref() == format!("ns/{name}"))
                .map(|(_, o)| o.clone())
                .unwrap()
        };
        assert!(Arc::ptr_eq(&by_name("a"), &a), "unchanged: the cached Arc");
        assert!(
            !Arc::ptr_eq(&by_name("b"), &b),
            "a new version is the listed one"
        );
        assert_eq!(by_name("b").metadata.resource_version.as_deref(), Some("4"));
        assert!(
            !Arc::ptr_eq(&by_name("c"), &c),
            "a new uid is the listed one"
        );
        assert_eq!(by_name("c").metadata.uid.as_deref(), Some("uid-c2"));
        assert_eq!(
            Arc::strong_count(&by_name("d")),
            2,
            "d: only the relist holds it"
        );
    }

    #[tokio::test]
    async fn a_relist_without_versions_or_known_objects_keeps_the_listed_objects() {
        // Without a resourceVersion nothing proves the cached object is the listed one.
        let cache = Indexer::default();
        let cached = Arc::new(crate::cache::testing::cm("ns", "a"));
        cache.add(cached.clone()).unwrap();
        let q = RealFifo::new(RealFifoOptions::default().known_objects(cache));
        q.replace(vec![Arc::new(crate::cache::testing::cm("ns", "a"))], "1")
            .unwrap();
        assert!(!Arc::ptr_eq(&relisted(&q).await[0].1, &cached));
        // Without known objects there is nothing to reuse.
        let q = fifo(&[]);
        let listed = obj("a", 1);
        q.replace(vec![listed.clone()], "1").unwrap();
        assert!(Arc::ptr_eq(&relisted(&q).await[0].1, &listed));
    }

    #[tokio::test]
    async fn a_reused_cached_object_is_not_transformed_again() {
        let xfrm = appending_transform();
        let cache = Indexer::default();
        let q = RealFifo::new(
            RealFifoOptions::default()
                .known_objects(cache.clone())
                .transformer(xfrm),
        );
        q.replace(vec![with_uid("a", 1, "uid-a")], "1").unwrap();
        let first = relisted(&q).await;
        cache.add(first[0].1.clone()).unwrap();
        q.replace(vec![with_uid("a", 1, "uid-a")], "1").unwrap();
        let again = relisted(&q).await;
        assert!(Arc::ptr_eq(&again[0].1, &first[0].1));
        let marks = again[0].1.metadata.annotations.as_ref().unwrap()["xfrm"].clone();
        assert_eq!(marks, "x", "transformed once");
    }

    proptest::proptest! {
        /// Whatever the cache holds and the relist lists, each listed object is the cached
        /// `Arc` exactly when key, uid and resourceVersion match, and carries the listed
        /// state either way.
        #[test]
        fn a_listed_object_is_the_cached_one_exactly_when_uid_and_version_match(
            cached in proptest::collection::btree_map(0u8..12, (0u8..3, 1u32..4), 0..12),
            listed in proptest::collection::btree_map(0u8..12, (0u8..3, 1u32..4), 0..12),
            page in 1usize..5,
        ) {
            let cache = Indexer::default();
            let mut held = AHashMap::new();
            for (name, (uid, rv)) in &cached {
                let o = with_uid(&format!("o{name}"), *rv, &format!("u{uid}"));
                cache.add(o.clone()).unwrap();
                held.insert(format!("ns/o{name}"), o);
            }
            let q = RealFifo::new(RealFifoOptions::default().known_objects(cache));
            q.replace_begin();
            let objs: Vec<_> = listed
                .iter()
                .map(|(name, (uid, rv))| with_uid(&format!("o{name}"), *rv, &format!("u{uid}")))
                .collect();
            for chunk in objs.chunks(page) {
                q.replace_page(chunk.to_vec()).unwrap();
            }
            q.replace_finish("9").unwrap();
            let Some(Entry::Relist(relist)) = q.shared.state.lock().items.pop_front() else {
                panic!("a relist");
            };
            proptest::prop_assert_eq!(relist.objects.len(), listed.len());
            for ((key, got), (name, (uid, rv))) in relist.objects.iter().zip(&listed) {
                proptest::prop_assert_eq!(key.as_ref(), format!("ns/o{name}"));
                let uid = format!("u{uid}");
                proptest::prop_assert_eq!(got.metadata.uid.as_deref(), Some(uid.as_str()));
                let rv = rv.to_string();
                proptest::prop_assert_eq!(got.metadata.resource_version.as_deref(), Some(rv.as_str()));
                let same = cached.get(name) == listed.get(name);
                let reused = held.get(key.as_ref()).is_some_and(|h| Arc::ptr_eq(h, got));
                proptest::prop_assert_eq!(reused, same);
            }
        }
    }

    #[tokio::test]
    async fn a_failing_process_drops_the_item_and_ends_the_batch() {
        let q = fifo(&[]);
        q.add(obj("a", 1)).unwrap();
        q.add(obj("b", 2)).unwrap();
        let result = q
            .pop_batch(10, &mut |_, _| Err(CacheError::UnknownIndex("x".into())))
            .await;
        assert!(matches!(
            result,
            Err(PopError::Process {
                requeued: false,
                ..
            })
        ));
        assert_eq!(drain(&q).await, ["Added b 2"]);
    }
}
