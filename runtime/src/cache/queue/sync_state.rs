//! [`SyncState`]: how far a queue is on its way to "synced", and whether it is closed —
//! the one place the rule behind `has_synced` lives for [`Fifo`](crate::cache::Fifo),
//! [`DeltaFifo`](crate::cache::DeltaFifo) and [`RealFifo`](crate::cache::RealFifo)
//! (client-go's `populated` and `initialPopulationCount` in `fifo.go`, `delta_fifo.go` and
//! `the_real_fifo.go`).
//!
//! ```text
//! Unpopulated ──listed(n > 0)──► Initial { remaining: n } ──popped × n──► Synced
//!      │                                                                    ▲
//!      └──────────── written, or listed(0) ────────────────────────────────┘
//! ```
//!
//! Only the first relist sets the count; later relists and writes change nothing once
//! the queue left `Unpopulated`. Closing is orthogonal: a closed queue keeps its phase.

use std::fmt;

/// The phase of a queue's first population.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncPhase {
    /// Nothing has been queued yet.
    Unpopulated,
    /// The first relist queued `remaining` items that have not all been popped.
    Initial {
        /// Items of the first relist still queued.
        remaining: usize,
    },
    /// The first relist was popped and processed, or something else came first.
    Synced,
}

/// A queue's [`SyncPhase`] and whether it was closed; see the module docs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct SyncState {
    phase: SyncPhase,
    closed: bool,
}

impl fmt::Debug for SyncState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.phase {
            SyncPhase::Unpopulated => f.write_str("unpopulated")?,
            SyncPhase::Initial { remaining } => write!(f, "initial ({remaining} to pop)")?,
            SyncPhase::Synced => f.write_str("synced")?,
        }
        if self.closed {
            f.write_str(", closed")?;
        }
        Ok(())
    }
}

impl Default for SyncState {
    fn default() -> Self {
        Self::new()
    }
}

impl SyncState {
    /// An open queue that has seen nothing.
    pub(crate) const fn new() -> Self {
        Self {
            phase: SyncPhase::Unpopulated,
            closed: false,
        }
    }

    /// The phase (for tests and `Debug`).
    #[cfg(test)]
    pub(crate) fn phase(&self) -> SyncPhase {
        self.phase
    }

    /// Something other than the first relist was queued (an add, update, delete, bookmark
    /// or requeue): a queue nobody listed into counts as synced from here (client-go sets
    /// `populated` on every write).
    pub(crate) fn written(&mut self) {
        if self.phase == SyncPhase::Unpopulated {
            self.phase = SyncPhase::Synced;
        }
    }

    /// A relist queued `count` items. The first relist of an unpopulated queue makes
    /// [`has_synced`](Self::has_synced) wait until all of them were popped; later ones
    /// change nothing.
    pub(crate) fn listed(&mut self, count: usize) {
        if self.phase == SyncPhase::Unpopulated {
            self.phase = if count == 0 {
                SyncPhase::Synced
            } else {
                SyncPhase::Initial { remaining: count }
            };
        }
    }

    /// One item was popped; returns whether it belongs to the initial list (true until
    /// the queue is synced, the last initial item included).
    pub(crate) fn popped(&mut self) -> bool {
        match self.phase {
            SyncPhase::Unpopulated => true,
            SyncPhase::Initial { remaining } => {
                self.phase = if remaining <= 1 {
                    SyncPhase::Synced
                } else {
                    SyncPhase::Initial {
                        remaining: remaining - 1,
                    }
                };
                true
            }
            SyncPhase::Synced => false,
        }
    }

    /// Whether the first relist has been popped (or something else was queued first).
    /// Stays true.
    pub(crate) fn has_synced(&self) -> bool {
        self.phase == SyncPhase::Synced
    }

    /// Closes the queue; its phase is kept.
    pub(crate) fn close(&mut self) {
        self.closed = true;
    }

    /// Whether [`close`](Self::close) was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_queue_is_unpopulated_open_and_not_synced() {
        let s = SyncState::new();
        assert_eq!(s.phase(), SyncPhase::Unpopulated);
        assert!(!s.has_synced());
        assert!(!s.is_closed());
        assert_eq!(format!("{s:?}"), "unpopulated");
    }

    #[test]
    fn a_write_before_any_list_means_synced() {
        let mut s = SyncState::new();
        s.written();
        assert_eq!(s.phase(), SyncPhase::Synced);
        assert!(s.has_synced());
    }

    #[test]
    fn the_first_list_waits_for_its_items() {
        let mut s = SyncState::new();
        s.listed(2);
        assert_eq!(s.phase(), SyncPhase::Initial { remaining: 2 });
        assert!(!s.has_synced());
        assert_eq!(format!("{s:?}"), "initial (2 to pop)");
    }

    #[test]
    fn an_empty_first_list_is_synced_at_once() {
        let mut s = SyncState::new();
        s.listed(0);
        assert!(s.has_synced());
    }

    #[test]
    fn popping_the_last_initial_item_syncs_and_it_counts_as_initial() {
        let mut s = SyncState::new();
        s.listed(2);
        assert!(s.popped(), "first initial item");
        assert!(!s.has_synced());
        assert!(s.popped(), "the last initial item is still initial");
        assert!(s.has_synced());
        assert!(!s.popped(), "after sync nothing is initial");
    }

    #[test]
    fn writes_during_the_initial_list_do_not_shorten_it() {
        let mut s = SyncState::new();
        s.listed(1);
        s.written();
        assert_eq!(s.phase(), SyncPhase::Initial { remaining: 1 });
    }

    #[test]
    fn later_lists_change_nothing() {
        let mut s = SyncState::new();
        s.written();
        s.listed(5);
        assert!(s.has_synced());
        let mut s = SyncState::new();
        s.listed(3);
        s.listed(7);
        assert_eq!(s.phase(), SyncPhase::Initial { remaining: 3 });
    }

    #[test]
    fn a_pop_before_anything_was_queued_is_initial_and_changes_nothing() {
        let mut s = SyncState::new();
        assert!(s.popped());
        assert_eq!(s.phase(), SyncPhase::Unpopulated);
    }

    #[test]
    fn closing_keeps_the_phase() {
        let mut s = SyncState::new();
        s.listed(1);
        s.close();
        assert!(s.is_closed());
        assert_eq!(s.phase(), SyncPhase::Initial { remaining: 1 });
        assert_eq!(format!("{s:?}"), "initial (1 to pop), closed");
        assert!(s.popped());
        assert!(s.has_synced());
        assert!(s.is_closed());
    }
}
