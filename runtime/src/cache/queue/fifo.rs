//! [`Fifo`]: a queue that keeps only the newest value of each key (client-go's `FIFO`).
//!
//! An object updated several times before it is popped is popped once, in its newest
//! state; a deleted object is never popped. Use it when a worker should see the latest
//! value and deletions need no processing.

use std::{fmt, sync::Arc};

use ahash::{AHashMap, AHashSet};

use crate::Cacheable;
use crate::cache::{
    CacheError, KeyFunc, PopError, ProcessError, ReflectorSink, meta_namespace_key,
    queue::core::QueueCore, store::index::StoreKey,
};

struct Shared<K> {
    core: QueueCore<Arc<K>>,
    key_func: KeyFunc<K>,
}

/// A producer/consumer queue keyed by object key, holding the newest value per key; each
/// key is queued once. Cheap to clone.
pub struct Fifo<K> {
    shared: Arc<Shared<K>>,
}

impl<K> Clone for Fifo<K> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<K> fmt::Debug for Fifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.core.lock();
        f.debug_struct("Fifo")
            .field("queued", &state.items.len())
            .field("sync", &state.sync)
            .finish()
    }
}

impl<K: Cacheable> Default for Fifo<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Cacheable> Fifo<K> {
    /// An empty queue keyed by [`meta_namespace_key`].
    pub fn new() -> Self {
        Self::with_key_func(Arc::new(|obj: &K| meta_namespace_key(obj)))
    }
}

impl<K: Send + Sync + 'static> Fifo<K> {
    /// An empty queue keyed by `key_func`.
    pub fn with_key_func(key_func: KeyFunc<K>) -> Self {
        Self {
            shared: Arc::new(Shared {
                core: QueueCore::new(),
                key_func,
            }),
        }
    }

    fn key(&self, obj: &K) -> Result<String, CacheError> {
        Ok((self.shared.key_func)(obj)?)
    }

    /// Queues `obj`, or replaces the queued value with its key (keeping its place).
    pub fn add(&self, obj: Arc<K>) -> Result<(), CacheError> {
        let key = self.key(&obj)?;
        let mut state = self.shared.core.lock();
        state.sync.written();
        match state.items.get_mut(key.as_str()) {
            Some(slot) => *slot = obj,
            None => state.push_new(StoreKey::from(key), obj),
        }
        drop(state);
        self.shared.core.wake();
        Ok(())
    }

    /// The same as [`Fifo::add`].
    pub fn update(&self, obj: Arc<K>) -> Result<(), CacheError> {
        self.add(obj)
    }

    /// Forgets the value queued under `obj`'s key; the key stays in the queue order and
    /// `pop` skips it.
    pub fn delete(&self, obj: &K) -> Result<(), CacheError> {
        let key = self.key(obj)?;
        let mut state = self.shared.core.lock();
        state.sync.written();
        state.items.remove(key.as_str());
        Ok(())
    }

    /// Queues `obj` only if nothing is queued under its key (used to requeue after a failed
    /// process: a newer value wins).
    pub fn add_if_not_present(&self, obj: Arc<K>) -> Result<(), CacheError> {
        let key = self.key(&obj)?;
        let mut state = self.shared.core.lock();
        state.sync.written();
        state.add_if_not_present(StoreKey::from(key), obj);
        drop(state);
        self.shared.core.wake();
        Ok(())
    }

    /// The value queued under `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.shared.core.lock().items.get(key).cloned()
    }

    /// Every queued value.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.shared.core.lock().items.values().cloned().collect()
    }

    /// Every queued key.
    pub fn list_keys(&self) -> Vec<String> {
        self.shared
            .core
            .lock()
            .items
            .keys()
            .map(|k| k.to_string())
            .collect()
    }

    /// Replaces the whole content with `objs`. The first call (before any other write)
    /// sets the initial population that [`Fifo::has_synced`] waits for.
    pub fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError> {
        let _ = resource_version;
        let mut items: AHashMap<StoreKey, Arc<K>> = AHashMap::with_capacity(objs.len());
        for obj in objs {
            let key = self.key(&obj)?;
            items.insert(StoreKey::from(key), obj);
        }
        let mut state = self.shared.core.lock();
        state.sync.listed(items.len());
        state.queue = items.keys().cloned().collect();
        state.items = items;
        let wake = !state.queue.is_empty();
        drop(state);
        if wake {
            self.shared.core.wake();
        }
        Ok(())
    }

    /// Puts every key that has a value but is not queued back into the queue. Add and pop
    /// keep the two consistent, so this normally does nothing.
    pub fn resync(&self) -> Result<(), CacheError> {
        let mut state = self.shared.core.lock();
        let queued: AHashSet<StoreKey> = state.queue.iter().cloned().collect();
        let missing: Vec<StoreKey> = state
            .items
            .keys()
            .filter(|k| !queued.contains(*k))
            .cloned()
            .collect();
        let wake = !missing.is_empty();
        state.queue.extend(missing);
        drop(state);
        if wake {
            self.shared.core.wake();
        }
        Ok(())
    }

    /// Waits for the next value and hands it to `process` while the queue is locked, so
    /// values are processed one at a time, in order. Returns the value, or
    /// [`PopError::Closed`] once the queue is closed and drained.
    pub async fn pop<E>(
        &self,
        process: impl FnOnce(&Arc<K>) -> Result<(), ProcessError<E>>,
    ) -> Result<Arc<K>, PopError<E>> {
        self.shared.core.pop(|_, obj, _| process(obj)).await
    }

    /// Closes the queue: pops drain what is queued, then report [`PopError::Closed`].
    pub fn close(&self) {
        self.shared.core.close();
    }

    /// Whether [`Fifo::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.core.is_closed()
    }

    /// True once the first [`Fifo::replace`] batch has been popped, or when anything was
    /// added, updated or deleted before the first replace.
    pub fn has_synced(&self) -> bool {
        self.shared.core.has_synced()
    }
}

impl<K: Send + Sync + 'static> ReflectorSink<K> for Fifo<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), CacheError> {
        Fifo::add(self, obj)
    }

    fn update(&self, obj: Arc<K>) -> Result<(), CacheError> {
        Fifo::update(self, obj)
    }

    fn delete(&self, obj: &Arc<K>) -> Result<(), CacheError> {
        Fifo::delete(self, obj.as_ref())
    }

    fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError> {
        Fifo::replace(self, objs, resource_version)
    }

    fn resync(&self) -> Result<(), CacheError> {
        Fifo::resync(self)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::cache::testing::{cm, cm_with};

    type Q = Fifo<ConfigMap>;

    async fn pop_name(q: &Q) -> Result<String, PopError<()>> {
        q.pop(|_| Ok(()))
            .await
            .map(|o| o.metadata.name.clone().unwrap_or_default())
    }

    #[tokio::test]
    async fn updates_before_a_pop_are_popped_once_as_the_newest_value() {
        let q = Q::new();
        q.add(Arc::new(cm_with("ns", "a", "1", &[]))).unwrap();
        q.update(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        q.update(Arc::new(cm_with("ns", "a", "3", &[]))).unwrap();
        let popped = q.pop::<()>(|_| Ok(())).await.unwrap();
        assert_eq!(popped.metadata.resource_version.as_deref(), Some("3"));
        assert!(q.list_keys().is_empty());
    }

    #[tokio::test]
    async fn keys_pop_in_first_add_order() {
        let q = Q::new();
        for name in ["c", "a", "b"] {
            q.add(Arc::new(cm("ns", name))).unwrap();
        }
        q.update(Arc::new(cm("ns", "c"))).unwrap();
        for expected in ["c", "a", "b"] {
            assert_eq!(pop_name(&q).await.unwrap(), expected);
        }
    }

    #[tokio::test]
    async fn deleted_key_stays_in_order_but_is_skipped() {
        let q = Q::new();
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        q.add(Arc::new(cm("ns", "b"))).unwrap();
        q.delete(&cm("ns", "a")).unwrap();
        assert!(q.get_by_key("ns/a").is_none());
        assert_eq!(pop_name(&q).await.unwrap(), "b");
        q.close();
        assert_eq!(pop_name(&q).await, Err(PopError::Closed));
    }

    #[tokio::test]
    async fn add_if_not_present_keeps_a_queued_newer_value() {
        let q = Q::new();
        q.add(Arc::new(cm_with("ns", "a", "2", &[]))).unwrap();
        q.add_if_not_present(Arc::new(cm_with("ns", "a", "1", &[])))
            .unwrap();
        let popped = q.pop::<()>(|_| Ok(())).await.unwrap();
        assert_eq!(popped.metadata.resource_version.as_deref(), Some("2"));
        q.add_if_not_present(Arc::new(cm_with("ns", "a", "1", &[])))
            .unwrap();
        assert_eq!(q.list_keys(), vec!["ns/a"]);
    }

    #[tokio::test]
    async fn requeue_error_puts_the_item_back_at_the_tail() {
        let q = Q::new();
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        q.add(Arc::new(cm("ns", "b"))).unwrap();
        let err = q
            .pop(|_| Err(ProcessError::Requeue("retry")))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            PopError::Process {
                error: "retry",
                requeued: true
            }
        );
        assert_eq!(pop_name(&q).await.unwrap(), "b");
        assert_eq!(pop_name(&q).await.unwrap(), "a");
    }

    #[tokio::test]
    async fn failed_process_drops_the_item() {
        let q = Q::new();
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        let err = q
            .pop(|_| Err(ProcessError::Failed("no")))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            PopError::Process {
                error: "no",
                requeued: false
            }
        );
        assert!(q.list().is_empty());
    }

    #[tokio::test]
    async fn closed_queue_drains_before_reporting_closed() {
        let q = Q::new();
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        q.close();
        assert!(q.is_closed());
        assert_eq!(pop_name(&q).await.unwrap(), "a");
        assert_eq!(pop_name(&q).await, Err(PopError::Closed));
    }

    #[tokio::test]
    async fn a_waiting_pop_wakes_on_add_and_on_close() {
        let q = Q::new();
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { pop_name(&q).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiter.is_finished());
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        assert_eq!(waiter.await.unwrap().unwrap(), "a");

        let waiter = tokio::spawn({
            let q = q.clone();
            async move { pop_name(&q).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        q.close();
        assert_eq!(waiter.await.unwrap(), Err(PopError::Closed));
    }

    #[tokio::test]
    async fn replace_first_syncs_only_after_the_whole_batch_is_popped() {
        let q = Q::new();
        assert!(!q.has_synced());
        q.replace(vec![Arc::new(cm("ns", "a")), Arc::new(cm("ns", "b"))], "1")
            .unwrap();
        assert!(!q.has_synced());
        // Both initial items are deleted before being popped: their queue slots still
        // count toward the initial batch and are passed over by the next pop.
        q.delete(&cm("ns", "a")).unwrap();
        q.delete(&cm("ns", "b")).unwrap();
        assert!(!q.has_synced());
        q.add(Arc::new(cm("ns", "c"))).unwrap();
        assert!(
            !q.has_synced(),
            "a later add does not make the initial batch popped"
        );
        assert_eq!(pop_name(&q).await.unwrap(), "c");
        assert!(q.has_synced());
        q.replace(vec![Arc::new(cm("ns", "d"))], "2").unwrap();
        assert!(q.has_synced(), "once synced, stays synced");
    }

    #[test]
    fn a_write_before_the_first_replace_means_synced() {
        let q = Q::new();
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        assert!(q.has_synced());
        q.replace(vec![Arc::new(cm("ns", "b"))], "1").unwrap();
        assert!(q.has_synced());
    }

    #[test]
    fn replace_swaps_the_content() {
        let q = Q::new();
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        q.replace(vec![Arc::new(cm("ns", "b")), Arc::new(cm("ns", "c"))], "1")
            .unwrap();
        let mut keys = q.list_keys();
        keys.sort();
        assert_eq!(keys, vec!["ns/b", "ns/c"]);
    }

    #[tokio::test]
    async fn resync_on_a_consistent_queue_queues_nothing_twice() {
        let q = Q::new();
        q.add(Arc::new(cm("ns", "a"))).unwrap();
        q.resync().unwrap();
        assert_eq!(pop_name(&q).await.unwrap(), "a");
        q.close();
        assert_eq!(pop_name(&q).await, Err(PopError::Closed));
    }
}
