//! [`Queue`]: what an informer drains — a [`RealFifo`](crate::cache::RealFifo) (the default, in
//! server order) or a [`DeltaFifo`](crate::cache::DeltaFifo) (keyed) — and the [`Queued`]s it
//! hands over, among them the atomic [`Relist`] and [`Resync`] batches (client-go's
//! `Queue` and `QueueWithBatch`).

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::cache::{
    CacheError, DeletedFinalStateUnknown, DeletedObject, Delta, PopError, ReflectorSink,
};

/// One thing a [`Queue`] hands its consumer.
#[derive(Debug)]
pub enum Queued<'a, K> {
    /// Changes of one object, oldest first: one per pop from a
    /// [`RealFifo`](crate::cache::RealFifo), everything queued for the key from a
    /// [`DeltaFifo`](crate::cache::DeltaFifo).
    Deltas {
        /// The object's key.
        key: &'a Arc<str>,
        /// Its changes, oldest first.
        deltas: &'a [Delta<K>],
    },
    /// A complete (re)list, to be applied to the cache as one unit.
    Relist(Relist<K>),
    /// A periodic resync of cached objects, to be re-delivered as one unit.
    Resync(Resync<K>),
    /// The server's resourceVersion moved without a change (a watch bookmark); the cache is
    /// now current up to it.
    Bookmark(String),
}

/// A relist queued as one item (client-go's atomic `Replace`): the objects the list
/// returned, the tombstones for what the queue or the cache knew but the list did not
/// return (their delete events were missed), and the list's resourceVersion. A consumer
/// applies it in one step, so readers of its cache see the state before or after the
/// relist, never a mix.
#[derive(Debug)]
pub struct Relist<K> {
    pub(crate) tombstones: Vec<DeletedFinalStateUnknown<K>>,
    pub(crate) objects: Vec<(Arc<str>, Arc<K>)>,
    pub(crate) resource_version: String,
}

impl<K> Relist<K> {
    /// The listed objects with their keys, in list order.
    pub fn objects(&self) -> &[(Arc<str>, Arc<K>)] {
        &self.objects
    }

    /// The tombstones for objects missing from the list.
    pub fn tombstones(&self) -> &[DeletedFinalStateUnknown<K>] {
        &self.tombstones
    }

    /// The list's resourceVersion.
    pub fn resource_version(&self) -> &str {
        &self.resource_version
    }

    /// The relist as the deltas a non-atomic queue would have queued: a
    /// [`Delta::Deleted`] tombstone for each missing object, then a [`Delta::Replaced`] for
    /// each listed one (client-go's order).
    pub fn deltas(&self) -> Vec<Delta<K>> {
        self.tombstones
            .iter()
            .map(|t| Delta::Deleted(DeletedObject::Tombstone(t.clone())))
            .chain(
                self.objects
                    .iter()
                    .map(|(_, obj)| Delta::Replaced(obj.clone())),
            )
            .collect()
    }
}

/// A periodic resync queued as one item: the cached objects that had nothing queued, to be
/// re-delivered as [`Delta::Sync`]. They come from the cache, so applying them changes
/// nothing there; only handlers due a resync hear of them.
#[derive(Debug)]
pub struct Resync<K> {
    pub(crate) objects: Vec<(Arc<str>, Arc<K>)>,
}

impl<K> Resync<K> {
    /// The re-delivered objects with their keys.
    pub fn objects(&self) -> &[(Arc<str>, Arc<K>)] {
        &self.objects
    }

    /// The resync as [`Delta::Sync`]s.
    pub fn deltas(&self) -> Vec<Delta<K>> {
        self.objects
            .iter()
            .map(|(_, obj)| Delta::Sync(obj.clone()))
            .collect()
    }
}

/// How a consumer processes one popped item: with whether it belongs to the initial list.
/// An error drops the item (neither queue re-queues for an informer) and ends the batch.
pub type ProcessItem<'f, K> = dyn FnMut(Queued<'_, K>, bool) -> Result<(), CacheError> + Send + 'f;

/// The queue between a reflector (which writes it through [`ReflectorSink`](crate::cache::ReflectorSink)) and an informer
/// (which drains it with [`Queue::pop_batch`]); client-go's `Queue`/`QueueWithBatch`.
pub trait Queue<K>: ReflectorSink<K> {
    /// Waits until something is queued (or the queue is closed and drained), then hands up
    /// to `max` items (at least one), in queue order, to `process` under one hold of the
    /// queue's lock — so nothing is queued between them and [`Queue::has_synced`] cannot turn
    /// true before the last initial item is processed. Returns how many were processed.
    fn pop_batch<'a>(
        &'a self,
        max: usize,
        process: &'a mut ProcessItem<'_, K>,
    ) -> BoxFuture<'a, Result<usize, PopError<CacheError>>>;
    /// True once the first relist has been popped and processed, or when anything else was
    /// queued before it. Stays true.
    fn has_synced(&self) -> bool;
    /// Closes the queue: pops drain what is queued, then report [`PopError::Closed`].
    fn close(&self);
    /// Whether [`Queue::close`] was called.
    fn is_closed(&self) -> bool;
    /// How many items wait.
    fn len(&self) -> usize;
    /// Whether nothing waits.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
