//! The informer cache layer (client-go's `tools/cache`).
//!
//! One file per concept:
//!
//! * `keys`: object keys (`namespace/name`) and their inverse.
//! * `index` and `store`: the thread-safe, indexed store behind [`Indexer`].
//! * `fifo`: [`Fifo`], a queue keeping the newest value per key.
//! * `delta_fifo`: [`DeltaFifo`], a queue keeping every change per key, fed by a reflector
//!   and drained by an informer.
