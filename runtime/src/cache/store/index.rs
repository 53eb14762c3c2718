//! Index functions and the index data they maintain (client-go's `index.go`: `IndexFunc`,
//! `Indexers`, `storeIndex`).
//!
//! An [`IndexFunc`] maps an object to any number of index values (one-to-many: an object can
//! be found under several values of one index). [`Indexers`] names the functions; for each
//! name the store keeps an [`Index`]: index value → the set of object keys having that value.

use std::{collections::HashMap, sync::Arc};

use ahash::{AHashMap, AHashSet};
use kube_core::Resource;

/// The conventional name of the namespace index (client-go's `cache.NamespaceIndex`).
pub const NAMESPACE_INDEX: &str = "namespace";

/// An index function failed for an object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct IndexFuncError(pub String);

impl From<String> for IndexFuncError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for IndexFuncError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// Computes the index values of an object. Values are de-duplicated by the store.
pub type IndexFunc<K> = Arc<dyn Fn(&K) -> Result<Vec<String>, IndexFuncError> + Send + Sync>;

/// Index functions by index name.
pub type Indexers<K> = HashMap<String, IndexFunc<K>>;

/// Indexes objects by namespace; cluster-scoped objects get the empty value.
pub fn meta_namespace_index_func<K: Resource>(obj: &K) -> Result<Vec<String>, IndexFuncError> {
    Ok(vec![obj.meta().namespace.clone().unwrap_or_default()])
}

/// [`Indexers`] holding only [`meta_namespace_index_func`] under [`NAMESPACE_INDEX`], what
/// every generated informer starts with.
pub fn namespace_indexers<K: Resource + 'static>() -> Indexers<K> {
    let func: IndexFunc<K> = Arc::new(meta_namespace_index_func::<K>);
    HashMap::from([(NAMESPACE_INDEX.to_owned(), func)])
}

/// Object keys, shared between the item map and every index set.
pub(crate) type StoreKey = Arc<str>;

/// One index: index value → keys of the objects with that value.
#[derive(Debug, Default, Clone)]
pub(crate) struct Index {
    sets: AHashMap<String, AHashSet<StoreKey>>,
}

impl Index {
    /// Adds `key` under each of `values`.
    pub(crate) fn insert(&mut self, key: &StoreKey, values: &[String]) {
        for value in values {
            match self.sets.get_mut(value.as_str()) {
                Some(set) => {
                    set.insert(key.clone());
                }
                None => {
                    let mut set = AHashSet::with_capacity(1);
                    set.insert(key.clone());
                    self.sets.insert(value.clone(), set);
                }
            }
        }
    }

    /// Removes only `key` from each of `values`' sets, dropping sets that become empty (a
    /// high-cardinality index over short-lived objects must not leak empty sets).
    pub(crate) fn remove(&mut self, key: &str, values: &[String]) {
        for value in values {
            if let Some(set) = self.sets.get_mut(value.as_str()) {
                set.remove(key);
                if set.is_empty() {
                    self.sets.remove(value.as_str());
                }
            }
        }
    }

    /// The keys indexed under `value`.
    pub(crate) fn keys(&self, value: &str) -> Option<&AHashSet<StoreKey>> {
        self.sets.get(value)
    }

    /// Every value that has at least one key.
    pub(crate) fn values(&self) -> impl Iterator<Item = &String> {
        self.sets.keys()
    }
}

/// Runs `func` and de-duplicates its values, preserving first-seen order.
pub(crate) fn index_values<K>(func: &IndexFunc<K>, obj: &K) -> Result<Vec<String>, IndexFuncError> {
    let mut values = func(obj)?;
    if values.len() > 1 {
        let mut seen = AHashSet::with_capacity(values.len());
        values.retain(|v| seen.insert(v.clone()));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testing::{cm, node};

    #[test]
    fn namespace_index_func_returns_the_namespace() {
        assert_eq!(
            meta_namespace_index_func(&cm("ns1", "a")).unwrap(),
            vec!["ns1"]
        );
    }

    #[test]
    fn namespace_index_func_gives_cluster_scoped_objects_the_empty_value() {
        assert_eq!(meta_namespace_index_func(&node("n")).unwrap(), vec![""]);
    }

    #[test]
    fn removing_the_last_key_drops_the_value() {
        let mut index = Index::default();
        let (a, b): (StoreKey, StoreKey) = ("a".into(), "b".into());
        index.insert(&a, &["v".into()]);
        index.insert(&b, &["v".into()]);
        index.remove("a", &["v".into()]);
        assert_eq!(
            index.keys("v").map(|s| s.len()),
            Some(1),
            "only this key is removed"
        );
        index.remove("b", &["v".into()]);
        assert!(index.keys("v").is_none(), "an emptied set is dropped");
        assert_eq!(index.values().count(), 0);
    }

    #[test]
    fn index_values_are_deduplicated() {
        let func: IndexFunc<()> = Arc::new(|_| Ok(vec!["x".into(), "y".into(), "x".into()]));
        assert_eq!(index_values(&func, &()).unwrap(), vec!["x", "y"]);
    }
}
