//! Shrinking a failing schedule: drop steps one at a time while it still fails, until no
//! single step can go (a 1-minimal schedule, as delta debugging's last phase).

use crate::schedule::Schedule;

/// The smallest schedule found that still fails `fails`, and how many runs that took.
/// At most `budget` runs are made.
pub fn shrink(
    schedule: &Schedule,
    budget: usize,
    mut fails: impl FnMut(&Schedule) -> bool,
) -> (Schedule, usize) {
    let mut current = schedule.clone();
    let mut runs = 0;
    loop {
        let mut removed_any = false;
        let mut i = current.steps.len();
        while i > 0 {
            i -= 1;
            if runs >= budget {
                return (current, runs);
            }
            let mut candidate = current.clone();
            candidate.steps.remove(i);
            runs += 1;
            if fails(&candidate) {
                current = candidate;
                removed_any = true;
            }
        }
        if !removed_any {
            return (current, runs);
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
        let needed = [Step::Compact, Step::DropWatches];
        let mut with_needed = schedule.clone();
        with_needed.steps.insert(10, needed[0].clone());
        with_needed.steps.insert(40, needed[1].clone());
        // Fails while a Compact comes before a DropWatches.
        let fails = |s: &Schedule| {
            let c = s.steps.iter().position(|x| *x == Step::Compact);
            let d = s.steps.iter().rposition(|x| *x == Step::DropWatches);
            matches!((c, d), (Some(c), Some(d)) if c < d)
        };
        let (min, _) = shrink(&with_needed, 10_000, fails);
        assert_eq!(min.steps, needed.to_vec());
    }
}
