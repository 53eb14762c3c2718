//! A small least-recently-used map (groupcache's `lru.Cache`, which client-go's event
//! correlator uses for every cache): `get` and `insert` mark an entry as most recently
//! used; inserting beyond the capacity evicts the least recently used entry.

use std::{
    collections::{BTreeMap, HashMap},
    hash::Hash,
};

/// A bounded map that forgets its least recently used entry when full.
#[derive(Debug)]
pub(crate) struct LruCache<K, V> {
    capacity: usize,
    tick: u64,
    entries: HashMap<K, (V, u64)>,
    order: BTreeMap<u64, K>,
}

impl<K: Eq + Hash + Clone, V> LruCache<K, V> {
    /// An empty cache holding at most `capacity` entries (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            tick: 0,
            entries: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// The value under `key`, now the most recently used entry.
    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let tick = self.next_tick();
        let (value, used) = self.entries.get_mut(key)?;
        let old = std::mem::replace(used, tick);
        if let Some(k) = self.order.remove(&old) {
            self.order.insert(tick, k);
        }
        Some(value)
    }

    /// Stores `value` under `key` as the most recently used entry, evicting the least
    /// recently used one when the cache is full.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        let tick = self.next_tick();
        if let Some((_, old)) = self.entries.insert(key.clone(), (value, tick)) {
            self.order.remove(&old);
        }
        self.order.insert(tick, key);
        while self.entries.len() > self.capacity {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.entries.remove(&oldest);
        }
    }

    /// The number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn evicts_the_least_recently_used_entry() {
        let mut c = LruCache::new(2);
        c.insert("a", 1);
        c.insert("b", 2);
        assert_eq!(c.get_mut(&"a"), Some(&mut 1)); // "b" is now the oldest
        c.insert("c", 3);
        assert_eq!(c.get_mut(&"b"), None);
        assert_eq!(c.get_mut(&"a"), Some(&mut 1));
        assert_eq!(c.get_mut(&"c"), Some(&mut 3));
    }

    #[test]
    fn reinserting_a_key_replaces_its_value_without_growing() {
        let mut c = LruCache::new(2);
        c.insert("a", 1);
        c.insert("a", 2);
        assert_eq!(c.len(), 1);
        assert_eq!(c.get_mut(&"a"), Some(&mut 2));
    }

    proptest! {
        /// Against a model: a Vec ordered from least to most recently used.
        #[test]
        fn behaves_like_a_recency_ordered_list(
            cap in 1usize..5,
            ops in proptest::collection::vec((any::<bool>(), 0u8..8, any::<u16>()), 0..200),
        ) {
            let mut c = LruCache::new(cap);
            let mut model: Vec<(u8, u16)> = Vec::new();
            for (is_get, k, v) in ops {
                if is_get {
                    let expected = model.iter().position(|(mk, _)| *mk == k).map(|i| {
                        let e = model.remove(i);
                        model.push(e);
                        e.1
                    });
                    prop_assert_eq!(c.get_mut(&k).copied(), expected);
                } else {
                    model.retain(|(mk, _)| *mk != k);
                    model.push((k, v));
                    if model.len() > cap {
                        model.remove(0);
                    }
                    c.insert(k, v);
                }
                prop_assert_eq!(c.len(), model.len());
            }
        }
    }
}
