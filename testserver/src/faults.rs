//! Fault injection: fail the next N requests matching a verb and resource, delay
//! responses, stall watches, delay watch events. (Dropping watches, compaction and restarts
//! act on the store and server.) Both fronts serve through the same handler and watch
//! code, so every fault acts on HTTP and in-process clients alike.

use std::{sync::Arc, time::Duration};

use parking_lot::Mutex;
use tokio::{sync::Notify, time::Instant};
use tokio_util::sync::CancellationToken;

use crate::errors::ApiError;

/// Faults acting on open watch streams, shared with every watch task.
///
/// * A **stall** keeps every watch open at that moment open but silent: no events, no
///   bookmarks, and no close at its `timeoutSeconds` — a half-dead connection as its client
///   sees it. Watches opened later are served (the server is fine, those connections
///   were lost). When the stall ends the stalled watches carry on where they were (what
///   they held back first, then their close if their timeout has passed).
/// * A **delivery delay** makes each watch event arrive that much later than it was
///   produced (order kept); responses to other requests are not delayed.
#[derive(Debug, Default)]
pub struct WatchFaults {
    state: Mutex<WatchFaultState>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct WatchFaultState {
    /// Serial number of the next watch opened.
    next_serial: u64,
    stall: Option<Stall>,
    delivery_delay: Option<Duration>,
}

#[derive(Debug, Clone, Copy)]
struct Stall {
    /// Watches with a serial below this are stalled.
    below: u64,
    /// Until then; `None` until cleared.
    until: Option<Instant>,
}

impl WatchFaults {
    /// A serial number for a watch being opened (stalls apply to the watches open then).
    pub fn register(&self) -> u64 {
        let mut state = self.state.lock();
        state.next_serial += 1;
        state.next_serial - 1
    }

    /// Stalls every open watch for `duration` (`None`: until [`WatchFaults::resume`]).
    pub fn stall(&self, duration: Option<Duration>) {
        let mut state = self.state.lock();
        state.stall = Some(Stall {
            below: state.next_serial,
            until: duration.map(|d| Instant::now() + d),
        });
        drop(state);
        self.changed.notify_waiters();
    }

    /// Ends a stall.
    pub fn resume(&self) {
        self.state.lock().stall = None;
        self.changed.notify_waiters();
    }

    /// Whether the watch with `serial` is stalled now.
    pub fn is_stalled(&self, serial: u64) -> bool {
        self.stalled_until(serial).is_some()
    }

    /// `Some(None)`: the watch with `serial` is stalled until cleared; `Some(Some(t))`:
    /// until `t`; `None`: not stalled.
    fn stalled_until(&self, serial: u64) -> Option<Option<Instant>> {
        let stall = self.state.lock().stall?;
        if serial >= stall.below || stall.until.is_some_and(|t| Instant::now() >= t) {
            return None;
        }
        Some(stall.until)
    }

    /// Delays every watch event by `delay` from now on (`None` to stop).
    pub fn set_delivery_delay(&self, delay: Option<Duration>) {
        self.state.lock().delivery_delay = delay;
    }

    /// The configured delivery delay.
    pub fn delivery_delay(&self) -> Option<Duration> {
        self.state.lock().delivery_delay
    }

    /// Waits while the watch with `serial` is stalled; `false` if `cancel` fired or
    /// `closed` completed first (the watch is over).
    pub async fn wait_while_stalled(
        &self,
        serial: u64,
        cancel: &CancellationToken,
        closed: impl std::future::Future<Output = ()>,
    ) -> bool {
        tokio::pin!(closed);
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let Some(until) = self.stalled_until(serial) else {
                return true;
            };
            let deadline = async move {
                match until {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = cancel.cancelled() => return false,
                () = &mut closed => return false,
                () = changed => {}
                () = deadline => {}
            }
        }
    }
}

/// A rule failing the next `remaining` matching requests.
#[derive(Debug, Clone)]
pub struct FailRule {
    /// Verb to match (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`), or any.
    pub verb: Option<String>,
    /// Resource plural to match, or any.
    pub resource: Option<String>,
    /// HTTP code to answer with (e.g. 500, 429, 503).
    pub code: u16,
    /// How many more requests fail.
    pub remaining: usize,
    /// `Retry-After` seconds for 429/503.
    pub retry_after_seconds: Option<u32>,
}

/// The fault switchboard shared by both fronts.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Mutex<Vec<FailRule>>,
    delay: Mutex<Option<Duration>>,
    watch: Arc<WatchFaults>,
}

impl Faults {
    /// Fails the next `count` requests matching `verb` and `resource` (`None` = any).
    pub fn fail_next(
        &self,
        verb: Option<&str>,
        resource: Option<&str>,
        code: u16,
        count: usize,
        retry_after_seconds: Option<u32>,
    ) {
        self.rules.lock().push(FailRule {
            verb: verb.map(str::to_string),
            resource: resource.map(str::to_string),
            code,
            remaining: count,
            retry_after_seconds,
        });
    }

    /// Delays every response by `delay` (`None` to stop).
    pub fn set_delay(&self, delay: Option<Duration>) {
        *self.delay.lock() = delay;
    }

    /// The configured delay.
    pub fn delay(&self) -> Option<Duration> {
        *self.delay.lock()
    }

    /// Stalls every open watch for `duration` (`None`: until [`Faults::resume_watches`] or
    /// [`Faults::clear`]); watches opened later are served; see [`WatchFaults`].
    pub fn stall_watches(&self, duration: Option<Duration>) {
        self.watch.stall(duration);
    }

    /// Ends a watch stall.
    pub fn resume_watches(&self) {
        self.watch.resume();
    }

    /// Delays every watch event by `delay` (`None` to stop); other responses are not
    /// delayed (that is [`Faults::set_delay`]).
    pub fn set_watch_delivery_delay(&self, delay: Option<Duration>) {
        self.watch.set_delivery_delay(delay);
    }

    /// The watch faults, for the watch tasks.
    pub fn watch_faults(&self) -> Arc<WatchFaults> {
        self.watch.clone()
    }

    /// Removes all rules, the delay, a watch stall and the watch delivery delay.
    pub fn clear(&self) {
        self.rules.lock().clear();
        *self.delay.lock() = None;
        self.watch.resume();
        self.watch.set_delivery_delay(None);
    }

    /// Consumes one matching rule, returning the error to answer with.
    pub fn check(&self, verb: &str, resource: &str) -> Option<ApiError> {
        let mut rules = self.rules.lock();
        let pos = rules.iter().position(|r| {
            r.remaining > 0
                && r.verb.as_deref().is_none_or(|v| v == verb)
                && r.resource.as_deref().is_none_or(|x| x == resource)
        })?;
        let rule = &mut rules[pos];
        rule.remaining -= 1;
        let err = ApiError::injected(rule.code, rule.retry_after_seconds);
        if rule.remaining == 0 {
            rules.remove(pos);
        }
        Some(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_timed_stall_ends_by_itself_and_a_cleared_one_at_once() {
        let f = Faults::default();
        let w = f.watch_faults();
        let cancel = CancellationToken::new();
        let open = w.register();
        f.stall_watches(Some(Duration::from_secs(3)));
        let later = w.register();
        assert!(w.is_stalled(open));
        assert!(
            !w.is_stalled(later),
            "a watch opened after the stall is served"
        );
        let start = Instant::now();
        assert!(
            w.wait_while_stalled(open, &cancel, std::future::pending())
                .await
        );
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        assert!(!w.is_stalled(open));

        f.stall_watches(None);
        let waiter = tokio::spawn({
            let (w, cancel) = (w.clone(), cancel.clone());
            async move {
                w.wait_while_stalled(open, &cancel, std::future::pending())
                    .await
            }
        });
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(!waiter.is_finished(), "stalled until cleared");
        f.clear();
        assert!(waiter.await.unwrap());

        f.stall_watches(None);
        cancel.cancel();
        assert!(
            !w.wait_while_stalled(open, &cancel, std::future::pending())
                .await
        );
    }

    #[test]
    fn fail_next_counts_down_and_matches_verb_and_resource() {
        let f = Faults::default();
        f.fail_next(Some("list"), Some("pods"), 503, 2, Some(1));
        assert!(f.check("get", "pods").is_none());
        assert!(f.check("list", "configmaps").is_none());
        assert_eq!(f.check("list", "pods").unwrap().code, 503);
        assert_eq!(
            f.check("list", "pods").unwrap().details.retry_after_seconds,
            Some(1)
        );
        assert!(f.check("list", "pods").is_none());
    }
}
