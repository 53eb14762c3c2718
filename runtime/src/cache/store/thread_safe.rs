//! The thread-safe, indexed object store (client-go's `threadSafeMap`), and
//! [`KnownObjects`]: what a queue reads of it (client-go's `KeyListerGetter`).
//!
//! [`ThreadSafeStore`] keeps items and every index under one `RwLock`, so a reader sees an
//! object together with all of its index entries or not at all. It takes explicit keys;
//! [`Indexer`](crate::cache::Indexer) computes them.

use std::sync::Arc;

use ahash::{AHashMap, AHashSet};
use parking_lot::RwLock;

use crate::cache::{
    CacheError, Indexers,
    store::index::{Index, StoreKey, index_values},
};

/// Read access to the objects a [`DeltaFifo`](crate::cache::DeltaFifo) compares against (its
/// "known objects", normally the informer's [`Indexer`](crate::cache::Indexer)).
pub trait KnownObjects<K>: Send + Sync + 'static {
    /// Every key.
    fn list_keys(&self) -> Vec<String>;
    /// The object under `key`.
    fn get_by_key(&self, key: &str) -> Option<Arc<K>>;
    /// Calls `f` with every key. The default goes through [`KnownObjects::list_keys`];
    /// stores override it to visit their keys in place, without copying them (a relist
    /// compares every known key against the listed ones).
    fn for_each_key(&self, f: &mut dyn FnMut(&str)) {
        for key in self.list_keys() {
            f(&key);
        }
    }
    /// Whether there are no keys (the default lists them).
    fn is_empty(&self) -> bool {
        self.list_keys().is_empty()
    }
}

/// Items and indices under one lock, addressed by explicit keys.
pub struct ThreadSafeStore<K> {
    inner: RwLock<Inner<K>>,
}

struct Inner<K> {
    items: AHashMap<StoreKey, Arc<K>>,
    indexers: Indexers<K>,
    /// Bumped whenever `indexers` changes, so `replace` can build indices without the lock.
    indexers_generation: u64,
    indices: AHashMap<String, Index>,
}

/// Index values of one object, in the iteration order of a snapshot of the indexers
/// (inline for up to two indexers: computed on every write, this must not allocate).
type ValuesByIndex = smallvec::SmallVec<[Vec<String>; 2]>;

impl<K> Inner<K> {
    fn values_of(&self, key: &str, obj: &K) -> Result<ValuesByIndex, CacheError> {
        compute_values(&self.indexers, key, obj)
    }
}

fn compute_values<K>(
    indexers: &Indexers<K>,
    key: &str,
    obj: &K,
) -> Result<ValuesByIndex, CacheError> {
    indexers
        .iter()
        .map(|(name, func)| {
            index_values(func, obj).map_err(|e| CacheError::IndexFunc {
                index: name.clone(),
                key: key.to_owned(),
                message: e.0,
            })
        })
        .collect()
}

/// An empty index for each index function.
fn empty_indices<K>(indexers: &Indexers<K>) -> AHashMap<String, Index> {
    indexers
        .keys()
        .map(|name| (name.clone(), Index::default()))
        .collect()
}

/// Files `key` under `values`, one entry of [`compute_values`]'s result per index function.
fn insert_values<K>(
    indices: &mut AHashMap<String, Index>,
    indexers: &Indexers<K>,
    key: &StoreKey,
    values: ValuesByIndex,
) {
    for ((name, _), values) in indexers.iter().zip(values) {
        if let Some(index) = indices.get_mut(name) {
            index.insert(key, &values);
        }
    }
}

/// The indices of `items`, visited in the order given (see [`build_indices_lenient`] on why
/// a relist passes them in list order); fails on the first object an index function refuses.
fn build_indices<'a, K: 'a>(
    indexers: &Indexers<K>,
    items: impl IntoIterator<Item = (&'a StoreKey, &'a Arc<K>)>,
) -> Result<AHashMap<String, Index>, CacheError> {
    let mut indices = empty_indices(indexers);
    if indexers.is_empty() {
        return Ok(indices);
    }
    for (key, obj) in items {
        let values = compute_values(indexers, key, obj)?;
        insert_values(&mut indices, indexers, key, values);
    }
    Ok(indices)
}

/// [`build_indices`] over `listed`, the content of `items` in the order it was listed,
/// leaving out (and reporting) the items an index function refuses.
///
/// The objects are visited in list order, not the map's: they were decoded one after the
/// other, so in that order their memory is read nearly sequentially, where the map's hash
/// order jumps across the whole heap (a cache miss per object, the larger part of an
/// initial sync's indexing cost). `listed` must hold each key once.
fn build_indices_lenient<K>(
    indexers: &Indexers<K>,
    listed: &[(StoreKey, Arc<K>)],
    items: &mut AHashMap<StoreKey, Arc<K>>,
    on_refused: &mut dyn FnMut(CacheError),
) -> AHashMap<String, Index> {
    let mut indices = empty_indices(indexers);
    if indexers.is_empty() {
        return indices;
    }
    let mut refused = Vec::new();
    for (key, obj) in listed {
        match compute_values(indexers, key, obj) {
            Ok(values) => insert_values(&mut indices, indexers, key, values),
            Err(error) => {
                on_refused(error);
                refused.push(key.clone());
            }
        }
    }
    for key in refused {
        items.remove(&key);
    }
    indices
}

/// A relist's objects with their keys, in the order they were listed.
type Listed<K> = Vec<(StoreKey, Arc<K>)>;

/// The map of a relist's `listed` items, and the order to index them in: `listed` itself,
/// or, when a key is listed twice (it keeps its last object), the map's content.
fn map_listed<K>(listed: &[(StoreKey, Arc<K>)]) -> (AHashMap<StoreKey, Arc<K>>, Option<Listed<K>>) {
    let mut items: AHashMap<StoreKey, Arc<K>> = AHashMap::with_capacity(listed.len());
    let mut repeated = false;
    for (key, obj) in listed {
        repeated |= items.insert(key.clone(), obj.clone()).is_some();
    }
    let deduplicated =
        repeated.then(|| items.iter().map(|(k, o)| (k.clone(), o.clone())).collect());
    (items, deduplicated)
}

impl<K> Default for ThreadSafeStore<K> {
    fn default() -> Self {
        Self::new(Indexers::new())
    }
}

impl<K> ThreadSafeStore<K> {
    /// An empty store with these index functions.
    pub fn new(indexers: Indexers<K>) -> Self {
        let indices = empty_indices(&indexers);
        Self {
            inner: RwLock::new(Inner {
                items: AHashMap::new(),
                indexers,
                indexers_generation: 0,
                indices,
            }),
        }
    }

    /// Adds or replaces the object under `key`, moving its index entries. If an index
    /// function fails, nothing changes.
    pub fn add(&self, key: &str, obj: Arc<K>) -> Result<(), CacheError> {
        self.upsert(key, obj).map(|_| ())
    }

    /// Like [`ThreadSafeStore::add`], returning the object it replaced.
    pub fn upsert(&self, key: &str, obj: Arc<K>) -> Result<Option<Arc<K>>, CacheError> {
        self.upsert_with(key, || StoreKey::from(key), obj)
    }

    /// [`ThreadSafeStore::upsert`] under a key that is already shared (a new entry takes a
    /// reference to it instead of a copy).
    pub(crate) fn upsert_shared(
        &self,
        key: &StoreKey,
        obj: Arc<K>,
    ) -> Result<Option<Arc<K>>, CacheError> {
        self.upsert_with(key, || key.clone(), obj)
    }

    fn upsert_with(
        &self,
        key: &str,
        new_key: impl FnOnce() -> StoreKey,
        obj: Arc<K>,
    ) -> Result<Option<Arc<K>>, CacheError> {
        let mut inner = self.inner.write();
        let new_values = inner.values_of(key, &obj)?;
        let (store_key, old_values) = match inner.items.get_key_value(key) {
            Some((existing_key, old)) => (existing_key.clone(), Some(inner.values_of(key, old)?)),
            None => (new_key(), None),
        };
        let Inner {
            indexers,
            indices,
            items,
            ..
        } = &mut *inner;
        for (i, name) in indexers.keys().enumerate() {
            let Some(index) = indices.get_mut(name) else {
                continue;
            };
            let new = &new_values[i];
            match &old_values {
                Some(old) if &old[i] == new => {}
                Some(old) => {
                    index.remove(key, &old[i]);
                    index.insert(&store_key, new);
                }
                None => index.insert(&store_key, new),
            }
        }
        Ok(items.insert(store_key, obj))
    }

    /// The same as [`ThreadSafeStore::add`].
    pub fn update(&self, key: &str, obj: Arc<K>) -> Result<(), CacheError> {
        self.add(key, obj)
    }

    /// Removes the object under `key` and its index entries; unknown keys are ignored.
    pub fn delete(&self, key: &str) -> Result<(), CacheError> {
        let mut inner = self.inner.write();
        let Some(old) = inner.items.get(key) else {
            return Ok(());
        };
        let old_values = inner.values_of(key, old)?;
        let Inner {
            indexers,
            indices,
            items,
            ..
        } = &mut *inner;
        for (name, values) in indexers.keys().zip(&old_values) {
            #[cfg(feature = "planted-bugs")]
            if crate::planted_bugs::INDEX_KEEPS_DELETED_KEYS
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                continue;
            }
            if let Some(index) = indices.get_mut(name) {
                index.remove(key, values);
            }
        }
        items.remove(key);
        Ok(())
    }

    /// The object under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        self.inner.read().items.get(key).cloned()
    }

    /// Every object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner.read().items.values().cloned().collect()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.inner
            .read()
            .items
            .keys()
            .map(|k| k.to_string())
            .collect()
    }

    /// Calls `f` with every key (under the read lock, so `f` must not write to this store).
    pub fn for_each_key(&self, f: &mut dyn FnMut(&str)) {
        for key in self.inner.read().items.keys() {
            f(key);
        }
    }

    /// How many objects are stored.
    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replaces every item and rebuilds every index. The new content and its indices are
    /// built before the write lock is taken (readers keep reading the old content until
    /// the swap); if an index function fails, nothing changes.
    pub fn replace(&self, new_items: Vec<(String, Arc<K>)>) -> Result<(), CacheError> {
        let listed: Listed<K> = new_items
            .into_iter()
            .map(|(key, obj)| (StoreKey::from(key), obj))
            .collect();
        let (items, deduplicated) = map_listed(&listed);
        // Indexed in list order, as `swap_items` does (see `build_indices_lenient`).
        let order = deduplicated.as_deref().unwrap_or(&listed);
        let in_order = || order.iter().map(|(key, obj)| (key, obj));
        let (indexers, generation) = {
            let inner = self.inner.read();
            (inner.indexers.clone(), inner.indexers_generation)
        };
        let mut indices = build_indices(&indexers, in_order())?;
        let old = {
            let mut inner = self.inner.write();
            if inner.indexers_generation != generation {
                // Indexers were added meanwhile: rebuild with the current set.
                indices = build_indices(&inner.indexers, in_order())?;
            }
            let old_items = std::mem::replace(&mut inner.items, items);
            let old_indices = std::mem::replace(&mut inner.indices, indices);
            (old_items, old_indices)
        };
        // Dropping a large map happens outside the lock.
        drop(old);
        Ok(())
    }

    /// Replaces every item (a relist applied atomically) and returns the items it replaced.
    /// The new content and its indices are built before the write lock is taken, so readers
    /// see the old content until one swap and the new one after it — never a mix. An object
    /// an index function refuses is left out and its error handed to `on_refused` (the
    /// rest of the relist still applies).
    pub(crate) fn swap_items(
        &self,
        new_items: &[(StoreKey, Arc<K>)],
        on_refused: &mut dyn FnMut(CacheError),
    ) -> AHashMap<StoreKey, Arc<K>> {
        let (mut items, deduplicated) = map_listed(new_items);
        let listed = deduplicated.as_deref().unwrap_or(new_items);
        let (indexers, generation) = {
            let inner = self.inner.read();
            (inner.indexers.clone(), inner.indexers_generation)
        };
        let mut indices = build_indices_lenient(&indexers, listed, &mut items, on_refused);
        let mut inner = self.inner.write();
        if inner.indexers_generation != generation {
            // Indexers were added meanwhile: rebuild with the current set.
            // (What the first pass refused is gone from `items` and not reported twice.)
            let remaining: Vec<(StoreKey, Arc<K>)> = listed
                .iter()
                .filter(|(key, _)| items.contains_key(key))
                .cloned()
                .collect();
            indices = build_indices_lenient(&inner.indexers, &remaining, &mut items, on_refused);
        }
        inner.indices = indices;
        std::mem::replace(&mut inner.items, items)
    }

    /// Does nothing: items and indices are always consistent.
    pub fn resync(&self) -> Result<(), CacheError> {
        Ok(())
    }

    /// The objects sharing any of `obj`'s values of index `index_name`, each once.
    pub fn index(&self, index_name: &str, obj: &K) -> Result<Vec<Arc<K>>, CacheError> {
        let inner = self.inner.read();
        let func = inner
            .indexers
            .get(index_name)
            .ok_or_else(|| CacheError::UnknownIndex(index_name.to_owned()))?;
        let values = index_values(func, obj).map_err(|e| CacheError::IndexFunc {
            index: index_name.to_owned(),
            key: String::new(),
            message: e.0,
        })?;
        let Some(index) = inner.indices.get(index_name) else {
            return Ok(Vec::new());
        };
        let mut seen: AHashSet<&StoreKey> = AHashSet::new();
        let mut out = Vec::new();
        for value in &values {
            for key in index.keys(value).into_iter().flatten() {
                if seen.insert(key)
                    && let Some(obj) = inner.items.get(key)
                {
                    out.push(obj.clone());
                }
            }
        }
        Ok(out)
    }

    /// The keys of the objects with `value` in index `index_name`.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, CacheError> {
        let inner = self.inner.read();
        let index = Self::index_named(&inner, index_name)?;
        Ok(index
            .keys(value)
            .into_iter()
            .flatten()
            .map(|k| k.to_string())
            .collect())
    }

    /// The objects with `value` in index `index_name`.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, CacheError> {
        let inner = self.inner.read();
        let index = Self::index_named(&inner, index_name)?;
        Ok(index
            .keys(value)
            .into_iter()
            .flatten()
            .filter_map(|k| inner.items.get(k).cloned())
            .collect())
    }

    /// Every value of index `index_name` that at least one object has (empty for an
    /// unknown index).
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        let inner = self.inner.read();
        inner
            .indices
            .get(index_name)
            .map(|index| index.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The registered index functions.
    pub fn get_indexers(&self) -> Indexers<K> {
        self.inner.read().indexers.clone()
    }

    /// Registers more index functions and indexes the objects already stored (current
    /// client-go allows this on a non-empty store). A name already registered is refused;
    /// if an index function fails on an existing object, nothing changes.
    pub fn add_indexers(&self, new_indexers: Indexers<K>) -> Result<(), CacheError> {
        let mut inner = self.inner.write();
        let mut conflicts: Vec<&str> = new_indexers
            .keys()
            .filter(|n| inner.indexers.contains_key(*n))
            .map(String::as_str)
            .collect();
        if !conflicts.is_empty() {
            conflicts.sort_unstable();
            return Err(CacheError::IndexerConflict(conflicts.join(", ")));
        }
        let new_indices = build_indices(&new_indexers, &inner.items)?;
        inner.indices.extend(new_indices);
        inner.indexers.extend(new_indexers);
        inner.indexers_generation += 1;
        Ok(())
    }

    fn index_named<'a>(inner: &'a Inner<K>, index_name: &str) -> Result<&'a Index, CacheError> {
        if !inner.indexers.contains_key(index_name) {
            return Err(CacheError::UnknownIndex(index_name.to_owned()));
        }
        inner
            .indices
            .get(index_name)
            .ok_or_else(|| CacheError::UnknownIndex(index_name.to_owned()))
    }
}
