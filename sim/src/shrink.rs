//! Shrinking a failing schedule (delta debugging's complement-removal): drop chunks of
//! steps, halving the chunk size whenever no chunk can go, while the schedule still fails;
//! it ends 1-minimal (no single step can be dropped) unless the run budget runs out.

use crate::schedule::Schedule;

/// The smallest schedule found that still fails `fails`, and how many runs that took.
/// At most `budget` runs are made.
pub fn shrink(
    schedule: &Schedule,
    budget: usize,
    mut fails: impl FnMut(&Schedule) -> bool,
) -> (Schedule, usize) {
    let seed = schedule.seed;
    let (steps, runs) = shrink_steps(&schedule.steps, budget, |steps| {
        fails(&Schedule {
            seed,
            steps: steps.to_vec(),
        })
    });
    (Schedule { seed, steps }, runs)
}

/// [`shrink`] over any list of steps (the sharding scenario's schedules shrink the same
/// way): the smallest list found that still fails `fails`, and how many runs that took.
pub fn shrink_steps<T: Clone>(
    steps: &[T],
    budget: usize,
    mut fails: impl FnMut(&[T]) -> bool,
) -> (Vec<T>, usize) {
    let mut current = steps.to_vec();
    let mut runs = 0;
    let mut chunk = current.len().div_ceil(2).max(1);
    loop {
        let mut removed_any = false;
        let mut start = 0;
        while start < current.len() {
            if runs >= budget {
                return (current, runs);
            }
            let end = (start + chunk).min(current.len());
            let mut candidate = current.clone();
            candidate.drain(start..end);
            runs += 1;
            if fails(&candidate) {
                current = candidate;
                removed_any = true;
            } else {
                start = end;
            }
        }
        if chunk == 1 && !removed_any {
            return (current, runs);
        }
        if !removed_any {
            chunk = chunk.div_ceil(2);
        } else {
            chunk = chunk.min(current.len().div_ceil(2)).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Step;

    #[test]
    fn shrinks_to_the_steps_the_failure_needs() {
        let schedule = Schedule::generate(3);
        let mut with_needed = schedule.clone();
        with_needed
            .steps
            .retain(|s| *s != Step::Compact && *s != Step::DropWatches);
        with_needed.steps.insert(10, Step::Compact);
        with_needed.steps.insert(40, Step::DropWatches);
        // Fails while a Compact comes before a DropWatches.
        let mut calls = 0;
        let fails = |s: &Schedule| {
            calls += 1;
            let c = s.steps.iter().position(|x| *x == Step::Compact);
            let d = s.steps.iter().rposition(|x| *x == Step::DropWatches);
            matches!((c, d), (Some(c), Some(d)) if c < d)
        };
        let (min, runs) = shrink(&with_needed, 10_000, fails);
        assert_eq!(min.steps, vec![Step::Compact, Step::DropWatches]);
        assert!(runs < 80, "chunks first: {runs} runs");
        assert_eq!(runs, calls);
    }

    #[test]
    fn the_budget_bounds_the_runs() {
        let (min, runs) = shrink(&Schedule::generate(1), 5, |_| false);
        assert_eq!(runs, 5);
        assert_eq!(min, Schedule::generate(1));
    }
}
