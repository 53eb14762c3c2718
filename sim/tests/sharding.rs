//! The sharding scenario's CI budget: 100 seeds (four tests of 25, so nextest spreads them
//! over the cores), each a fresh in-process server and ring of sharded managers under a
//! paused clock. A failing seed panics with its schedule, what broke and a shrunk
//! schedule; `KUBEGEN_SIM_SEED=N` replays just seed N in each test.
//!
//! `soak` (ignored; `hack/soak.sh --sharding [N]`) runs `KUBEGEN_SIM_SEEDS` seeds
//! (default 1000) from `KUBEGEN_SIM_FIRST` (default 0), each twice (a seed that does not
//! replay exactly counts as a divergence), and prints `schedules: N, divergences: D` and
//! the seeds whose reconciles overlapped right after a hand-moved label (a divergence with
//! `KUBEGEN_SIM_STRICT=1`);
//! `KUBEGEN_SIM_VERBOSE=1` prints every seed's outcome, and `KUBEGEN_SIM_TRACE_DIR=dir`
//! writes both traces of a seed that did not replay to `dir/<seed>-{a,b}.txt`.

use kubegen_sim::{
    seeds,
    sharding::{ShardSchedule, Strictness, check_seeds, explain, run, run_seed_with},
};

#[test]
fn sharding_seeds_0_to_24_hold() {
    check_seeds(seeds(0..25));
}

#[test]
fn sharding_seeds_25_to_49_hold() {
    check_seeds(seeds(25..50));
}

#[test]
fn sharding_seeds_50_to_74_hold() {
    check_seeds(seeds(50..75));
}

#[test]
fn sharding_seeds_75_to_99_hold() {
    check_seeds(seeds(75..100));
}

/// A seed replays exactly: the same steps, membership events and reconciles (which
/// incarnation, which object and value, from when to when in virtual time), the same end
/// state.
#[test]
fn a_sharding_seed_replays_identically() {
    for seed in seeds(0..20) {
        let schedule = ShardSchedule::generate(seed);
        let first = run(&schedule).expect("the seed holds");
        let second = run(&schedule).expect("the seed holds again");
        assert!(first.reconciles > 0 && first.incarnations >= 2, "{first}");
        if let Some(difference) = first.replay_difference(&second) {
            panic!("seed {seed} replayed differently: {difference}");
        }
    }
}

/// A shard label moved off a live member by hand bypasses the drain: the sharder assigns
/// the object anew at once (rules 2 and 3), while the member it was taken from may still
/// reconcile it from a cache that has not seen the edit (it is cut off, or a reconcile is
/// in flight while a drain was pending). Seed 42 shows it (the sharder's replica changed
/// right at the edit, so no term remembered the holder). Ignored until the ring gives a
/// hand-moved object back to its last holder first; then this holds and `Strictness`'s
/// default can turn strict.
#[test]
#[ignore = "known gap: an object whose shard label is moved off a live member by hand"]
fn hand_moved_labels_never_lead_to_two_reconciles_at_once() {
    for seed in seeds(0..100) {
        if let Err(divergence) = run_seed_with(seed, Strictness { hand_moves: true }) {
            panic!("{}", explain(seed, &divergence, false));
        }
    }
}

/// The seeds the first 1,000-seed soak found diverging (an object reconciled by two
/// replicas at once): a member whose renewal missed its deadline released its Lease right
/// away, so the sharder moved its objects at once while the member's reconcile of one was
/// still running. The elector no longer releases a lease it stops holding on its own.
#[test]
fn seeds_the_first_soak_found_hold() {
    for seed in [308, 861, 962] {
        if let Err(divergence) = run_seed_with(seed, Strictness::default()) {
            panic!("{}", explain(seed, &divergence, false));
        }
    }
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "soak: hack/soak.sh --sharding [N]"]
fn sharding_soak() {
    let count = env("KUBEGEN_SIM_SEEDS", 1000);
    let first = env("KUBEGEN_SIM_FIRST", 0);
    let strictness = Strictness {
        hand_moves: std::env::var_os("KUBEGEN_SIM_STRICT").is_some(),
    };
    let started = std::time::Instant::now();
    let mut divergences = 0u64;
    let mut after_hand_moves = Vec::new();
    for seed in first..first + count {
        let outcome = run_seed_with(seed, strictness);
        if std::env::var_os("KUBEGEN_SIM_VERBOSE").is_some() {
            match &outcome {
                Ok(report) => eprintln!("seed {seed}: {report}"),
                Err(d) => eprintln!("seed {seed}: diverged\n{d}"),
            }
        }
        match outcome {
            Err(d) => {
                divergences += 1;
                eprintln!("{}", explain(seed, &d, divergences <= 3));
            }
            Ok(report) => {
                if !report.after_hand_moves.is_empty() {
                    after_hand_moves.push(seed);
                }
                // Every seed is run twice: a seed that does not replay exactly cannot be
                // debugged from its number.
                let replay = run_seed_with(seed, strictness);
                let difference = match &replay {
                    Ok(again) => report.replay_difference(again),
                    Err(d) => Some(format!("the replay diverged:\n{d}")),
                };
                if let Some(difference) = difference {
                    if let (Some(dir), Ok(again)) =
                        (std::env::var_os("KUBEGEN_SIM_TRACE_DIR"), &replay)
                    {
                        let dir = std::path::PathBuf::from(dir);
                        let _ = std::fs::write(
                            dir.join(format!("{seed}-a.txt")),
                            report.trace.join("\n"),
                        );
                        let _ = std::fs::write(
                            dir.join(format!("{seed}-b.txt")),
                            again.trace.join("\n"),
                        );
                    }
                    divergences += 1;
                    eprintln!("sharding seed {seed} did not replay identically: {difference}");
                }
            }
        }
    }
    println!(
        "schedules: {count}, divergences: {divergences}, overlaps after hand moves in {} ({after_hand_moves:?}) ({:.1} s, sharding seeds {first}..{})",
        after_hand_moves.len(),
        started.elapsed().as_secs_f64(),
        first + count
    );
    assert_eq!(divergences, 0, "schedules diverged");
}
