//! The keyed queue core shared by [`Fifo`](crate::cache::Fifo) and [`DeltaFifo`](crate::cache::DeltaFifo):
//! one value per key, keys in pop order, the `SyncState` behind `has_synced` (client-go's
//! `queueActionLocked` / `Pop` in `fifo.go`),
//! a blocking pop that waits on a `Notify` (registered before the state is checked, so
//! no wake-up is lost) and never polls, and the backlog wait producers use for backpressure
//! (the same discipline: the waiter registers, then checks, and every pop that takes the
//! backlog under a waiter's limit wakes it).

use std::{
    collections::VecDeque,
    sync::atomic::{AtomicUsize, Ordering},
};

use ahash::AHashMap;
use parking_lot::{Mutex, MutexGuard};
use tokio::sync::Notify;

use crate::cache::{queue::sync_state::SyncState, store::index::StoreKey};

/// How a pop's process callback failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessError<E> {
    /// Processing failed and the item should be tried again: it is put back with
    /// add-if-not-present (so anything queued for its key meanwhile wins), at the tail.
    Requeue(E),
    /// Processing failed; the item is dropped.
    Failed(E),
}

/// Why a pop returned no item, or what its process callback reported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PopError<E> {
    /// The queue is closed and empty.
    #[error("queue is closed")]
    Closed,
    /// The process callback failed; `requeued` tells whether the item was put back.
    #[error("processing failed (requeued: {requeued})")]
    Process {
        /// The callback's error.
        error: E,
        /// Whether the item went back into the queue.
        requeued: bool,
    },
}

/// The queue's state; always accessed under the core's lock.
pub(crate) struct QueueState<V> {
    pub(crate) items: AHashMap<StoreKey, V>,
    pub(crate) queue: VecDeque<StoreKey>,
    /// The first population's progress and whether the queue was closed.
    pub(crate) sync: SyncState,
    /// The largest backlog limit a producer is waiting to get under (0: nobody waits).
    /// A pop that leaves fewer keys queued than this wakes the waiters and resets it.
    backlog_wake_below: usize,
}

impl<V> QueueState<V> {
    /// Queues `value` under a key that has nothing queued.
    pub(crate) fn push_new(&mut self, key: StoreKey, value: V) {
        self.queue.push_back(key.clone());
        self.items.insert(key, value);
    }

    /// Queues `value` only if nothing is queued under `key` (newer values win).
    pub(crate) fn add_if_not_present(&mut self, key: StoreKey, value: V) {
        if !self.items.contains_key(&key) {
            self.push_new(key, value);
        }
    }

    fn has_synced(&self) -> bool {
        self.sync.has_synced()
    }
}

/// The wake-up discipline of a blocking pop, shared by [`QueueCore`] and
/// [`RealFifo`](crate::cache::RealFifo): a pop registers its wake-up, counts itself as waiting, and
/// checks the queue again before it sleeps; a producer reads the count after queuing and
/// wakes only when someone waits. So a producer either sees the pop waiting and wakes it,
/// or queued its item before the pop's second check — no wake-up is lost, nothing polls.
pub(crate) struct PopWaiters {
    notify: Notify,
    /// Pops registered on `notify` (producers skip the wake-up when there are none).
    waiting: AtomicUsize,
}

impl PopWaiters {
    pub(crate) fn new() -> Self {
        Self {
            notify: Notify::new(),
            waiting: AtomicUsize::new(0),
        }
    }

    /// Runs `attempt` until it returns something, sleeping between tries until woken.
    pub(crate) async fn wait_for<T>(&self, mut attempt: impl FnMut() -> Option<T>) -> T {
        if let Some(done) = attempt() {
            return done;
        }
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let _waiting = WaitingPop::new(&self.waiting);
            if let Some(done) = attempt() {
                return done;
            }
            notified.await;
        }
    }

    /// Wakes every waiting pop; call after queuing something (and releasing the lock).
    /// Costs one atomic load when no pop is waiting (the common case under load).
    pub(crate) fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.notify.notify_waiters();
        }
    }

    /// Wakes every waiting pop unconditionally (on close).
    pub(crate) fn wake_all(&self) {
        self.notify.notify_waiters();
    }
}

/// State plus the notification poppers wait on.
pub(crate) struct QueueCore<V> {
    state: Mutex<QueueState<V>>,
    pops: PopWaiters,
    /// Wakes producers waiting in [`QueueCore::wait_len_below`].
    backlog: Notify,
}

impl<V> QueueCore<V> {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(QueueState {
                items: AHashMap::new(),
                queue: VecDeque::new(),
                sync: SyncState::new(),
                backlog_wake_below: 0,
            }),
            pops: PopWaiters::new(),
            backlog: Notify::new(),
        }
    }

    /// Waits until fewer than `limit` keys are queued, or the queue is closed.
    ///
    /// The wake-up is registered (`enable`) before the length is checked under the lock,
    /// and the check records `limit` in the state under that same lock; a pop that then
    /// takes the backlog under it wakes this waiter. So a pop between the check and the
    /// `await` cannot be lost.
    pub(crate) async fn wait_len_below(&self, limit: usize) {
        loop {
            let notified = self.backlog.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.state.lock();
                if state.queue.len() < limit || state.sync.is_closed() {
                    return;
                }
                state.backlog_wake_below = state.backlog_wake_below.max(limit);
            }
            notified.await;
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, QueueState<V>> {
        self.state.lock()
    }

    /// Wakes every waiting pop; call after queuing something (and releasing the lock).
    /// Costs one atomic load when no pop is waiting (the common case under load).
    pub(crate) fn wake(&self) {
        self.pops.wake();
    }

    pub(crate) fn close(&self) {
        self.state.lock().sync.close();
        self.pops.wake_all();
        self.backlog.notify_waiters();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().sync.is_closed()
    }

    /// True once the first replace batch has been popped, or when anything else was
    /// queued before the first replace; stays true.
    pub(crate) fn has_synced(&self) -> bool {
        self.state.lock().has_synced()
    }

    /// Waits for the next key and hands it and its value to `process` while the queue is
    /// locked, with whether it belongs to the initial list. Requeues on
    /// [`ProcessError::Requeue`].
    ///
    /// With something queued this takes the lock once and touches no `Notify`; otherwise it
    /// waits as [`PopWaiters`] describes.
    pub(crate) async fn pop<E>(
        &self,
        process: impl FnOnce(&StoreKey, &V, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<V, PopError<E>> {
        let mut process = Some(process);
        self.pops.wait_for(|| self.try_pop(&mut process)).await
    }

    /// Like [`QueueCore::pop`], but once a key is available processes up to `max` queued
    /// keys (at least one) under the same lock hold, one after the other, exactly as that
    /// many pops would; returns how many were processed. A failing `process` ends the batch
    /// with its error (a requeue is honoured first).
    pub(crate) async fn pop_many<E>(
        &self,
        max: usize,
        mut process: impl FnMut(&StoreKey, &V, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<usize, PopError<E>> {
        self.pops
            .wait_for(|| self.try_pop_many(max, &mut process))
            .await
    }

    /// Processes up to `max` live keys; `None` when the queue is empty and open.
    fn try_pop_many<E>(
        &self,
        max: usize,
        process: &mut impl FnMut(&StoreKey, &V, bool) -> Result<(), ProcessError<E>>,
    ) -> Option<Result<usize, PopError<E>>> {
        let mut state = self.state.lock();
        let mut done = 0;
        while done < max.max(1) {
            let Some((key, value, is_in_initial_list)) = self.next_live_locked(&mut state) else {
                break;
            };
            match process(&key, &value, is_in_initial_list) {
                Ok(()) => done += 1,
                Err(ProcessError::Failed(error)) => {
                    return Some(Err(PopError::Process {
                        error,
                        requeued: false,
                    }));
                }
                Err(ProcessError::Requeue(error)) => {
                    state.add_if_not_present(key, value);
                    return Some(Err(PopError::Process {
                        error,
                        requeued: true,
                    }));
                }
            }
        }
        if done > 0 {
            Some(Ok(done))
        } else {
            state.sync.is_closed().then_some(Err(PopError::Closed))
        }
    }

    /// Takes the next key that still has a value, with whether it belongs to the initial
    /// list, and wakes a producer waiting for the backlog to shrink under its limit.
    fn next_live_locked(&self, state: &mut QueueState<V>) -> Option<(StoreKey, V, bool)> {
        while let Some(key) = state.queue.pop_front() {
            if state.queue.len() < state.backlog_wake_below {
                state.backlog_wake_below = 0;
                self.backlog.notify_waiters();
            }
            let is_in_initial_list = state.sync.popped();
            // A key whose value was deleted after it was queued is skipped.
            if let Some(value) = state.items.remove(&key) {
                return Some((key, value, is_in_initial_list));
            }
        }
        None
    }

    /// Pops and processes the next live key, if any; `None` when the queue is empty and open.
    fn try_pop<E>(
        &self,
        process: &mut Option<impl FnOnce(&StoreKey, &V, bool) -> Result<(), ProcessError<E>>>,
    ) -> Option<Result<V, PopError<E>>> {
        let mut state = self.state.lock();
        if let Some((key, value, is_in_initial_list)) = self.next_live_locked(&mut state) {
            let Some(process) = process.take() else {
                return Some(Ok(value));
            };
            return Some(match process(&key, &value, is_in_initial_list) {
                Ok(()) => Ok(value),
                Err(ProcessError::Failed(error)) => Err(PopError::Process {
                    error,
                    requeued: false,
                }),
                Err(ProcessError::Requeue(error)) => {
                    state.add_if_not_present(key, value);
                    Err(PopError::Process {
                        error,
                        requeued: true,
                    })
                }
            });
        }
        state.sync.is_closed().then_some(Err(PopError::Closed))
    }
}

/// Counts one pop as waiting for as long as it lives (also when the pop is cancelled).
struct WaitingPop<'a>(&'a AtomicUsize);

impl<'a> WaitingPop<'a> {
    fn new(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        Self(counter)
    }
}

impl Drop for WaitingPop<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
