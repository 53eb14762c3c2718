//! Adds that have not been applied yet: the producer's side of [`Core`](super::core::Core).
//!
//! # Why
//!
//! `add`, `get` and `done` each took the queue's one lock. With an informer adding on one
//! core and a worker getting and finishing on the other, the lock and the state it guards
//! (the table, the slab and the ready queue's headers) crossed between the cores three
//! times per item, where a channel's send and receive never wait for each other. An add
//! from another thread than the workers' now goes into this intake instead, under a lock of
//! its own that a `get` touches once per *batch*, and the adds are applied to the queue's
//! state by whoever takes the state lock next: every critical section of the core starts by
//! applying them ([`Core::lock`](super::core::Core::lock)), so every `get`, `done`, `len`,
//! shutdown and timer tick sees every add that returned before it. Each add is still
//! applied exactly as before (de-duplicated against the queued, processing and waiting
//! items), only later and by another thread, so client-go's rules are unchanged.
//!
//! # When
//!
//! An add takes the intake only when another thread works the queue: the state lock was last
//! taken on another thread ([`Intake::held_elsewhere`]), or it is held right now. Otherwise
//! (a single-threaded runtime, a controller whose informer and worker share a thread, or the
//! adder right after it woke a parked worker, while that worker starts) the add applies
//! itself under the lock at once and pays no second copy.
//!
//! # Bounds
//!
//! The intake holds at most [`CAPACITY`] adds. When it is full, an add applies itself (and
//! the intake) under the state lock, so a key added a million times while every worker is
//! busy costs [`CAPACITY`] entries at most, not a million, as de-duplication promises.
//!
//! # No lost wake-up
//!
//! A `get` that finds nothing parks under the state lock. An add that lands in the intake
//! must then wake it, or the item would wait for nobody. The two sides follow Dekker's
//! pattern on two sequentially consistent atomics:
//!
//! 1. the add stores the intake's new length, then reads how many `get`s are parked;
//! 2. the parking `get`, still holding the state lock, stores the parked count, then reads
//!    the intake's length.
//!
//! In the single order of those four operations one side reads the other's store: either
//! the add sees a parked `get` (it then takes the state lock, which applies the intake, and
//! wakes the `get`), or the `get` sees the add (it applies the intake itself and takes the
//! item instead of parking). Both may happen; the spare wake-up is harmless.
//!
//! # Metrics
//!
//! A queue that records metrics applies each add at once, as before: client-go's depth
//! gauge and adds counter move inside `Add`, and a scrape must not miss the adds an intake
//! would hold while every worker is busy.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

/// The most adds the intake holds; a full intake is applied by the add that finds it full.
pub(super) const CAPACITY: usize = 1024;

/// One add waiting to be applied.
#[derive(Debug)]
pub(super) struct Pending<T> {
    /// The item's hash, computed by the adder.
    pub(super) hash: u64,
    pub(super) item: T,
    pub(super) priority: i32,
}

/// See the module docs.
#[derive(Debug)]
pub(super) struct Intake<T> {
    entries: Mutex<Vec<Pending<T>>>,
    /// `entries.len()`, readable without the lock.
    len: AtomicUsize,
    /// How many `get`s are parked, as the waiter list publishes it under the state lock.
    parked: Arc<AtomicUsize>,
    /// The thread that took the state lock last ([`thread_token`]); written only when it
    /// changes, so reading it costs an adder nothing while one worker thread keeps the lock.
    holder: AtomicUsize,
}

/// A number that tells the current thread from every other live thread: the address of a
/// thread-local.
#[inline]
fn thread_token() -> usize {
    thread_local! {
        static TOKEN: u8 = const { 0 };
    }
    TOKEN.with(|token| std::ptr::from_ref(token) as usize)
}

impl<T> Intake<T> {
    /// An empty intake whose adds read the parked count from `parked` (the waiter list's
    /// published count, `waiters.rs`).
    pub(super) fn new(parked: Arc<AtomicUsize>) -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
            len: AtomicUsize::new(0),
            parked,
            holder: AtomicUsize::new(0),
        }
    }
}

impl<T> Intake<T> {
    /// Queues `pending` to be applied; hands it back when the intake is full.
    ///
    /// Step 1 of the protocol in the module docs: returns whether a `get` is parked, in
    /// which case the caller must apply the intake and wake it.
    pub(super) fn push(&self, pending: Pending<T>) -> Result<bool, Pending<T>> {
        {
            let mut entries = self.entries.lock();
            if entries.len() >= CAPACITY {
                return Err(pending);
            }
            entries.push(pending);
            self.len.store(entries.len(), Ordering::SeqCst);
        }
        Ok(self.parked.load(Ordering::SeqCst) > 0)
    }

    /// Whether adds wait to be applied (step 2 of the protocol when called after the
    /// parking `get` published the parked count).
    #[inline]
    pub(super) fn has_pending(&self) -> bool {
        self.len.load(Ordering::SeqCst) > 0
    }

    /// How many adds wait (for tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::SeqCst)
    }

    /// Moves the waiting adds into `batch` (which must be empty; its buffer becomes the
    /// intake's, so neither side allocates in the steady state).
    pub(super) fn take_into(&self, batch: &mut Vec<Pending<T>>) {
        debug_assert!(batch.is_empty());
        let mut entries = self.entries.lock();
        std::mem::swap(&mut *entries, batch);
        self.len.store(0, Ordering::SeqCst);
    }

    /// Whether another thread than this one took the state lock last: an add then leaves
    /// its item here rather than pull the state's cache lines over (see the module docs,
    /// "When").
    #[inline]
    pub(super) fn held_elsewhere(&self) -> bool {
        self.holder.load(Ordering::Relaxed) != thread_token()
    }

    /// Records that this thread holds the state lock (called under it).
    #[inline]
    pub(super) fn record_holder(&self) {
        let me = thread_token();
        if self.holder.load(Ordering::Relaxed) != me {
            self.holder.store(me, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(i: u64) -> Pending<u64> {
        Pending {
            hash: i,
            item: i,
            priority: 0,
        }
    }

    #[test]
    fn push_reports_parked_gets_and_refuses_when_full() {
        let parked = Arc::new(AtomicUsize::new(0));
        let intake = Intake::new(Arc::clone(&parked));
        assert_eq!(intake.push(pending(0)).ok(), Some(false));
        parked.store(1, Ordering::SeqCst);
        assert_eq!(intake.push(pending(1)).ok(), Some(true));
        parked.store(0, Ordering::SeqCst);
        for i in 2..CAPACITY as u64 {
            assert!(intake.push(pending(i)).is_ok());
        }
        let refused = intake.push(pending(9999)).err().map(|p| p.item);
        assert_eq!(refused, Some(9999), "a full intake hands the add back");
        assert!(intake.has_pending());
        let mut batch = Vec::new();
        intake.take_into(&mut batch);
        assert!(!intake.has_pending());
        let items: Vec<u64> = batch.iter().map(|p| p.item).collect();
        assert_eq!(
            items,
            (0..CAPACITY as u64).collect::<Vec<_>>(),
            "in push order"
        );
    }
}
