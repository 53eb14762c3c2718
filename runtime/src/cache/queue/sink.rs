//! [`ReflectorSink`]: what a reflector writes to (client-go's `Store` interface, write
//! side), and [`PagedReplace`], taking a relist page by page.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::cache::CacheError;

/// What a reflector writes to: an [`Indexer`](crate::cache::Indexer), a [`Fifo`](crate::cache::Fifo) or
/// a [`DeltaFifo`](crate::cache::DeltaFifo) (client-go's `Store` interface, write side).
pub trait ReflectorSink<K>: Send + Sync + 'static {
    /// Adds an object, or replaces the one with the same key.
    fn add(&self, obj: Arc<K>) -> Result<(), CacheError>;
    /// Updates an object (the same as [`ReflectorSink::add`] for plain stores).
    fn update(&self, obj: Arc<K>) -> Result<(), CacheError>;
    /// Deletes an object.
    fn delete(&self, obj: &Arc<K>) -> Result<(), CacheError>;
    /// Replaces the whole content with `objs`, listed at `resource_version`.
    fn replace(&self, objs: Vec<Arc<K>>, resource_version: &str) -> Result<(), CacheError>;
    /// Re-delivers known objects where that means something (a [`DeltaFifo`](crate::cache::DeltaFifo)).
    fn resync(&self) -> Result<(), CacheError>;

    /// The server's resourceVersion moved to `resource_version` without a change (a watch
    /// bookmark). A [`RealFifo`](crate::cache::RealFifo) queues it, so its consumer knows how far
    /// its cache is current; the default ignores it.
    fn bookmark(&self, resource_version: &str) {
        let _ = resource_version;
    }

    /// A store that can take a relist page by page (a [`DeltaFifo`](crate::cache::DeltaFifo)), so the
    /// reflector need not hold the whole list; `None` (the default) means `replace` only.
    fn paged_replace(&self) -> Option<&dyn PagedReplace<K>> {
        None
    }
}

/// Taking a relist page by page: `replace_begin`, any number of `replace_page`, then
/// `replace_finish` with the list's resourceVersion.
pub trait PagedReplace<K>: Send + Sync {
    /// Starts a relist (forgetting an unfinished one).
    fn replace_begin(&self);
    /// One page of listed objects.
    fn replace_page(&self, objs: Vec<Arc<K>>) -> Result<(), CacheError>;
    /// The list is complete.
    fn replace_finish(&self, resource_version: &str) -> Result<(), CacheError>;
    /// Resolves once fewer than `limit` items wait to be consumed (or nothing will consume
    /// them any more), so the producer can pace itself to its consumer: the reflector fetches
    /// the next page only then. The default resolves at once (no backpressure).
    fn wait_for_backlog_below(&self, limit: usize) -> BoxFuture<'_, ()> {
        let _ = limit;
        Box::pin(std::future::ready(()))
    }
}
