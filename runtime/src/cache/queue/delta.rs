//! The change records a [`DeltaFifo`](crate::cache::DeltaFifo) queues, and the tombstone a relist
//! produces for an object whose delete event was missed (client-go's `Delta`, `Deltas` and
//! `DeletedFinalStateUnknown`).

use std::sync::Arc;

use smallvec::SmallVec;

/// What happened to an object (client-go's `DeltaType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was created (a watch ADDED event).
    Added,
    /// The object was modified (a watch MODIFIED event).
    Updated,
    /// The object was deleted (a watch DELETED event, or a relist found it gone).
    Deleted,
    /// A relist listed the object (only when `emit_delta_type_replaced` is set).
    Replaced,
    /// A relist listed the object (without `emit_delta_type_replaced`), or a periodic
    /// resync re-delivered it.
    Sync,
}

/// An object that disappeared while the watch was not looking: a relist no longer listed
/// it, so its final state is unknown. `obj` is the last state the cache knew, if any.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The key the object was stored under.
    pub key: String,
    /// The last known state of the object (possibly stale), if there was one.
    pub obj: Option<Arc<K>>,
}

impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            obj: self.obj.clone(),
        }
    }
}

/// What a delete handler receives: the deleted object, or a tombstone when the delete
/// event itself was missed.
#[derive(Debug)]
pub enum DeletedObject<K> {
    /// The object as it was when deleted.
    Object(Arc<K>),
    /// A tombstone produced by a relist.
    Tombstone(DeletedFinalStateUnknown<K>),
}

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Object(obj) => Self::Object(obj.clone()),
            Self::Tombstone(t) => Self::Tombstone(t.clone()),
        }
    }
}

impl<K> DeletedObject<K> {
    /// The object, or the tombstone's last known state.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Self::Object(obj) => Some(obj),
            Self::Tombstone(t) => t.obj.as_ref(),
        }
    }

    /// Whether this is a tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, Self::Tombstone(_))
    }
}

/// One change to an object: its type and the object's state after it. Only a
/// [`Delta::Deleted`] can carry a tombstone.
#[derive(Debug)]
pub enum Delta<K> {
    /// See [`DeltaType::Added`].
    Added(Arc<K>),
    /// See [`DeltaType::Updated`].
    Updated(Arc<K>),
    /// See [`DeltaType::Deleted`].
    Deleted(DeletedObject<K>),
    /// See [`DeltaType::Replaced`].
    Replaced(Arc<K>),
    /// See [`DeltaType::Sync`].
    Sync(Arc<K>),
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Added(o) => Self::Added(o.clone()),
            Self::Updated(o) => Self::Updated(o.clone()),
            Self::Deleted(d) => Self::Deleted(d.clone()),
            Self::Replaced(o) => Self::Replaced(o.clone()),
            Self::Sync(o) => Self::Sync(o.clone()),
        }
    }
}

impl<K> Delta<K> {
    /// The type of change.
    pub fn delta_type(&self) -> DeltaType {
        match self {
            Self::Added(_) => DeltaType::Added,
            Self::Updated(_) => DeltaType::Updated,
            Self::Deleted(_) => DeltaType::Deleted,
            Self::Replaced(_) => DeltaType::Replaced,
            Self::Sync(_) => DeltaType::Sync,
        }
    }

    /// The object's state after the change; `None` only for a tombstone without one.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Self::Added(o) | Self::Updated(o) | Self::Replaced(o) | Self::Sync(o) => Some(o),
            Self::Deleted(d) => d.object(),
        }
    }

    pub(crate) fn with_type(delta_type: DeltaType, obj: Arc<K>) -> Self {
        match delta_type {
            DeltaType::Added => Self::Added(obj),
            DeltaType::Updated => Self::Updated(obj),
            DeltaType::Deleted => Self::Deleted(DeletedObject::Object(obj)),
            DeltaType::Replaced => Self::Replaced(obj),
            DeltaType::Sync => Self::Sync(obj),
        }
    }
}

/// Every change queued for one object since it was last popped, oldest first.
///
/// One change is held inline (most keys never get a second one before they are popped),
/// so queuing a key allocates nothing for its list.
#[derive(Debug)]
pub struct Deltas<K>(pub(crate) SmallVec<[Delta<K>; 1]>);

impl<K> Clone for Deltas<K> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<K> Deltas<K> {
    /// A list holding only `delta`.
    pub(crate) fn one(delta: Delta<K>) -> Self {
        Self(smallvec::smallvec![delta])
    }

    /// The oldest change.
    pub fn oldest(&self) -> Option<&Delta<K>> {
        self.0.first()
    }

    /// The newest change.
    pub fn newest(&self) -> Option<&Delta<K>> {
        self.0.last()
    }

    /// The changes, oldest first.
    pub fn as_slice(&self) -> &[Delta<K>] {
        &self.0
    }

    /// How many changes there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The changes, oldest first.
    pub fn into_vec(self) -> Vec<Delta<K>> {
        self.0.into_vec()
    }

    /// Appends `delta`, merging it into the previous one when both are deletions (the only
    /// deduplication client-go does): the older is kept unless it is a tombstone, in which
    /// case the newer, more informative one replaces it.
    pub(crate) fn push_dedup(&mut self, delta: Delta<K>) {
        if let (Some(Delta::Deleted(previous)), Delta::Deleted(_)) = (self.0.last(), &delta) {
            if previous.is_tombstone()
                && let Some(last) = self.0.last_mut()
            {
                *last = delta;
            }
            return;
        }
        self.0.push(delta);
    }
}

impl<'a, K> IntoIterator for &'a Deltas<K> {
    type Item = &'a Delta<K>;
    type IntoIter = std::slice::Iter<'a, Delta<K>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<K> IntoIterator for Deltas<K> {
    type Item = Delta<K>;
    type IntoIter = smallvec::IntoIter<[Delta<K>; 1]>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tombstone(key: &str) -> Delta<u32> {
        Delta::Deleted(DeletedObject::Tombstone(DeletedFinalStateUnknown {
            key: key.into(),
            obj: None,
        }))
    }

    #[test]
    fn two_deletions_merge_keeping_the_older_real_object() {
        let mut d = Deltas(SmallVec::new());
        d.push_dedup(Delta::Deleted(DeletedObject::Object(Arc::new(1))));
        d.push_dedup(Delta::Deleted(DeletedObject::Object(Arc::new(2))));
        assert_eq!(d.len(), 1);
        assert_eq!(d.newest().and_then(Delta::object).map(|o| **o), Some(1));
    }

    #[test]
    fn a_tombstone_gives_way_to_a_following_real_deletion() {
        let mut d = Deltas(SmallVec::new());
        d.push_dedup(tombstone("k"));
        d.push_dedup(Delta::Deleted(DeletedObject::Object(Arc::new(2))));
        assert_eq!(d.len(), 1);
        assert_eq!(d.newest().and_then(Delta::object).map(|o| **o), Some(2));
    }

    #[test]
    fn a_real_deletion_is_kept_over_a_following_tombstone() {
        let mut d = Deltas(SmallVec::new());
        d.push_dedup(Delta::Deleted(DeletedObject::Object(Arc::new(1))));
        d.push_dedup(tombstone("k"));
        assert_eq!(d.len(), 1);
        assert!(matches!(
            d.newest(),
            Some(Delta::Deleted(DeletedObject::Object(_)))
        ));
    }

    #[test]
    fn only_consecutive_deletions_merge() {
        let mut d = Deltas(SmallVec::new());
        for delta in [
            Delta::Added(Arc::new(1)),
            Delta::Added(Arc::new(1)),
            Delta::Updated(Arc::new(2)),
            Delta::Updated(Arc::new(2)),
            Delta::Sync(Arc::new(2)),
            Delta::Sync(Arc::new(2)),
            Delta::Deleted(DeletedObject::Object(Arc::new(2))),
            Delta::Added(Arc::new(3)),
            Delta::Deleted(DeletedObject::Object(Arc::new(3))),
        ] {
            d.push_dedup(delta);
        }
        let types: Vec<_> = d.as_slice().iter().map(Delta::delta_type).collect();
        use DeltaType::*;
        assert_eq!(
            types,
            [
                Added, Added, Updated, Updated, Sync, Sync, Deleted, Added, Deleted
            ]
        );
    }
}
