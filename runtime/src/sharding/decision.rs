//! What the sharder does with one object: the handover protocol's rules as a pure
//! function of the object's labels, the live members and the object's rendezvous pick
//! (one rule per arm; unit tests below name them).
//!
//! Every decision is written with the resourceVersion it was made from as a
//! precondition, so a decision taken on a stale cache fails with 409 Conflict and is
//! taken again on the fresh object.

use std::collections::BTreeSet;

/// The sharder's verdict on one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Leave the object as it is.
    Keep,
    /// Label the object for this member, clearing any drain label. Only for an object no
    /// live member holds: unassigned, acknowledged after a drain, or its member's Lease
    /// expired (the member stopped reconciling before that, at its renew deadline).
    Assign(String),
    /// Ask the live member holding the object to let it go (the drain label).
    Drain,
}

/// The decision for an object of a sharded primary kind: it is `assigned` to a member (or
/// none), carries the drain label or not; `live` are the ring's members whose Leases are
/// valid; `pick` the rendezvous choice among them for the object's key.
pub fn primary(
    assigned: Option<&str>,
    draining: bool,
    live: &BTreeSet<String>,
    pick: Option<&str>,
) -> Decision {
    let Some(pick) = pick else {
        // 1. No live member: nothing can take anything; objects wait.
        return Decision::Keep;
    };
    match assigned {
        // 2. Nobody holds it (new, or handed back after a drain): assign it.
        None => Decision::Assign(pick.to_owned()),
        // 3. Its member is gone (Lease expired or released): reassign at once, no drain.
        Some(member) if !live.contains(member) => Decision::Assign(pick.to_owned()),
        // 4. Its live member is the pick: keep (a drain in progress finishes; the object
        //    then comes back to the same member through rule 2).
        Some(member) if member == pick => Decision::Keep,
        // 5. Another member should have it and the drain was asked: wait for the
        //    holder's acknowledgement.
        Some(_) if draining => Decision::Keep,
        // 6. Another member should have it: ask the holder to drain first.
        Some(_) => {
            #[cfg(feature = "planted-bugs")]
            if crate::planted_bugs::HANDOVER_WITHOUT_DRAIN
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                return Decision::Assign(pick.to_owned());
            }
            Decision::Drain
        }
    }
}

/// The decision for an object owned (controller owner reference) by a sharded primary
/// object: it follows its owner's assignment, so it lands in the cache of the member that
/// reconciles the owner. Owned objects are not reconciled themselves, so they move without
/// a drain.
pub fn owned(assigned: Option<&str>, draining: bool, owner_assigned: Option<&str>) -> Decision {
    match owner_assigned {
        // The owner is between members: the owned object waits for it.
        None => Decision::Keep,
        Some(owner) if assigned == Some(owner) && !draining => Decision::Keep,
        Some(owner) => Decision::Assign(owner.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(members: &[&str]) -> BTreeSet<String> {
        members.iter().map(|m| (*m).to_owned()).collect()
    }

    #[test]
    fn rule_1_no_live_member_keeps_everything() {
        assert_eq!(primary(None, false, &live(&[]), None), Decision::Keep);
        assert_eq!(primary(Some("a"), false, &live(&[]), None), Decision::Keep);
    }

    #[test]
    fn rule_2_an_unassigned_object_is_assigned_to_its_pick() {
        let l = live(&["a", "b"]);
        assert_eq!(
            primary(None, false, &l, Some("b")),
            Decision::Assign("b".into())
        );
        // A stray drain label on an unassigned object is cleared by the assignment.
        assert_eq!(
            primary(None, true, &l, Some("b")),
            Decision::Assign("b".into())
        );
    }

    #[test]
    fn rule_3_a_dead_members_object_moves_without_drain() {
        let l = live(&["b"]);
        assert_eq!(
            primary(Some("a"), false, &l, Some("b")),
            Decision::Assign("b".into())
        );
        assert_eq!(
            primary(Some("a"), true, &l, Some("b")),
            Decision::Assign("b".into())
        );
    }

    #[test]
    fn rule_4_the_pick_keeps_its_object() {
        let l = live(&["a", "b"]);
        assert_eq!(primary(Some("a"), false, &l, Some("a")), Decision::Keep);
        assert_eq!(primary(Some("a"), true, &l, Some("a")), Decision::Keep);
    }

    #[test]
    fn rules_5_and_6_a_live_holder_drains_before_the_move() {
        let l = live(&["a", "b"]);
        assert_eq!(primary(Some("a"), false, &l, Some("b")), Decision::Drain);
        assert_eq!(primary(Some("a"), true, &l, Some("b")), Decision::Keep);
    }

    #[test]
    fn owned_objects_follow_their_owner() {
        assert_eq!(owned(None, false, None), Decision::Keep);
        assert_eq!(owned(Some("a"), false, None), Decision::Keep);
        assert_eq!(owned(None, false, Some("a")), Decision::Assign("a".into()));
        assert_eq!(
            owned(Some("b"), false, Some("a")),
            Decision::Assign("a".into())
        );
        assert_eq!(owned(Some("a"), false, Some("a")), Decision::Keep);
        assert_eq!(
            owned(Some("a"), true, Some("a")),
            Decision::Assign("a".into())
        );
    }
}
