//! Health and readiness checks (controller-runtime's `pkg/healthz`): named checks, run on
//! every request, reported one line each as kube-apiserver's `/healthz?verbose` does.

use std::{fmt::Write as _, sync::Arc};

/// A check: `Ok` when healthy (or ready), otherwise why not.
pub type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// A check that also says what it saw when it passes (`[+]name ok: detail`).
pub(crate) type DetailedCheck = Arc<dyn Fn() -> Result<String, String> + Send + Sync>;

/// A named set of checks.
#[derive(Clone, Default)]
pub(crate) struct Checks {
    checks: Vec<(String, DetailedCheck)>,
}

impl Checks {
    pub(crate) fn add(&mut self, name: impl Into<String>, check: Check) {
        self.checks.push((
            name.into(),
            Arc::new(move || check().map(|()| String::new())),
        ));
    }

    pub(crate) fn add_detailed(&mut self, name: impl Into<String>, check: DetailedCheck) {
        self.checks.push((name.into(), check));
    }

    /// Runs every check: whether all passed, and the report (`[+]name ok` /
    /// `[-]name failed: reason`, then `healthz check passed` or `… failed`).
    pub(crate) fn run(&self, what: &str) -> (bool, String) {
        let mut ok = true;
        let mut report = String::new();
        for (name, check) in &self.checks {
            match check() {
                Ok(detail) if detail.is_empty() => {
                    let _ = writeln!(report, "[+]{name} ok");
                }
                Ok(detail) => {
                    let _ = writeln!(report, "[+]{name} ok: {detail}");
                }
                Err(reason) => {
                    ok = false;
                    let _ = writeln!(report, "[-]{name} failed: {reason}");
                }
            }
        }
        let verdict = if ok { "passed" } else { "failed" };
        let _ = writeln!(report, "{what} check {verdict}");
        (ok, report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_is_reported_and_one_failure_fails_the_set() {
        let mut checks = Checks::default();
        checks.add("ping", Arc::new(|| Ok(())));
        assert_eq!(
            checks.run("readyz"),
            (true, "[+]ping ok\nreadyz check passed\n".into())
        );
        checks.add("informers", Arc::new(|| Err("not synced".into())));
        let (ok, report) = checks.run("readyz");
        assert!(!ok);
        assert!(
            report.contains("[-]informers failed: not synced"),
            "{report}"
        );
    }
}
