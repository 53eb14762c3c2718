//! The sharding scenario (issue 44): replicas of a sharded controller
//! (`ManagerBuilder::shard_ring`) join, leave, crash and are partitioned from the server
//! under a seed, while a workload writes ConfigMaps; the simulation records every
//! reconcile's start and end per replica and checks that the ring's handover never lets
//! two replicas reconcile one object at once.
//!
//! * [`schedule`]: what a seed fixes — ConfigMap writes (a counter in `v`) and deletes,
//!   joins, clean leaves, crashes, restarts under an old identity, partitions of a replica
//!   or of the sharder's replica (two sharders when it heals), a member Lease that is
//!   never renewed, a shard or drain label edited by hand.
//! * [`net`]: every replica on its own transport over the in-process server, which a
//!   partition cuts for a while (requests fail, watches stall) and a crash for good.
//! * [`replica`]: one incarnation — a ring-mode `Manager` with a ConfigMap controller that
//!   owns a Secret per ConfigMap and records its reconciles in the [`journal`].
//! * [`run`](mod@run): the harness; [`invariants`]: what must hold over the run and at
//!   quiescence.
//!
//! Timings: 2 s leases, a 1.5 s renew deadline, a 200 ms retry period (the sharder's
//! ticker), 100 ms of work per reconcile, each object reconciled again every second. A
//! failing seed prints its schedule and what broke, shrinks, and replays with
//! `KUBEGEN_SIM_SEED=N`; `KUBEGEN_SIM_DUMP=file` writes a run's whole trace (whether it
//! passes or not), and `KUBEGEN_SIM_WIRE_LOG=1` adds every request of every replica to it.
//!
//! # Determinism
//!
//! A seed replays exactly ([`ShardReport::trace`]: every step, membership event and
//! reconcile with its virtual times, and the end state). Besides the first scenario's
//! measures (current-thread runtime, paused clock, 1 ms per response, jitter-free
//! reflectors for the managers' own informers), this needs:
//! * the sharder queueing objects in key order and handling Lease events on a task
//!   (`kubegen::sharding`, fixed for this scenario);
//! * the sharder Lease served on a grid of virtual time ([`net::LeaseGrid`]): candidates
//!   retry after a randomly stretched period (leader election's jitter, drawn from the
//!   thread's RNG), which would decide who takes over and when;
//! * the lists and watches of a cut-off replica hanging instead of failing
//!   ([`net`]): the sharder's own informers back off with the default, jittered
//!   `ReflectorConfig`, which the ring does not let one set;
//! * a request waiting at the grid abandoned when its incarnation stops, crashes or gives
//!   its membership up (seen on the wire: the member Lease's release, or a renew deadline
//!   passing without a renewal, [`net::Membership`]), so a manager's shutdown does not
//!   last until the next tick or not depending on where a candidate's jitter left it;
//! * a link's waiters woken in a fixed order (not through a `tokio::sync::watch`), and a
//!   replica restarted only once its link is up (a first acquire that fails would retry
//!   after a jittered period).
//!
//! # Known gap
//!
//! A shard label moved off a live member by hand (removed, or set to a stranger) bypasses
//! the drain: the sharder assigns the object anew at once, while the member may still
//! reconcile it from a cache that has not seen the edit. Such overlaps are reported
//! ([`ShardReport::after_hand_moves`]) but break a run only under
//! [`Strictness::hand_moves`] (`KUBEGEN_SIM_STRICT=1` for the soak; the ignored test
//! `hand_moved_labels_never_lead_to_two_reconciles_at_once`).

pub mod invariants;
pub mod journal;
pub mod net;
pub mod replica;
pub mod run;
pub mod schedule;

use std::ops::Range;

pub use run::{ShardReport, Strictness, run, run_with};
pub use schedule::{LabelEdit, ShardSchedule, ShardStep};

use crate::{SHRINK_BUDGET, run::Divergence, shrink::shrink_steps};

/// The ring's name.
pub const RING: &str = "sim";
/// The namespace of the ConfigMaps and their Secrets.
pub const NAMESPACE: &str = "default";
/// The namespace of the ring's Leases.
pub const LEASE_NAMESPACE: &str = "kube-system";

/// Runs the sharding schedule of `seed`.
pub fn run_seed(seed: u64) -> Result<ShardReport, Divergence> {
    run(&ShardSchedule::generate(seed))
}

/// Runs the sharding schedule of `seed` with `strictness`.
pub fn run_seed_with(seed: u64, strictness: Strictness) -> Result<ShardReport, Divergence> {
    run_with(&ShardSchedule::generate(seed), strictness)
}

/// The smallest schedule found that still fails `fails` (at most `budget` runs), and how
/// many runs that took.
pub fn shrink(
    schedule: &ShardSchedule,
    budget: usize,
    mut fails: impl FnMut(&ShardSchedule) -> bool,
) -> (ShardSchedule, usize) {
    let seed = schedule.seed;
    let (steps, runs) = shrink_steps(&schedule.steps, budget, |steps| {
        fails(&ShardSchedule {
            seed,
            steps: steps.to_vec(),
        })
    });
    (ShardSchedule { seed, steps }, runs)
}

/// A failure as printed: the seed, its schedule, what broke, and the shrunk schedule.
pub fn explain(seed: u64, divergence: &Divergence, shrink_it: bool) -> String {
    let schedule = ShardSchedule::generate(seed);
    let mut text = format!(
        "sharding seed {seed} diverged (replay: KUBEGEN_SIM_SEED={seed})\n{schedule}what broke:\n{divergence}"
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

/// Runs every sharding seed in `seeds`; panics at the first divergence with [`explain`]'s
/// text (shrunk).
pub fn check_seeds(seeds: Range<u64>) {
    for seed in seeds {
        if let Err(divergence) = run_seed(seed) {
            panic!("{}", explain(seed, &divergence, true));
        }
    }
}
