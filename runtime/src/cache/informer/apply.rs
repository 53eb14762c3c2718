//! What a popped change does (client-go's `processDeltas` and `HandleDeltas`): the cache is
//! written first, then the handlers are told; a relist is applied in one swap.

use std::time::Instant;

use crate::Cacheable;
use crate::cache::{
    CacheError, DeletedFinalStateUnknown, DeletedObject, Delta, Queued, Relist, Resync,
    informer::processor::Notification, store::index::StoreKey,
};
use crate::cache::{QueueKind, SharedIndexInformer};

impl<K: Cacheable> SharedIndexInformer<K> {
    /// Applies one popped item to the cache and tells the handlers (client-go's
    /// `HandleDeltas` / `processDeltasInBatch`), then records its resourceVersion as the
    /// cache's. A change the cache refuses is logged and skipped; the rest still apply.
    pub(super) fn handle_item(
        &self,
        item: Queued<'_, K>,
        is_in_initial_list: bool,
    ) -> Result<(), CacheError> {
        let _block = self.inner.block_deltas.lock();
        let started = self.inner.metrics.as_ref().map(|_| Instant::now());
        // Borrowed from the item: recording it copies into the store version's buffer,
        // with no allocation per change.
        let applied_rv: Option<&str> = match &item {
            Queued::Deltas { key, deltas } => {
                self.handle_deltas(key, deltas, is_in_initial_list);
                deltas.last().and_then(|d| match d {
                    Delta::Deleted(DeletedObject::Tombstone(_)) | Delta::Sync(_) => None,
                    other => other
                        .object()
                        .and_then(|o| o.meta().resource_version.as_deref()),
                })
            }
            Queued::Relist(relist) => {
                self.apply_relist(relist, is_in_initial_list);
                Some(relist.resource_version.as_str())
            }
            Queued::Resync(resync) => {
                self.apply_resync(resync);
                None
            }
            Queued::Bookmark(rv) => Some(rv.as_str()),
        };
        // The queue's lock is held here (lock order, `cache/mod.rs`): its length is
        // recorded by the pop loop instead.
        if let (Some(metrics), Some(started)) = (&self.inner.metrics, started) {
            metrics.processed(started.elapsed().as_secs_f64(), self.inner.indexer.len());
            if let Some(rv) = applied_rv {
                metrics.store_resource_version(rv);
            }
        }
        // A RealFifo pops in the order the reflector queued (a relist is one item), so
        // what it applied is a watermark: everything up to it is in the cache. A DeltaFifo
        // is not: it pops per key in the order the keys were first queued, with every
        // delta a key gathered meanwhile, and takes a relist page by page, so what it has
        // applied can be newer than a change still waiting under another key. Its
        // watermark moves when it drains (`settle_store_version`).
        if self.inner.queue_kind == QueueKind::RealFifo
            && let Some(rv) = applied_rv.filter(|rv| !rv.is_empty())
        {
            self.inner
                .store_resource_version
                .lock()
                .replace_range(.., rv);
        }
        Ok(())
    }

    /// A drained [`DeltaFifo`] has applied everything the reflector had queued, up to
    /// the version the reflector had seen (it records a version after queueing what
    /// came with it; one read a moment early only errs low).
    pub(super) fn settle_store_version(&self, queued: usize) {
        if queued > 0 || self.inner.queue_kind != QueueKind::DeltaFifo {
            return;
        }
        let seen = self
            .inner
            .reflector
            .get()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default();
        if !seen.is_empty() {
            *self.inner.store_resource_version.lock() = seen;
        }
    }

    /// Applies a relist in one swap of the cache's content, then tells the handlers: a
    /// delete (tombstone) for each cached object the list lacks, then an add or an update
    /// (a resync when the resourceVersion is unchanged) per listed object.
    fn apply_relist(&self, relist: &Relist<K>, is_in_initial_list: bool) {
        let old = self
            .inner
            .indexer
            .swap_items(&relist.objects, &mut |error| {
                tracing::error!(%error, "could not store an object in the cache");
            });
        let processor = self.inner.processor.lock();
        if processor.len() > 0 {
            let listed: ahash::AHashSet<&str> = if old.is_empty() {
                ahash::AHashSet::new()
            } else {
                relist.objects.iter().map(|(k, _)| k.as_ref()).collect()
            };
            // The vanished objects in key order (usually few): the same relist tells the
            // handlers the same thing in the same order.
            let mut vanished: Vec<_> = old
                .iter()
                .filter(|(key, _)| !listed.contains(key.as_ref()))
                .collect();
            vanished.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (key, obj) in vanished {
                let tombstone = DeletedFinalStateUnknown {
                    key: key.to_string(),
                    obj: Some(obj.clone()),
                };
                processor.distribute(
                    Notification::Delete(DeletedObject::Tombstone(tombstone)),
                    false,
                );
            }
            for (key, obj) in &relist.objects {
                match old.get(key) {
                    Some(old) => {
                        let is_sync = old.meta().resource_version == obj.meta().resource_version;
                        processor.distribute(
                            Notification::Update {
                                old: old.clone(),
                                new: obj.clone(),
                            },
                            is_sync,
                        );
                    }
                    None => processor.distribute(
                        Notification::Add {
                            obj: obj.clone(),
                            is_in_initial_list,
                        },
                        false,
                    ),
                }
            }
        }
        drop(processor);
        // The replaced content is freed here, outside every lock.
        drop(old);
    }

    /// Re-delivers a resync to the handlers due one; the cache already holds these objects.
    fn apply_resync(&self, resync: &Resync<K>) {
        let processor = self.inner.processor.lock();
        for (key, obj) in resync.objects() {
            let Some(current) = self.inner.indexer.get_by_key(key) else {
                continue;
            };
            processor.distribute(
                Notification::Update {
                    old: current,
                    new: obj.clone(),
                },
                true,
            );
        }
    }

    /// Applies one key's deltas to the cache and tells the handlers (client-go's
    /// `HandleDeltas`). A delta the cache refuses is logged and skipped; the rest still apply.
    fn handle_deltas(&self, key: &StoreKey, deltas: &[Delta<K>], is_in_initial_list: bool) {
        let processor = self.inner.processor.lock();
        // Without handlers only the cache changes: no notification is built, and the
        // replaced object is not read (it is cold: reading it costs a cache miss).
        let notify = processor.len() > 0;
        let indexer = &self.inner.indexer;
        for delta in deltas {
            match delta {
                Delta::Deleted(deleted) => {
                    if let Err(error) = indexer.delete_object(deleted) {
                        tracing::error!(%error, "could not remove an object from the cache");
                        continue;
                    }
                    if notify {
                        processor.distribute(Notification::Delete(deleted.clone()), false);
                    }
                }
                Delta::Added(obj)
                | Delta::Updated(obj)
                | Delta::Replaced(obj)
                | Delta::Sync(obj) => {
                    let old = match indexer.upsert_keyed(key, obj.clone()) {
                        Ok(old) => old,
                        Err(error) => {
                            tracing::error!(%error, "could not store an object in the cache");
                            continue;
                        }
                    };
                    if !notify {
                        continue;
                    }
                    match old {
                        Some(old) => {
                            // Unchanged resourceVersion: a resync, only for handlers due one.
                            let is_sync =
                                old.meta().resource_version == obj.meta().resource_version;
                            processor.distribute(
                                Notification::Update {
                                    old,
                                    new: obj.clone(),
                                },
                                is_sync,
                            );
                        }
                        None => processor.distribute(
                            Notification::Add {
                                obj: obj.clone(),
                                is_in_initial_list,
                            },
                            false,
                        ),
                    }
                }
            }
        }
    }
}
