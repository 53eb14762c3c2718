//! The fault simulation's CI budget: 200 seeds (four tests of 50, so nextest spreads them
//! over the cores), each a fresh in-process server, informers, handlers and controller
//! under a paused clock. A failing seed panics with its schedule, what broke and a shrunk
//! schedule; `KUBEGEN_SIM_SEED=N` replays just seed N in each test.
//!
//! `soak` (ignored; `hack/soak.sh [N]`) runs `KUBEGEN_SIM_SEEDS` seeds (default 1000) from
//! `KUBEGEN_SIM_FIRST` (default 0) and prints `schedules: N, divergences: D`.

use kubegen_sim::{Schedule, check_seeds, explain, run, run_seed, seeds};

#[test]
fn seeds_0_to_49_converge() {
    check_seeds(seeds(0..50));
}

#[test]
fn seeds_50_to_99_converge() {
    check_seeds(seeds(50..100));
}

#[test]
fn seeds_100_to_149_converge() {
    check_seeds(seeds(100..150));
}

#[test]
fn seeds_150_to_199_converge() {
    check_seeds(seeds(150..200));
}

/// A seed replays: the same schedule, and the same end state of the workload's objects.
#[test]
fn a_seed_replays_identically() {
    let schedule = Schedule::generate(11);
    assert_eq!(schedule, Schedule::generate(11));
    let first = run(&schedule).expect("seed 11 converges");
    let second = run(&schedule).expect("seed 11 converges again");
    assert_eq!(first.configmaps, second.configmaps);
    assert_eq!(first.secrets, second.secrets);
    assert!(!first.configmaps.is_empty() && first.tombstones + first.events > 0);
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "soak: hack/soak.sh [N]"]
fn soak() {
    let count = env("KUBEGEN_SIM_SEEDS", 1000);
    let first = env("KUBEGEN_SIM_FIRST", 0);
    let started = std::time::Instant::now();
    let mut divergences = 0u64;
    for seed in first..first + count {
        let outcome = run_seed(seed);
        if std::env::var_os("KUBEGEN_SIM_VERBOSE").is_some() {
            eprintln!("seed {seed}: {outcome:?}");
        }
        if let Err(d) = outcome {
            divergences += 1;
            eprintln!("{}", explain(seed, &d, divergences <= 3));
        }
    }
    println!(
        "schedules: {count}, divergences: {divergences} ({:.1} s, seeds {first}..{})",
        started.elapsed().as_secs_f64(),
        first + count
    );
    assert_eq!(divergences, 0, "schedules diverged");
}
