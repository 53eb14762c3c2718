//! # kubegen-sim: a deterministic, seeded fault simulation of kubegen
//!
//! A seed fixes a [`Schedule`]: a workload (creates, updates, deletes of ConfigMaps and
//! Secrets in three namespaces) interleaved with faults (dropped watches, stalled watches,
//! late watch delivery, 410 compaction, 500 and 429 bursts, server restarts, a slow
//! handler, a handler added late). [`run()`] performs it against the test server's
//! in-process front, on a current-thread tokio runtime whose clock is paused, with two
//! shared informers from a `SharedInformerFactory` (ConfigMaps through a `RealFifo`,
//! Secrets through a `DeltaFifo` with resync), recording handlers, and a workqueue-based
//! controller (`kubegen::controller`, [`mirror`]) keeping an owned Secret per ConfigMap.
//! After quiescence it checks that every cache and every handler's replayed view equals
//! the server object for object (resourceVersion and uid), that the namespace index
//! agrees with the cache, that no handler was given an update or delete for a key it never
//! had, an object older than the last one, or a tombstone for an object the server still
//! has, that the controller converged, and that no reconcile read a Secret older than the
//! controller's own last write of it ([`mirror`]).
//!
//! A run is a function of its seed: the handlers run on tasks of the runtime
//! ([`Dispatch::Task`](kubegen::cache::Dispatch)), except the slow one, whose thread the
//! harness waits for; so a seed replays exactly ([`Report::trace`]). A failing seed prints
//! itself and its schedule, is shrunk ([`shrink()`]) to a minimal schedule that still fails,
//! and replays with `KUBEGEN_SIM_SEED=N`.
//!
//! A second scenario, [`sharding`], runs a ring of sharded managers
//! (`ManagerBuilder::shard_ring`, issue 44) under a seed: replicas join, leave cleanly,
//! crash, restart, and are cut off from the server (the sharder's replica too), a member
//! Lease is never renewed, shard and drain labels are edited by hand, while ConfigMaps are
//! written. Every reconcile's start and end is recorded per replica incarnation in virtual
//! time; no two incarnations may reconcile one object at once, a reconcile only gets an
//! object its replica's cache had assigned to it, and at quiescence every ConfigMap is
//! assigned to exactly one live member (and cached by it alone) and was reconciled at its
//! last value. Its seeds replay as well ([`sharding::ShardReport::trace`]); `tests/sharding.rs`
//! holds its CI budget and soak, `tests/planted_bugs_sharding.rs` its planted bugs.

pub mod mirror;
pub mod recorder;
pub mod run;
pub mod schedule;
pub mod sharding;
pub mod shrink;

use std::ops::Range;

pub use run::{Divergence, Report, run};
pub use schedule::{Schedule, Step};
pub use shrink::{shrink, shrink_steps};

/// Runs allowed when shrinking a failing schedule.
pub const SHRINK_BUDGET: usize = 300;

/// The seeds to run: `KUBEGEN_SIM_SEED=N` gives just `N`; otherwise `default`.
pub fn seeds(default: Range<u64>) -> Range<u64> {
    match std::env::var("KUBEGEN_SIM_SEED")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        Some(seed) => seed..seed.saturating_add(1),
        None => default,
    }
}

/// Runs the schedule of `seed`.
pub fn run_seed(seed: u64) -> Result<Report, Divergence> {
    run(&Schedule::generate(seed))
}

/// A failure as printed: the seed, its schedule, what broke, and the shrunk schedule.
pub fn explain(seed: u64, divergence: &Divergence, shrink_it: bool) -> String {
    let schedule = Schedule::generate(seed);
    let mut text = format!(
        "seed {seed} diverged (replay: KUBEGEN_SIM_SEED={seed})\n{schedule}what broke:\n{divergence}"
    );
    if shrink_it {
        let (min, runs) = shrink(&schedule, SHRINK_BUDGET, |s| run(s).is_err());
        let why = run(&min).err().map(|d| d.to_string()).unwrap_or_default();
        text.push_str(&format!(
            "minimal {min}(shrunk in {runs} runs) which breaks:\n{why}"
        ));
    }
    text
}

/// Runs every seed in `seeds`; panics at the first divergence with [`explain`]'s text
/// (shrunk).
pub fn check_seeds(seeds: Range<u64>) {
    for seed in seeds {
        if let Err(divergence) = run_seed(seed) {
            panic!("{}", explain(seed, &divergence, true));
        }
    }
}
