//! The run's journal: every reconcile's start and end per replica incarnation in virtual
//! time (what the reconcile function records), and the membership events the harness saw,
//! in order. The invariants read it; a seed's replay repeats it.

use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// How a reconcile ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Still running when the journal was read.
    Running,
    /// It did its work (the owned Secret holds the value it read).
    Done,
    /// A request failed; the controller retries.
    Failed,
    /// Its replica crashed in the middle.
    Aborted,
}

/// One reconcile of one ConfigMap by one incarnation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconcile {
    /// The incarnation that ran it (numbered across the run).
    pub incarnation: u32,
    /// Its replica's identity.
    pub replica: String,
    /// `namespace/name` of the ConfigMap.
    pub key: String,
    /// The ConfigMap's `v` as the reconcile was given it.
    pub value: Option<u32>,
    /// The member its copy was assigned to (the shard label).
    pub assigned: Option<String>,
    /// Whether its copy carried the drain label.
    pub draining: bool,
    /// When it started (virtual time since the run began).
    pub start: Duration,
    /// When it ended.
    pub end: Option<Duration>,
    /// How.
    pub outcome: Outcome,
}

impl Reconcile {
    /// Its end, or `now` while it runs.
    pub fn end_or(&self, now: Duration) -> Duration {
        self.end.unwrap_or(now)
    }
}

/// A shard label moved off a member by hand (removed, or set to a stranger).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandMove {
    /// `namespace/name` of the ConfigMap.
    pub key: String,
    /// The member it was assigned to.
    pub from: String,
    /// When (virtual time since the run began).
    pub at: Duration,
}

#[derive(Debug, Default)]
struct Inner {
    reconciles: Vec<Reconcile>,
    events: Vec<String>,
    hand_moves: Vec<HandMove>,
}

/// The journal; shared by the harness and every replica.
#[derive(Debug)]
pub struct Journal {
    origin: Instant,
    inner: Mutex<Inner>,
}

impl Default for Journal {
    fn default() -> Self {
        Journal {
            origin: Instant::now(),
            inner: Mutex::default(),
        }
    }
}

/// A start recorded in the journal, to end.
#[derive(Debug, Clone, Copy)]
pub struct Started(usize);

impl Journal {
    /// Virtual time since the run began.
    pub fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    /// Notes a membership event (or anything the trace should show) at the current time.
    pub fn event(&self, what: impl std::fmt::Display) {
        self.event_at(self.now(), what);
    }

    /// Notes an event that began at `at` (a step, noted once it is done).
    pub fn event_at(&self, at: Duration, what: impl std::fmt::Display) {
        let line = format!("{:>8.3}s {what}", at.as_secs_f64());
        self.inner.lock().events.push(line);
    }

    /// Records the start of a reconcile (`reconcile` with `start` set to now).
    pub fn start(&self, mut reconcile: Reconcile) -> Started {
        reconcile.start = self.now();
        reconcile.end = None;
        reconcile.outcome = Outcome::Running;
        let mut inner = self.inner.lock();
        inner.reconciles.push(reconcile);
        Started(inner.reconciles.len() - 1)
    }

    /// Records the end of the reconcile `started`.
    pub fn end(&self, started: Started, outcome: Outcome) {
        let now = self.now();
        if let Some(r) = self.inner.lock().reconciles.get_mut(started.0) {
            r.end = Some(now);
            r.outcome = outcome;
        }
    }

    /// Records that `key`'s shard label was moved off `from` by hand, now.
    pub fn hand_move(&self, key: &str, from: &str) {
        let at = self.now();
        self.inner.lock().hand_moves.push(HandMove {
            key: key.to_owned(),
            from: from.to_owned(),
            at,
        });
    }

    /// Every shard label moved off a member by hand.
    pub fn hand_moves(&self) -> Vec<HandMove> {
        self.inner.lock().hand_moves.clone()
    }

    /// Every reconcile so far, in the order they started.
    pub fn reconciles(&self) -> Vec<Reconcile> {
        self.inner.lock().reconciles.clone()
    }

    /// Every event so far, in order.
    pub fn events(&self) -> Vec<String> {
        self.inner.lock().events.clone()
    }
}
