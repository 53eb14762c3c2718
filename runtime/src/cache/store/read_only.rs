//! [`ReadOnlyIndexer`]: the view of an informer's cache that handlers, listers and
//! controllers get. Only the informer writes its cache (client-go hands out a writable
//! `GetIndexer()` and documents "do not mutate"; here the type says it).

use std::{fmt, sync::Arc};

use crate::Cacheable;
use crate::cache::{CacheError, Indexer, Indexers};

/// Reads of an [`Indexer`], without its writes; cheap to clone (clones share the cache).
pub struct ReadOnlyIndexer<K> {
    inner: Indexer<K>,
}

impl<K> Clone for ReadOnlyIndexer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<K> fmt::Debug for ReadOnlyIndexer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ReadOnlyIndexer").field(&self.inner).finish()
    }
}

impl<K> From<Indexer<K>> for ReadOnlyIndexer<K> {
    fn from(inner: Indexer<K>) -> Self {
        Self { inner }
    }
}

impl<K: Cacheable> ReadOnlyIndexer<K> {
    /// The cached object with `obj`'s key.
    pub fn get(&self, obj: &K) -> Result<Option<Arc<K>>, CacheError> {
        self.inner.get(obj)
    }

    /// The cached object under `key` (`namespace/name` or `name`).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.inner.get_by_key(key)
    }

    /// Every cached object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner.list()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.inner.list_keys()
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The objects sharing any of `obj`'s values of index `index_name`, each once.
    pub fn index(&self, index_name: &str, obj: &K) -> Result<Vec<Arc<K>>, CacheError> {
        self.inner.index(index_name, obj)
    }

    /// The keys of the objects with `value` in index `index_name`.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, CacheError> {
        self.inner.index_keys(index_name, value)
    }

    /// The objects with `value` in index `index_name`; an error for an unknown index.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, CacheError> {
        self.inner.by_index(index_name, value)
    }

    /// Every value of index `index_name` held by at least one object.
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        self.inner.list_index_func_values(index_name)
    }

    /// The registered index functions.
    pub fn get_indexers(&self) -> Indexers<K> {
        self.inner.get_indexers()
    }
}
