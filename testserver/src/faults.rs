//! Fault injection: fail the next N requests matching a verb and resource, delay
//! responses, stall watches, delay watch events. (Dropping watches, compaction and restarts
//! act on the store and server.) Both fronts serve through the same handler and watch
//! code, so every fault acts on HTTP and in-process clients alike.

use std::{sync::Arc, time::Duration};

use parking_lot::Mutex;
use tokio::{sync::Notify, time::Instant};
use tokio_util::sync::CancellationToken;

use kubegen::catalog::Verb;

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

/// A rule failing the next matching requests with an injected error (a `Status` with
/// the rule's code, and `Retry-After` when set), before they reach the engine.
///
/// Built as a value and handed to [`crate::TestServer::fail`] or
/// [`crate::InProcess::fail`]:
///
/// ```
/// use kubegen_testserver::{FailRule, Verb};
///
/// // the next four updates of a ConfigMap conflict
/// let conflicts = FailRule::on(Verb::Update).resource("configmaps").code(409).times(4);
/// // the next request of any verb on any resource is throttled, with `Retry-After: 1`
/// let throttled = FailRule::any_verb().code(429).retry_after(1);
/// # let _ = (conflicts, throttled);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailRule {
    /// Verb to match, or any.
    verb: Option<Verb>,
    /// Resource plural to match, or any.
    resource: Option<String>,
    /// HTTP code to answer with.
    code: u16,
    /// How many more requests fail.
    remaining: usize,
    /// `Retry-After` seconds.
    retry_after_seconds: Option<u32>,
}

impl FailRule {
    /// Fails the next request with `verb` on any resource, with a 500 (narrow it with
    /// [`FailRule::resource`], change it with [`FailRule::code`] and [`FailRule::times`]).
    pub fn on(verb: Verb) -> Self {
        FailRule {
            verb: Some(verb),
            ..FailRule::any_verb()
        }
    }

    /// Fails the next request of any verb on any resource, with a 500.
    pub fn any_verb() -> Self {
        FailRule {
            verb: None,
            resource: None,
            code: 500,
            remaining: 1,
            retry_after_seconds: None,
        }
    }

    /// Only requests on `plural` (the resource, any subresource of it included).
    pub fn resource(mut self, plural: impl Into<String>) -> Self {
        self.resource = Some(plural.into());
        self
    }

    /// Answers with HTTP `code` (e.g. 409, 429, 500, 503); the `Status` reason is the
    /// one kube-apiserver gives that code.
    pub fn code(mut self, code: u16) -> Self {
        self.code = code;
        self
    }

    /// Fails the next `count` matching requests (default 1).
    pub fn times(mut self, count: usize) -> Self {
        self.remaining = count;
        self
    }

    /// Sends `Retry-After: seconds` (and `details.retryAfterSeconds`) with the error.
    pub fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after_seconds = Some(seconds);
        self
    }

    fn matches(&self, verb: Verb, resource: &str) -> bool {
        self.remaining > 0
            && self.verb.is_none_or(|v| v == verb)
            && self.resource.as_deref().is_none_or(|r| r == resource)
    }
}

/// The fault switchboard shared by both fronts.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Mutex<Vec<FailRule>>,
    delay: Mutex<Option<Duration>>,
    watch: Arc<WatchFaults>,
}

impl Faults {
    /// Adds a rule: the next matching requests fail (rules are consulted in the order
    /// they were added; a request consumes one count of the first that matches).
    pub fn fail(&self, rule: FailRule) {
        self.rules.lock().push(rule);
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
    pub fn check(&self, verb: Verb, resource: &str) -> Option<ApiError> {
        let mut rules = self.rules.lock();
        let pos = rules.iter().position(|r| r.matches(verb, resource))?;
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
    fn a_rule_counts_down_and_matches_verb_and_resource() {
        let f = Faults::default();
        f.fail(
            FailRule::on(Verb::List)
                .resource("pods")
                .code(503)
                .times(2)
                .retry_after(1),
        );
        assert!(f.check(Verb::Get, "pods").is_none());
        assert!(f.check(Verb::List, "configmaps").is_none());
        assert_eq!(f.check(Verb::List, "pods").unwrap().code, 503);
        assert_eq!(
            f.check(Verb::List, "pods")
                .unwrap()
                .details
                .retry_after_seconds,
            Some(1)
        );
        assert!(f.check(Verb::List, "pods").is_none());
    }

    #[test]
    fn a_rule_defaults_to_one_500_on_anything() {
        let f = Faults::default();
        f.fail(FailRule::any_verb());
        let err = f.check(Verb::Watch, "leases").unwrap();
        assert_eq!((err.code, err.details.retry_after_seconds), (500, None));
        assert!(f.check(Verb::Watch, "leases").is_none());
    }
}
