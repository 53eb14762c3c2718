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
//! `KUBEGEN_SIM_SEED=N`.

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
