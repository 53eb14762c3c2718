//! Fault injection: fail the next N requests matching a verb and resource, delay
//! responses. (Dropping watches, compaction and restarts act on the store and server.)

use std::time::Duration;

use parking_lot::Mutex;

use crate::errors::ApiError;

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

    /// Removes all rules and the delay.
    pub fn clear(&self) {
        self.rules.lock().clear();
        *self.delay.lock() = None;
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
