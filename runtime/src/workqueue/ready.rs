//! The ready queue of [`Core`](super::core::Core): the slots of the dirty items that are not
//! being processed, in hand-out order — highest priority first, first in first out within
//! a priority (controller-runtime's `priorityqueue`, where the objects of an informer's
//! first list and resyncs wait behind fresh events).
//!
//! Items added without a priority have priority 0 and live in one plain FIFO lane, so a
//! queue that never uses priorities pays one emptiness check per `get` for them. Other
//! priorities get a lane each, created on demand and dropped when empty.
//!
//! An item already queued that is added again at a higher priority moves up: it is pushed
//! onto the higher lane with a new ticket, and its old entry, whose ticket no longer
//! matches the slot's, is skipped when it reaches the front (tickets are never reused, so
//! a stale entry never matches a slot freed and reused meanwhile). An item never moves
//! down: the highest priority asked for while it waits wins.

use std::collections::{BTreeMap, VecDeque};

/// One queued slot; live while `ticket` equals the slot's current ticket.
#[derive(Debug, Clone, Copy)]
struct Entry {
    slot: usize,
    ticket: u64,
}

/// What the ready queue needs to know of a slot.
pub(super) trait Ticketed {
    /// The ticket of the slot's live entry, if it is queued.
    fn ticket(&self) -> Option<u64>;
}

/// See the module docs.
#[derive(Debug, Default)]
pub(super) struct ReadyQueue {
    /// Priority 0.
    normal: VecDeque<Entry>,
    /// Every other priority, by priority.
    others: BTreeMap<i32, VecDeque<Entry>>,
    /// Live entries.
    live: usize,
    next_ticket: u64,
}

impl ReadyQueue {
    /// Queues `slot` at `priority`; returns the ticket the slot must keep. If the slot was
    /// queued already (it moves up), pass `requeue` so it is not counted twice.
    #[inline]
    pub(super) fn push(&mut self, slot: usize, priority: i32, requeue: bool) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let entry = Entry { slot, ticket };
        if priority == 0 {
            self.normal.push_back(entry);
        } else {
            self.others.entry(priority).or_default().push_back(entry);
        }
        if !requeue {
            self.live += 1;
        }
        ticket
    }

    /// Takes the next live slot, skipping stale entries; `slot_of` looks a slot up.
    #[inline]
    pub(super) fn pop<S: Ticketed>(
        &mut self,
        slot_of: impl Fn(usize) -> Option<S>,
    ) -> Option<usize> {
        loop {
            let entry = self.pop_entry()?;
            if slot_of(entry.slot).and_then(|s| s.ticket()) == Some(entry.ticket) {
                self.live -= 1;
                return Some(entry.slot);
            }
        }
    }

    /// The front entry of the highest non-empty lane.
    #[inline]
    fn pop_entry(&mut self) -> Option<Entry> {
        if self.others.is_empty() {
            return self.normal.pop_front();
        }
        // A lane above 0 goes first; below 0, only when lane 0 is empty.
        let high = self.others.last_key_value().map(|(p, _)| *p);
        let lane = match high {
            Some(p) if p > 0 => p,
            _ if !self.normal.is_empty() => return self.normal.pop_front(),
            Some(p) => p,
            None => return None,
        };
        let queue = self.others.get_mut(&lane)?;
        let entry = queue.pop_front();
        if queue.is_empty() {
            self.others.remove(&lane);
        }
        entry
    }

    /// The number of queued items.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[derive(Clone, Copy)]
    struct T(Option<u64>);
    impl Ticketed for T {
        fn ticket(&self) -> Option<u64> {
            self.0
        }
    }

    #[test]
    fn higher_priorities_first_and_fifo_within_one() {
        let mut q = ReadyQueue::default();
        let mut tickets = HashMap::new();
        for (slot, priority) in [(0, 0), (1, -100), (2, 0), (3, 5), (4, -100), (5, 5)] {
            tickets.insert(slot, q.push(slot, priority, false));
        }
        let mut order = Vec::new();
        while let Some(slot) = q.pop(|s| tickets.get(&s).map(|t| T(Some(*t)))) {
            order.push(slot);
        }
        assert_eq!(order, [3, 5, 0, 2, 1, 4]);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn a_raised_item_moves_up_once() {
        let mut q = ReadyQueue::default();
        let mut tickets = HashMap::new();
        for slot in 0..3 {
            tickets.insert(slot, q.push(slot, -100, false));
        }
        tickets.insert(2, q.push(2, 0, true));
        assert_eq!(q.len(), 3);
        let mut order = Vec::new();
        while let Some(slot) = q.pop(|s| tickets.get(&s).map(|t| T(Some(*t)))) {
            order.push(slot);
        }
        assert_eq!(order, [2, 0, 1], "the stale low entry of 2 is skipped");
    }
}
