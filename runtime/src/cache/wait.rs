//! The blocking-pop loop shared by [`Fifo`](super::Fifo) and [`DeltaFifo`](super::DeltaFifo):
//! wait on a `Notify` (registered before the state is checked, so no wake-up is lost),
//! never poll.

use parking_lot::Mutex;
use tokio::sync::Notify;

/// The outcome of one look at the queue state.
pub(crate) enum Step<R> {
    /// Pop finished with this result.
    Done(R),
    /// Nothing to take yet: wait for a notification.
    Wait,
}

/// Runs `step` under `lock` until it is done, sleeping on `notify` in between. Producers
/// call `notify.notify_waiters()` after changing the state.
pub(crate) async fn pop_when_ready<S, R>(
    lock: &Mutex<S>,
    notify: &Notify,
    mut step: impl FnMut(&mut S) -> Step<R>,
) -> R {
    loop {
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Step::Done(result) = step(&mut lock.lock()) {
            return result;
        }
        notified.await;
    }
}
