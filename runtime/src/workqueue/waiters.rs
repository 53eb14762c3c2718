//! The blocked `get` calls of [`Core`](super::core::Core), kept under the queue's own lock.
//!
//! A `get` that finds nothing queued parks its waker here, in the same critical section in
//! which it saw the queue empty, so an add that follows cannot miss it. An add that queues an
//! item takes **one** parked waker out (it is then *woken*: its entry stays, empty, until the
//! `get` runs again) and wakes it after releasing the lock. Because the waker leaves the list
//! at once, the adds that follow see no parked `get` and skip the wake-up: a burst of adds
//! into an idle queue wakes one worker per parked worker, not once per item (which is what a
//! count of registered waiters that only the woken `get` decrements, as with a
//! `tokio::sync::Notify`, amounts to), and takes no second lock.
//!
//! A woken `get` owes the queue a look: when it runs it takes an item or, finding the queue
//! empty (another worker was faster), parks again. A woken `get` that is dropped before it
//! runs passes the wake-up on to the next parked one if items are queued, so cancelling a
//! `get` never strands an item while another `get` sleeps.
//!
//! Every change to the parked count is also stored in an atomic the adds read without the
//! lock: an add that leaves its item in the intake (`intake.rs`) wakes a `get` only if one is
//! parked, and the `get` that parks stores the new count before it looks at the intake again
//! (`intake.rs`, "No lost wake-up").

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Waker;

use slab::Slab;

/// See the module docs.
#[derive(Debug, Default)]
pub(super) struct Waiters {
    /// One entry per `get` that has parked and not yet finished: `Some(waker)` while parked,
    /// `None` once woken.
    entries: Slab<Option<Waker>>,
    /// The keys of the parked entries (exactly those holding a waker), oldest first.
    parked: VecDeque<usize>,
    /// `parked.len()`, stored (sequentially consistent) by every change to it, for readers
    /// without the lock (see the module docs).
    published: Arc<AtomicUsize>,
}

impl Waiters {
    /// An empty list that publishes its parked count to `published`.
    pub(super) fn new(published: Arc<AtomicUsize>) -> Self {
        Self {
            entries: Slab::new(),
            parked: VecDeque::new(),
            published,
        }
    }

    /// Stores the parked count where readers without the lock see it.
    #[inline]
    fn publish(&self) {
        self.published.store(self.parked.len(), Ordering::SeqCst);
    }

    /// Parks the `get` holding `key` (or a new one when `key` is `None`) with `waker`;
    /// returns its key. A `get` still parked only refreshes its waker.
    pub(super) fn park(&mut self, key: Option<usize>, waker: &Waker) -> usize {
        if let Some(key) = key
            && let Some(entry) = self.entries.get_mut(key)
        {
            match entry {
                Some(parked) => {
                    if !parked.will_wake(waker) {
                        parked.clone_from(waker);
                    }
                }
                None => {
                    *entry = Some(waker.clone());
                    self.parked.push_back(key);
                    self.publish();
                }
            }
            return key;
        }
        let key = self.entries.insert(Some(waker.clone()));
        self.parked.push_back(key);
        self.publish();
        key
    }

    /// Takes the waker of the longest-parked `get`, if any; the caller wakes it after
    /// releasing the lock.
    #[inline]
    pub(super) fn wake_one(&mut self) -> Option<Waker> {
        let key = self.parked.pop_front()?;
        self.publish();
        self.entries.get_mut(key).and_then(Option::take)
    }

    /// Takes the wakers of every parked `get` (on shutdown).
    pub(super) fn wake_all(&mut self) -> Vec<Waker> {
        let mut wakers = Vec::with_capacity(self.parked.len());
        while let Some(waker) = self.wake_one() {
            wakers.push(waker);
        }
        wakers
    }

    /// Ends the `get` holding `key`; returns whether it had been woken (rather than still
    /// parked), in which case it owed the queue a look.
    pub(super) fn remove(&mut self, key: usize) -> bool {
        match self.entries.try_remove(key) {
            Some(Some(_)) => {
                self.parked.retain(|&k| k != key);
                self.publish();
                false
            }
            Some(None) => true,
            None => false,
        }
    }

    /// How many `get` calls are parked.
    #[inline]
    pub(super) fn parked(&self) -> usize {
        self.parked.len()
    }

    /// How many `get` calls were woken and have not run yet: each will take an item.
    #[inline]
    pub(super) fn woken(&self) -> usize {
        self.entries.len() - self.parked.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn wakes_oldest_first_once_each_and_forgets_removed_ones() {
        let counts: Vec<_> = (0..3)
            .map(|_| Arc::new(Count(AtomicUsize::new(0))))
            .collect();
        let wakers: Vec<Waker> = counts.iter().map(|c| Waker::from(Arc::clone(c))).collect();
        let mut w = Waiters::default();
        let keys: Vec<_> = wakers.iter().map(|waker| w.park(None, waker)).collect();
        assert_eq!(w.parked(), 3);
        // Re-parking a parked get does not queue it twice.
        assert_eq!(w.park(Some(keys[0]), &wakers[0]), keys[0]);
        assert_eq!(w.parked(), 3);
        // A parked get that ends was not woken.
        assert!(!w.remove(keys[1]));
        w.wake_one().expect("a parked get").wake();
        assert_eq!(counts[0].0.load(Ordering::SeqCst), 1);
        assert_eq!(w.parked(), 1);
        // The woken get ends: it owed a look.
        assert!(w.remove(keys[0]));
        let rest = w.wake_all();
        assert_eq!(rest.len(), 1);
        rest.into_iter().for_each(Waker::wake);
        assert_eq!(counts[2].0.load(Ordering::SeqCst), 1);
        assert_eq!(counts[1].0.load(Ordering::SeqCst), 0);
        assert!(w.wake_one().is_none());
    }

    /// The count the intake's adds read follows every park, wake and removal.
    #[test]
    fn the_published_count_follows_the_parked_count() {
        let published = Arc::new(AtomicUsize::new(0));
        let mut w = Waiters::new(Arc::clone(&published));
        let waker = Waker::noop();
        let a = w.park(None, waker);
        let b = w.park(None, waker);
        assert_eq!(published.load(Ordering::SeqCst), 2);
        w.park(Some(a), waker);
        assert_eq!(
            published.load(Ordering::SeqCst),
            2,
            "a refreshed park counts once"
        );
        w.remove(b);
        assert_eq!(published.load(Ordering::SeqCst), 1);
        assert!(w.wake_one().is_some());
        assert_eq!(published.load(Ordering::SeqCst), 0);
        w.park(Some(a), waker);
        assert_eq!(
            published.load(Ordering::SeqCst),
            1,
            "a woken get parks again"
        );
        assert_eq!(w.wake_all().len(), 1);
        assert_eq!(published.load(Ordering::SeqCst), 0);
    }
}
