//! [`DeltaFifo`]: the queue between a reflector and an informer.
//!
//! Unlike [`Fifo`](super::Fifo) it keeps every change ([`Delta`]) of an object since it was
//! last popped, and it reads (never writes) the consumer's cache — its *known objects* — to
//! decide what a delete, a relist ([`DeltaFifo::replace`]) or a resync must queue. The
//! consumer applies popped deltas to that cache.

use std::{collections::VecDeque, fmt, sync::Arc};

use ahash::{AHashMap, AHashSet};
use parking_lot::Mutex;
use tokio::sync::Notify;

use super::{
    CacheError, DeletedFinalStateUnknown, DeletedObject, Delta, DeltaType, Deltas, KeyFunc,
    KnownObjects, PopError, ProcessError, Store,
    index::StoreKey,
    meta_namespace_key,
    wait::{Step, pop_when_ready},
};
use crate::Object;

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

impl<K: Object> Default for DeltaFifoOptions<K> {
    fn default() -> Self {
        Self {
            key_func: Arc::new(|obj: &K| meta_namespace_key(obj)),
            known_objects: None,
            emit_delta_type_replaced: false,
            transformer: None,
        }
    }
}

impl<K: Object> DeltaFifoOptions<K> {
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

struct State<K> {
    items: AHashMap<StoreKey, Deltas<K>>,
    queue: VecDeque<StoreKey>,
    populated: bool,
    initial_population_count: usize,
    closed: bool,
}

struct Shared<K> {
    state: Mutex<State<K>>,
    notify: Notify,
    options: DeltaFifoOptions<K>,
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
        let state = self.shared.state.lock();
        f.debug_struct("DeltaFifo")
            .field("queued", &state.queue.len())
            .field("populated", &state.populated)
            .field("initial_population_count", &state.initial_population_count)
            .field("closed", &state.closed)
            .finish()
    }
}

impl<K: Object> DeltaFifo<K> {
    /// An empty queue with these options.
    pub fn new(options: DeltaFifoOptions<K>) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    items: AHashMap::new(),
                    queue: VecDeque::new(),
                    populated: false,
                    initial_population_count: 0,
                    closed: false,
                }),
                notify: Notify::new(),
                options,
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
            None => {
                let key = StoreKey::from(key);
                let mut deltas = Vec::with_capacity(1);
                deltas.push(delta);
                state.queue.push_back(key.clone());
                state.items.insert(key, Deltas(deltas));
            }
        }
    }

    fn add_with_type(&self, delta_type: DeltaType, obj: Arc<K>) -> Result<(), CacheError> {
        let key = self.key_of(&obj)?;
        let obj = self.transform(obj);
        let mut state = self.shared.state.lock();
        state.populated = true;
        self.queue_locked(&mut state, &key, Delta::with_type(delta_type, obj));
        drop(state);
        self.shared.notify.notify_waiters();
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
        let key = self.key_of(&obj)?;
        let obj = self.transform(obj);
        let mut state = self.shared.state.lock();
        state.populated = true;
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
        self.shared.notify.notify_waiters();
        Ok(())
    }

    /// Puts popped deltas back unless newer ones were queued for their key meanwhile (those
    /// win); they go to the tail.
    pub fn add_if_not_present(&self, deltas: Deltas<K>) -> Result<(), CacheError> {
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
        let mut state = self.shared.state.lock();
        state.populated = true;
        Self::add_if_not_present_locked(&mut state, StoreKey::from(key), deltas);
        drop(state);
        self.shared.notify.notify_waiters();
        Ok(())
    }

    fn add_if_not_present_locked(state: &mut State<K>, key: StoreKey, deltas: Deltas<K>) {
        if state.items.contains_key(&key) {
            return;
        }
        state.queue.push_back(key.clone());
        state.items.insert(key, deltas);
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
        let delta_type = if self.shared.options.emit_delta_type_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        let mut listed: Vec<(String, Arc<K>)> = Vec::with_capacity(objs.len());
        for obj in objs {
            let key = self.key_of(&obj)?;
            listed.push((key, self.transform(obj)));
        }
        let known_keys = self
            .shared
            .options
            .known_objects
            .as_ref()
            .map(|k| k.list_keys());

        let mut state = self.shared.state.lock();
        let mut listed_keys: AHashSet<String> = AHashSet::with_capacity(listed.len());
        for (key, obj) in listed {
            self.queue_locked(&mut state, &key, Delta::with_type(delta_type, obj));
            listed_keys.insert(key);
        }

        // Deletion detection against what is queued.
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
                &mut state,
                &key,
                Delta::Deleted(DeletedObject::Tombstone(tombstone)),
            );
        }
        // Then against known objects with nothing queued.
        if let (Some(known), Some(known_keys)) = (&self.shared.options.known_objects, known_keys) {
            for key in known_keys {
                if listed_keys.contains(key.as_str()) || state.items.contains_key(key.as_str()) {
                    continue;
                }
                let obj = known.get_by_key(&key);
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj,
                };
                self.queue_locked(
                    &mut state,
                    &key,
                    Delta::Deleted(DeletedObject::Tombstone(tombstone)),
                );
                tombstones += 1;
            }
        }
        let listed_count = listed_keys.len();
        if !state.populated {
            state.populated = true;
            state.initial_population_count = listed_count + tombstones;
        }
        drop(state);
        self.shared.notify.notify_waiters();
        Ok(())
    }

    /// Queues a [`Delta::Sync`] for every known object that has nothing queued (a queued
    /// key will be delivered anyway, and a stale cached copy must not follow a newer event).
    /// Without known objects this does nothing.
    pub fn resync(&self) -> Result<(), CacheError> {
        let Some(known) = &self.shared.options.known_objects else {
            return Ok(());
        };
        let mut state = self.shared.state.lock();
        let mut queued_any = false;
        for key in known.list_keys() {
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
            self.shared.notify.notify_waiters();
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
        let mut process = Some(process);
        pop_when_ready(&self.shared.state, &self.shared.notify, |state| {
            loop {
                let Some(key) = state.queue.pop_front() else {
                    return if state.closed {
                        Step::Done(Err(PopError::Closed))
                    } else {
                        Step::Wait
                    };
                };
                let is_in_initial_list = !(state.populated && state.initial_population_count == 0);
                state.initial_population_count = state.initial_population_count.saturating_sub(1);
                let Some(deltas) = state.items.remove(&key) else {
                    continue;
                };
                let Some(process) = process.take() else {
                    return Step::Done(Ok(deltas));
                };
                return Step::Done(match process(&deltas, is_in_initial_list) {
                    Ok(()) => Ok(deltas),
                    Err(ProcessError::Failed(error)) => Err(PopError::Process {
                        error,
                        requeued: false,
                    }),
                    Err(ProcessError::Requeue(error)) => {
                        Self::add_if_not_present_locked(state, key, deltas);
                        Err(PopError::Process {
                            error,
                            requeued: true,
                        })
                    }
                });
            }
        })
        .await
    }

    /// The deltas queued under `key` (a copy).
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        self.shared.state.lock().items.get(key).cloned()
    }

    /// The newest queued state of every key that has one.
    pub fn list(&self) -> Vec<Arc<K>> {
        let state = self.shared.state.lock();
        state
            .items
            .values()
            .filter_map(|d| d.newest().and_then(Delta::object).cloned())
            .collect()
    }

    /// Every queued key, in pop order.
    pub fn list_keys(&self) -> Vec<String> {
        self.shared
            .state
            .lock()
            .queue
            .iter()
            .map(|k| k.to_string())
            .collect()
    }

    /// How many keys are queued.
    pub fn len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes the queue: pops drain what is queued, then report [`PopError::Closed`].
    pub fn close(&self) {
        self.shared.state.lock().closed = true;
        self.shared.notify.notify_waiters();
    }

    /// Whether [`DeltaFifo::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().closed
    }

    /// True once the first [`DeltaFifo::replace`] batch (tombstones included) has been
    /// popped and processed, or when anything else was queued before the first replace.
    /// Stays true.
    pub fn has_synced(&self) -> bool {
        let state = self.shared.state.lock();
        state.populated && state.initial_population_count == 0
    }
}

impl<K: Object> Store<K> for DeltaFifo<K> {
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
}
