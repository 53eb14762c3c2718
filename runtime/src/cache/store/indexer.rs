//! [`Indexer`]: the informer's cache, keyed by `namespace/name` and indexed (client-go's
//! `cache.Indexer` from `NewIndexer`).

use std::{fmt, sync::Arc};

use crate::Cacheable;
use crate::cache::{
    CacheError, DeletedObject, Indexers, KnownObjects, ReflectorSink, ThreadSafeStore,
    deletion_handling_meta_namespace_key, meta_namespace_key, store::index::StoreKey,
};

/// A thread-safe, indexed cache of `Arc<K>` keyed by [`meta_namespace_key`]; cheap to clone
/// (clones share the same store).
///
/// Deletes accept a [`DeletedObject`] so a tombstone produced by a relist removes the
/// right key (client-go builds this store with `DeletionHandlingMetaNamespaceKeyFunc`).
pub struct Indexer<K> {
    store: Arc<ThreadSafeStore<K>>,
}

impl<K> Clone for Indexer<K> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
        }
    }
}

impl<K> fmt::Debug for Indexer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Indexer")
            .field("len", &self.store.len())
            .finish()
    }
}

impl<K: Cacheable> Default for Indexer<K> {
    fn default() -> Self {
        Self::new(Indexers::new())
    }
}

impl<K: Cacheable> Indexer<K> {
    /// An empty cache with these index functions.
    pub fn new(indexers: Indexers<K>) -> Self {
        Self {
            store: Arc::new(ThreadSafeStore::new(indexers)),
        }
    }

    /// Adds an object or replaces the one with its key.
    pub fn add(&self, obj: Arc<K>) -> Result<(), CacheError> {
        let key = meta_namespace_key(obj.as_ref())?;
        self.store.add(&key, obj)
    }

    /// The same as [`Indexer::add`].
    pub fn update(&self, obj: Arc<K>) -> Result<(), CacheError> {
        self.add(obj)
    }

    /// Adds or replaces an object, returning the one it replaced (one key computation and
    /// one lock, where `get_by_key` + `update` take two).
    pub fn upsert(&self, obj: Arc<K>) -> Result<Option<Arc<K>>, CacheError> {
        let key = meta_namespace_key(obj.as_ref())?;
        self.store.upsert(&key, obj)
    }

    /// [`Indexer::upsert`] under `key`, which the caller computed with
    /// [`meta_namespace_key`] (the informer reuses its DeltaFifo's key).
    pub(crate) fn upsert_keyed(
        &self,
        key: &StoreKey,
        obj: Arc<K>,
    ) -> Result<Option<Arc<K>>, CacheError> {
        self.store.upsert_shared(key, obj)
    }

    /// Replaces the whole content with `items` (keyed with [`meta_namespace_key`]) in one
    /// swap and returns what it replaced; see [`ThreadSafeStore::swap_items`].
    pub(crate) fn swap_items(
        &self,
        items: &[(StoreKey, Arc<K>)],
        on_refused: &mut dyn FnMut(CacheError),
    ) -> ahash::AHashMap<StoreKey, Arc<K>> {
        self.store.swap_items(items, on_refused)
    }

    /// Removes the object with `obj`'s key; unknown keys are ignored.
    pub fn delete(&self, obj: &K) -> Result<(), CacheError> {
        let key = meta_namespace_key(obj)?;
        self.store.delete(&key)
    }

    /// Removes a deleted object or a tombstone (by its recorded key).
    pub fn delete_object(&self, obj: &DeletedObject<K>) -> Result<(), CacheError> {
        let key = deletion_handling_meta_namespace_key(obj)?;
        self.store.delete(&key)
    }

    /// The cached object with `obj`'s key.
    pub fn get(&self, obj: &K) -> Result<Option<Arc<K>>, CacheError> {
        Ok(self.store.get(&meta_namespace_key(obj)?))
    }

    /// The cached object under `key` (`namespace/name` or `name`).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get(key)
    }

    /// Every cached object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.store.list()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.store.list_keys()
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// Replaces the whole content (a relist) and rebuilds every index; `resource_version`
    /// is the list's and is not otherwise used.
    pub fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError> {
        let _ = resource_version;
        let items = objs
            .into_iter()
            .map(|obj| Ok((meta_namespace_key(obj.as_ref())?, obj)))
            .collect::<Result<Vec<_>, CacheError>>()?;
        self.store.replace(items)
    }

    /// Does nothing: a plain cache has nothing to re-deliver.
    pub fn resync(&self) -> Result<(), CacheError> {
        self.store.resync()
    }

    /// The objects sharing any of `obj`'s values of index `index_name`, each once.
    pub fn index(&self, index_name: &str, obj: &K) -> Result<Vec<Arc<K>>, CacheError> {
        self.store.index(index_name, obj)
    }

    /// The keys of the objects with `value` in index `index_name`.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, CacheError> {
        self.store.index_keys(index_name, value)
    }

    /// The objects with `value` in index `index_name`; an error for an unknown index.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, CacheError> {
        self.store.by_index(index_name, value)
    }

    /// Every value of index `index_name` held by at least one object.
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        self.store.list_index_func_values(index_name)
    }

    /// The registered index functions.
    pub fn get_indexers(&self) -> Indexers<K> {
        self.store.get_indexers()
    }

    /// Registers more index functions, indexing what is already cached.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), CacheError> {
        self.store.add_indexers(indexers)
    }
}

impl<K: Cacheable> ReflectorSink<K> for Indexer<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), CacheError> {
        Indexer::add(self, obj)
    }

    fn update(&self, obj: Arc<K>) -> Result<(), CacheError> {
        Indexer::update(self, obj)
    }

    fn delete(&self, obj: &Arc<K>) -> Result<(), CacheError> {
        Indexer::delete(self, obj.as_ref())
    }

    fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError> {
        Indexer::replace(self, objs, resource_version)
    }

    fn resync(&self) -> Result<(), CacheError> {
        Indexer::resync(self)
    }
}

impl<K: Cacheable> KnownObjects<K> for Indexer<K> {
    fn list_keys(&self) -> Vec<String> {
        Indexer::list_keys(self)
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        Indexer::get_by_key(self, key)
    }

    fn for_each_key(&self, f: &mut dyn FnMut(&str)) {
        self.store.for_each_key(f);
    }

    fn is_empty(&self) -> bool {
        self.store.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::cache::{
        DeletedFinalStateUnknown, IndexFunc, NAMESPACE_INDEX, namespace_indexers,
        testing::{cm, cm_with},
    };

    /// Indexes by the values of every label whose key starts with `team` (multi-valued);
    /// fails for an object labelled `bad`.
    fn team_index() -> IndexFunc<ConfigMap> {
        Arc::new(|obj: &ConfigMap| {
            let labels = obj.metadata.labels.clone().unwrap_or_default();
            if labels.contains_key("bad") {
                return Err("bad label".into());
            }
            Ok(labels
                .iter()
                .filter(|(k, _)| k.starts_with("team"))
                .map(|(_, v)| v.clone())
                .collect())
        })
    }

    fn indexer() -> Indexer<ConfigMap> {
        let mut indexers = namespace_indexers();
        indexers.insert("team".into(), team_index());
        Indexer::new(indexers)
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    fn names(objs: Vec<Arc<ConfigMap>>) -> Vec<String> {
        sorted(
            objs.iter()
                .map(|o| o.metadata.name.clone().unwrap_or_default())
                .collect(),
        )
    }

    #[test]
    fn added_object_is_found_by_key_and_by_object() {
        let idx = indexer();
        idx.add(Arc::new(cm("ns", "a"))).unwrap();
        assert!(idx.get_by_key("ns/a").is_some());
        assert!(idx.get(&cm("ns", "a")).unwrap().is_some());
        assert!(idx.get_by_key("other/a").is_none());
    }

    #[test]
    fn update_replaces_the_stored_value() {
        let idx = indexer();
        idx.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        idx.update(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        assert_eq!(idx.len(), 1);
        let stored = idx.get_by_key("ns/a").unwrap();
        assert_eq!(stored.metadata.resource_version.as_deref(), Some("2"));
    }

    #[test]
    fn deleting_an_unknown_key_is_a_no_op() {
        let idx = indexer();
        idx.add(Arc::new(cm("ns", "a"))).unwrap();
        idx.delete(&cm("ns", "zzz")).unwrap();
        assert_eq!(idx.list_keys(), vec!["ns/a"]);
    }

    #[test]
    fn delete_removes_the_object_and_its_index_entries() {
        let idx = indexer();
        idx.add(Arc::new(cm_with("ns", "a", "1", &[("team", "x")])))
            .unwrap();
        idx.delete(&cm("ns", "a")).unwrap();
        assert!(idx.is_empty());
        assert!(idx.by_index("team", "x").unwrap().is_empty());
        assert!(idx.list_index_func_values("team").is_empty());
        assert!(idx.list_index_func_values(NAMESPACE_INDEX).is_empty());
    }

    #[test]
    fn tombstone_delete_removes_the_recorded_key() {
        let idx = indexer();
        idx.add(Arc::new(cm("ns", "a"))).unwrap();
        let tombstone = DeletedObject::Tombstone(DeletedFinalStateUnknown {
            key: "ns/a".into(),
            obj: None,
        });
        idx.delete_object(&tombstone).unwrap();
        assert!(idx.is_empty());
    }

    #[test]
    fn list_and_list_keys_return_every_object() {
        let idx = indexer();
        for name in ["a", "b", "c"] {
            idx.add(Arc::new(cm("ns", name))).unwrap();
        }
        assert_eq!(sorted(idx.list_keys()), vec!["ns/a", "ns/b", "ns/c"]);
        assert_eq!(names(idx.list()), vec!["a", "b", "c"]);
    }

    #[test]
    fn update_moves_index_entries_and_keeps_other_objects_on_the_old_value() {
        let idx = indexer();
        idx.add(Arc::new(cm_with("ns", "a", "1", &[("team", "x")])))
            .unwrap();
        idx.add(Arc::new(cm_with("ns", "b", "1", &[("team", "x")])))
            .unwrap();
        idx.update(Arc::new(cm_with("ns", "a", "2", &[("team", "y")])))
            .unwrap();
        assert_eq!(
            idx.index_keys("team", "x").unwrap(),
            vec!["ns/b"],
            "only a left x"
        );
        assert_eq!(idx.index_keys("team", "y").unwrap(), vec!["ns/a"]);
    }

    #[test]
    fn an_index_value_whose_last_object_leaves_is_dropped() {
        let idx = indexer();
        idx.add(Arc::new(cm_with("ns", "a", "1", &[("team", "x")])))
            .unwrap();
        idx.update(Arc::new(cm_with("ns", "a", "2", &[("team", "y")])))
            .unwrap();
        assert_eq!(idx.list_index_func_values("team"), vec!["y"]);
    }

    #[test]
    fn by_index_and_index_keys_reject_an_unknown_index() {
        let idx = indexer();
        assert_eq!(
            idx.by_index("nope", "x").unwrap_err(),
            CacheError::UnknownIndex("nope".into())
        );
        assert_eq!(
            idx.index_keys("nope", "x").unwrap_err(),
            CacheError::UnknownIndex("nope".into())
        );
        assert!(idx.index("nope", &cm("ns", "a")).is_err());
    }

    #[test]
    fn multi_valued_index_finds_the_object_under_each_value() {
        let idx = indexer();
        idx.add(Arc::new(cm_with(
            "ns",
            "a",
            "1",
            &[("team1", "x"), ("team2", "y")],
        )))
        .unwrap();
        assert_eq!(names(idx.by_index("team", "x").unwrap()), vec!["a"]);
        assert_eq!(names(idx.by_index("team", "y").unwrap()), vec!["a"]);
        assert_eq!(sorted(idx.list_index_func_values("team")), vec!["x", "y"]);
    }

    #[test]
    fn index_returns_objects_sharing_any_value_each_once() {
        let idx = indexer();
        idx.add(Arc::new(cm_with(
            "ns",
            "a",
            "1",
            &[("team1", "x"), ("team2", "y")],
        )))
        .unwrap();
        idx.add(Arc::new(cm_with("ns", "b", "1", &[("team", "y")])))
            .unwrap();
        idx.add(Arc::new(cm_with("ns", "c", "1", &[("team", "z")])))
            .unwrap();
        let probe = cm_with("ns", "probe", "1", &[("team1", "x"), ("team2", "y")]);
        assert_eq!(names(idx.index("team", &probe).unwrap()), vec!["a", "b"]);
    }

    #[test]
    fn duplicate_values_from_an_index_func_are_indexed_once() {
        let idx = indexer();
        idx.add(Arc::new(cm_with(
            "ns",
            "a",
            "1",
            &[("team1", "x"), ("team2", "x")],
        )))
        .unwrap();
        assert_eq!(idx.index_keys("team", "x").unwrap(), vec!["ns/a"]);
    }

    #[test]
    fn list_index_func_values_lists_values_not_object_keys() {
        let idx = indexer();
        idx.add(Arc::new(cm("ns1", "a"))).unwrap();
        idx.add(Arc::new(cm("ns2", "b"))).unwrap();
        idx.add(Arc::new(cm("ns2", "c"))).unwrap();
        assert_eq!(
            sorted(idx.list_index_func_values(NAMESPACE_INDEX)),
            vec!["ns1", "ns2"]
        );
        assert!(idx.list_index_func_values("unknown").is_empty());
    }

    #[test]
    fn failing_index_func_is_reported_and_leaves_the_store_unchanged() {
        let idx = indexer();
        idx.add(Arc::new(cm_with("ns", "a", "1", &[("team", "x")])))
            .unwrap();
        let err = idx
            .add(Arc::new(cm_with("ns", "b", "1", &[("bad", "")])))
            .unwrap_err();
        assert!(
            matches!(err, CacheError::IndexFunc { ref index, ref key, .. } if index == "team" && key == "ns/b")
        );
        assert!(idx.get_by_key("ns/b").is_none());
        let err = idx
            .update(Arc::new(cm_with("ns", "a", "2", &[("bad", "")])))
            .unwrap_err();
        assert!(matches!(err, CacheError::IndexFunc { .. }));
        assert_eq!(
            idx.get_by_key("ns/a")
                .unwrap()
                .metadata
                .resource_version
                .as_deref(),
            Some("1")
        );
        assert_eq!(idx.index_keys("team", "x").unwrap(), vec!["ns/a"]);
    }

    #[test]
    fn failing_index_func_during_replace_keeps_the_old_content() {
        let idx = indexer();
        idx.add(Arc::new(cm_with("ns", "a", "1", &[("team", "x")])))
            .unwrap();
        let new = vec![
            Arc::new(cm("ns", "b")),
            Arc::new(cm_with("ns", "c", "1", &[("bad", "")])),
        ];
        assert!(idx.replace(new, "5").is_err());
        assert_eq!(idx.list_keys(), vec!["ns/a"]);
        assert_eq!(idx.index_keys("team", "x").unwrap(), vec!["ns/a"]);
    }

    #[test]
    fn replace_swaps_the_content_and_rebuilds_every_index() {
        let idx = indexer();
        idx.add(Arc::new(cm_with("old", "a", "1", &[("team", "x")])))
            .unwrap();
        idx.replace(
            vec![
                Arc::new(cm_with("new", "b", "2", &[("team", "y")])),
                Arc::new(cm("new", "c")),
            ],
            "10",
        )
        .unwrap();
        assert_eq!(sorted(idx.list_keys()), vec!["new/b", "new/c"]);
        assert_eq!(idx.list_index_func_values(NAMESPACE_INDEX), vec!["new"]);
        assert!(idx.by_index("team", "x").unwrap().is_empty());
        assert_eq!(idx.index_keys("team", "y").unwrap(), vec!["new/b"]);
    }

    /// After a relist of `ns/a` (team x), `ns/b` (team x), `ns/a` again (team y): both keys,
    /// and `ns/a` indexed under its last object's values only.
    fn assert_keeps_the_last_object_of_ns_a(idx: &Indexer<ConfigMap>) {
        assert_eq!(sorted(idx.list_keys()), vec!["ns/a", "ns/b"]);
        assert_eq!(idx.index_keys("team", "x").unwrap(), vec!["ns/b"]);
        assert_eq!(idx.index_keys("team", "y").unwrap(), vec!["ns/a"]);
        assert_eq!(
            sorted(idx.index_keys(NAMESPACE_INDEX, "ns").unwrap()),
            vec!["ns/a", "ns/b"]
        );
    }

    /// `replace` indexes in list order too; a key listed twice keeps its last object and
    /// only that object's index values (client-go's `Replace` builds its map the same way).
    #[test]
    fn replace_indexes_the_last_object_of_a_key_listed_twice() {
        let idx = indexer();
        idx.replace(
            vec![
                Arc::new(cm_with("ns", "a", "1", &[("team", "x")])),
                Arc::new(cm_with("ns", "b", "2", &[("team", "x")])),
                Arc::new(cm_with("ns", "a", "3", &[("team", "y")])),
            ],
            "10",
        )
        .unwrap();
        assert_keeps_the_last_object_of_ns_a(&idx);
    }

    /// `swap_items` indexes in list order; a key listed twice keeps its last object, and
    /// only that object's index values.
    #[test]
    fn swap_items_indexes_the_last_object_of_a_key_listed_twice() {
        let idx = indexer();
        let key = |k: &str| StoreKey::from(k);
        let listed = vec![
            (
                key("ns/a"),
                Arc::new(cm_with("ns", "a", "1", &[("team", "x")])),
            ),
            (
                key("ns/b"),
                Arc::new(cm_with("ns", "b", "2", &[("team", "x")])),
            ),
            (
                key("ns/a"),
                Arc::new(cm_with("ns", "a", "3", &[("team", "y")])),
            ),
            (
                key("ns/c"),
                Arc::new(cm_with("ns", "c", "4", &[("bad", "1")])),
            ),
        ];
        let mut refused = 0;
        let old = idx.swap_items(&listed, &mut |_| refused += 1);
        assert!(old.is_empty());
        assert_eq!(refused, 1, "the object the team index refuses is left out");
        assert_keeps_the_last_object_of_ns_a(&idx);
    }

    #[test]
    fn add_indexers_rejects_a_name_already_registered() {
        let idx = indexer();
        let err = idx.add_indexers(namespace_indexers()).unwrap_err();
        assert_eq!(err, CacheError::IndexerConflict(NAMESPACE_INDEX.into()));
    }

    #[test]
    fn add_indexers_on_a_non_empty_store_indexes_existing_objects() {
        let idx: Indexer<ConfigMap> = Indexer::default();
        idx.add(Arc::new(cm_with("ns", "a", "1", &[("team", "x")])))
            .unwrap();
        idx.add_indexers(HashMap::from([("team".to_owned(), team_index())]))
            .unwrap();
        assert_eq!(idx.index_keys("team", "x").unwrap(), vec!["ns/a"]);
        idx.add(Arc::new(cm_with("ns", "b", "1", &[("team", "x")])))
            .unwrap();
        assert_eq!(
            sorted(idx.index_keys("team", "x").unwrap()),
            vec!["ns/a", "ns/b"]
        );
    }

    #[test]
    fn add_indexers_that_fail_on_an_existing_object_change_nothing() {
        let idx: Indexer<ConfigMap> = Indexer::default();
        idx.add(Arc::new(cm_with("ns", "a", "1", &[("bad", "")])))
            .unwrap();
        assert!(
            idx.add_indexers(HashMap::from([("team".to_owned(), team_index())]))
                .is_err()
        );
        assert!(idx.get_indexers().is_empty());
        assert!(idx.by_index("team", "x").is_err());
    }

    #[test]
    fn get_indexers_returns_the_registered_functions() {
        let mut names: Vec<String> = indexer().get_indexers().into_keys().collect();
        names.sort();
        assert_eq!(names, vec!["namespace", "team"]);
    }

    #[test]
    fn resync_changes_nothing() {
        let idx = indexer();
        idx.add(Arc::new(cm("ns", "a"))).unwrap();
        idx.resync().unwrap();
        assert_eq!(idx.list_keys(), vec!["ns/a"]);
    }

    #[test]
    fn object_without_a_name_is_rejected_with_a_key_error() {
        let idx = indexer();
        assert!(matches!(
            idx.add(Arc::new(cm("ns", ""))),
            Err(CacheError::Key(_))
        ));
        assert!(idx.is_empty());
    }

    #[test]
    fn clones_share_one_store() {
        let idx = indexer();
        let clone = idx.clone();
        clone.add(Arc::new(cm("ns", "a"))).unwrap();
        assert_eq!(idx.len(), 1);
    }
}
