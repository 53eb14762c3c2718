//! [`SeriesConfig`]: when an `events.k8s.io/v1` broadcaster refreshes and finishes its
//! series (client-go's `refreshTime` and `finishTime`).

use std::time::Duration;

/// A series not observed for this long is finished: its final count is written and it is
/// forgotten; a single event is forgotten after as long (client-go's `finishTime`).
pub const DEFAULT_FINISH_TIME: Duration = Duration::from_secs(6 * 60);
/// Every series is written again this often, so the server keeps it and learns its count
/// (client-go's `refreshTime`).
pub const DEFAULT_REFRESH_TIME: Duration = Duration::from_secs(30 * 60);

/// The series timing of an [`EventBroadcaster`](super::EventBroadcaster).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesConfig {
    pub(crate) finish: Duration,
    pub(crate) refresh: Duration,
}

impl Default for SeriesConfig {
    fn default() -> Self {
        Self {
            finish: DEFAULT_FINISH_TIME,
            refresh: DEFAULT_REFRESH_TIME,
        }
    }
}

impl SeriesConfig {
    /// client-go's timing: series finish after 6 minutes without a repeat and are
    /// refreshed every 30 minutes.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long without a repeat ends a series (and how often that is checked); at
    /// least 1 ms.
    pub fn finish_time(mut self, d: Duration) -> Self {
        self.finish = d.max(Duration::from_millis(1));
        self
    }

    /// How often every series is written again; at least 1 ms.
    pub fn refresh_time(mut self, d: Duration) -> Self {
        self.refresh = d.max(Duration::from_millis(1));
        self
    }
}
