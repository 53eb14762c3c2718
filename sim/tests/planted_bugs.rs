//! The simulation finds known bugs: each test turns on one of `kubegen::planted_bugs`'
//! switches (the runtime's `planted-bugs` feature; every switch is off otherwise) and
//! asserts that a seed of the CI budget (0..200) diverges. The switches are process-wide,
//! so the tests take turns (nextest runs each in its own process anyway).

use std::sync::{
    Mutex,
    atomic::{AtomicBool, Ordering},
};

use kubegen::planted_bugs;
use kubegen_sim::{Schedule, Step, explain, run, run_seed, shrink};

/// The CI seed budget the bugs must be caught within.
const BUDGET: u64 = 200;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Turns `bug` on, runs seeds until one diverges, turns it off; the first diverging seed
/// and what broke (without shrinking: the bug is known).
fn first_catch(bug: &AtomicBool) -> (u64, String) {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    bug.store(true, Ordering::Relaxed);
    let caught = (0..BUDGET).find_map(|seed| run_seed(seed).err().map(|d| (seed, d)));
    bug.store(false, Ordering::Relaxed);
    let (seed, divergence) = caught.expect("the planted bug went unnoticed by every CI seed");
    let text = explain(seed, &divergence, false);
    eprintln!("caught at {text}");
    (seed, divergence.to_string())
}

/// client-go `reflector.go`: `ListAndWatch` sets the last synced resourceVersion from the
/// list, and the watch starts there. Watching on from the version before the relist
/// replays changes the list already had: a handler is given objects older than the ones it
/// has (or deletes for keys it never had), or the controller, told its cache is past its
/// own write, reads an older object.
#[test]
fn a_relist_that_keeps_its_stale_resource_version_is_caught() {
    let (_, what) = first_catch(&planted_bugs::RELIST_KEEPS_STALE_RESOURCE_VERSION);
    assert!(
        what.contains("went back")
            || what.contains("never added")
            || what.contains("from rv")
            || what.contains("older than its own write"),
        "{what}"
    );
}

/// client-go `delta_fifo.go` `Replace`: every known key the list lacks gets a
/// `DeletedFinalStateUnknown`. A `DeltaFifo` (the Secret informer's queue) that drops
/// those `Deleted` leaves objects deleted while disconnected in the cache and in every
/// handler's view.
#[test]
fn a_delta_fifo_that_drops_deletions_after_a_replace_is_caught() {
    let (_, what) = first_catch(&planted_bugs::REPLACE_DROPS_DELETIONS);
    assert!(what.contains("the server deleted"), "{what}");
}

/// client-go `shared_informer.go` `processorListener`: an unbounded ring buffer, nothing
/// dropped. A buffer that drops under load (the slow handler's backlog, or a burst of
/// resyncs) shows in a handler's view or its broken promises.
#[test]
fn a_handler_buffer_that_drops_under_load_is_caught() {
    let (_, what) = first_catch(&planted_bugs::LISTENER_DROPS_UNDER_LOAD);
    assert!(what.contains("handler:"), "{what}");
}

/// client-go `thread_safe_store.go` `Delete` removes the key from every index. An index
/// that keeps deleted keys disagrees with the cache.
#[test]
fn an_index_that_keeps_deleted_keys_is_caught() {
    let (_, what) = first_catch(&planted_bugs::INDEX_KEEPS_DELETED_KEYS);
    assert!(what.contains("namespace index"), "{what}");
}

/// kube-controller-manager's `ConsistencyStore` (KEP-5647): a controller that wrote an
/// object does not act on a cache older than its write. A store that forgets the writes
/// lets a reconcile read its owned Secret from before its own last update (which the
/// controller's own record of its writes, kept apart from the runtime's, reports).
#[test]
fn a_consistency_store_that_forgets_the_controllers_writes_is_caught() {
    let (_, what) = first_catch(&planted_bugs::CONSISTENCY_FORGETS_WRITES);
    assert!(what.contains("older than its own write"), "{what}");
}

/// A failing seed shrinks: with the index bug planted, the first failing schedule loses
/// every step the failure does not need (the minimal one is printed), and still fails.
#[test]
fn a_failing_schedule_shrinks_to_the_steps_it_needs() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let bug = &planted_bugs::INDEX_KEEPS_DELETED_KEYS;
    bug.store(true, Ordering::Relaxed);
    let failing = (0..BUDGET)
        .map(Schedule::generate)
        .find(|s| run(s).is_err());
    let shrunk = failing.map(|s| {
        let (min, runs) = shrink(&s, kubegen_sim::SHRINK_BUDGET, |c| run(c).is_err());
        let rerun = run(&min);
        (s, min, runs, rerun)
    });
    bug.store(false, Ordering::Relaxed);
    let (original, min, runs, rerun) = shrunk.expect("the planted bug was caught");
    eprintln!("{original}shrunk in {runs} runs to {min}");
    assert!(rerun.is_err(), "the minimal schedule still fails");
    // Leaving a key deleted takes a write and a delete (of a Secret, or of a ConfigMap
    // whose owned Secret the garbage collector deletes).
    assert!((2..=3).contains(&min.steps.len()), "not minimal: {min}");
    assert!(
        min.steps.iter().any(|s| matches!(s, Step::Delete { .. })),
        "{min}"
    );
}
