//! The sharding scenario finds the ring's planted bugs: each test turns on one of
//! `kubegen::planted_bugs`' sharding switches and asserts that a seed of the scenario's
//! CI budget (0..100, `tests/sharding.rs`) breaks, and what it broke. The switches are
//! process-wide, so the tests take turns (nextest runs each in its own process anyway).

use std::sync::{
    Mutex,
    atomic::{AtomicBool, Ordering},
};

use kubegen::planted_bugs;
use kubegen_sim::sharding::{explain, run_seed};

/// The CI seed budget the bugs must be caught within.
const BUDGET: u64 = 100;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Turns `bug` on, runs seeds until one breaks, turns it off; the first breaking seed and
/// what broke (without shrinking: the bug is known).
fn first_catch(bug: &AtomicBool) -> (u64, String) {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    bug.store(true, Ordering::Relaxed);
    let caught = (0..BUDGET).find_map(|seed| run_seed(seed).err().map(|d| (seed, d)));
    bug.store(false, Ordering::Relaxed);
    let (seed, divergence) = caught.expect("the planted bug went unnoticed by every CI seed");
    eprintln!("caught at {}", explain(seed, &divergence, false));
    (seed, divergence.to_string())
}

/// The handover protocol's rule 6 (`sharding/decision.rs`): an object moves from a live
/// member only after that member drained it (its worker, holding the object's key, hands
/// it back once no reconcile of it runs). A sharder that relabels it straight away lets the
/// new member start while the old one still reconciles: two reconciles of one object
/// overlap.
#[test]
fn a_handover_without_drain_is_caught() {
    let (_, what) = first_catch(&planted_bugs::HANDOVER_WITHOUT_DRAIN);
    assert!(what.contains("reconciled twice at once"), "{what}");
}

/// client-go's leader-election rule, which the ring's liveness follows
/// (`sharding/liveness.rs`): a Lease is valid for `leaseDurationSeconds` after it was last
/// seen to change. A sharder that counts a crashed or cut-off member (or a Lease nobody
/// renews) alive forever never moves its objects: they stay assigned to a dead member and
/// go unreconciled after their last change.
#[test]
fn a_sharder_that_ignores_expired_leases_is_caught() {
    let (_, what) = first_catch(&planted_bugs::SHARDER_IGNORES_EXPIRED_LEASES);
    assert!(
        what.contains("not a live member") || what.contains("not reconciled after"),
        "{what}"
    );
}
