//! Errors of the cache layer.

use super::KeyError;

/// An error from an [`Indexer`](super::Indexer), [`Fifo`](super::Fifo) or
/// [`DeltaFifo`](super::DeltaFifo) operation. A failed operation leaves the store unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// The object's key could not be computed.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// An index function failed for an object (client-go panics here; we report it).
    #[error("unable to calculate an index entry for key {key:?} on index {index:?}: {message}")]
    IndexFunc {
        /// The index whose function failed.
        index: String,
        /// The key of the object being indexed.
        key: String,
        /// What the index function reported.
        message: String,
    },
    /// No index function is registered under this name.
    #[error("index with name {0} does not exist")]
    UnknownIndex(String),
    /// An index with this name is already registered.
    #[error("indexer conflict: {0}")]
    IndexerConflict(String),
}
