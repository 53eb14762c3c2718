//! The informer's cache (client-go's `tools/cache` store side): keys, index functions, the
//! thread-safe store under one lock, the [`Indexer`](crate::cache::Indexer) that computes
//! keys for it, its read-only view, and the typed listers over that view.

pub(crate) mod index;
pub(crate) mod indexer;
pub(crate) mod keys;
pub(crate) mod lister;
pub(crate) mod read_only;
pub(crate) mod thread_safe;
