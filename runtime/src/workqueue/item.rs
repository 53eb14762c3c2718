//! [`QueueItem`]: the bounds of a work queue item.

use std::hash::Hash;

/// The bounds every queue item satisfies: cloned once when [`get`](super::Queue::get) hands
/// it out, compared and hashed to de-duplicate adds, and shared between worker tasks.
///
/// Implemented for every type with these bounds; object keys (`String`s such as
/// `namespace/name`) are the usual items.
pub trait QueueItem: Clone + Eq + Hash + Send + Sync + 'static {}
impl<T: Clone + Eq + Hash + Send + Sync + 'static> QueueItem for T {}
