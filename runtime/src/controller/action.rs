//! [`Action`]: what a successful reconcile asks of the controller next
//! (controller-runtime's `reconcile.Result`, kube-runtime's `Action`).

use std::time::Duration;

/// What to do with a key after its reconcile succeeded.
///
/// Success always forgets the key's failure backoff. [`Action::done`] waits for the next
/// event on the object (or on what it owns or watches); [`Action::requeue_after`] also
/// reconciles it again after a delay (a periodic check). A priority orders the key in the
/// controller's queue against other waiting keys (higher first; the default is 0, the same
/// as a fresh watch event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Action {
    requeue_after: Option<Duration>,
    priority: Option<i32>,
}

impl Action {
    /// Nothing more to do until something changes.
    pub fn done() -> Self {
        Self::default()
    }

    /// Reconcile the object again after `delay`, even if nothing changes.
    pub fn requeue_after(delay: Duration) -> Self {
        Self {
            requeue_after: Some(delay),
            priority: None,
        }
    }

    /// The same action, with the key requeued at `priority` (higher first).
    #[must_use]
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// The delay before the key is reconciled again, if any.
    pub fn requeue_delay(&self) -> Option<Duration> {
        self.requeue_after
    }

    /// The priority it asked for, if any.
    pub fn priority(&self) -> Option<i32> {
        self.priority
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_requeues_nothing_and_requeue_after_carries_its_delay_and_priority() {
        assert_eq!(Action::done().requeue_delay(), None);
        let action = Action::requeue_after(Duration::from_secs(30)).with_priority(-1);
        assert_eq!(action.requeue_delay(), Some(Duration::from_secs(30)));
        assert_eq!(action.priority(), Some(-1));
        assert_eq!(Action::done().priority(), None);
    }
}
