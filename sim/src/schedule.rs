//! A schedule: the workload and the faults one seed fixes, as a list of steps the
//! harness performs in order (each followed by a fixed gap of virtual time).

use std::fmt;

use rand::{Rng, SeedableRng, rngs::StdRng};

/// The namespaces the workload writes to.
pub const NAMESPACES: [&str; 3] = ["default", "kube-public", "kube-node-lease"];

/// How many names per type and namespace the workload picks from (few, so that writes
/// collide: updates, deletes and re-creates of the same key).
pub const NAMES: u8 = 6;

/// The object types the workload writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `v1` ConfigMaps (the controller's primaries; their informer uses a `RealFifo`).
    ConfigMap,
    /// `v1` Secrets (the controller's owned objects live here too; their informer uses a
    /// `DeltaFifo` and resyncs).
    Secret,
}

/// One thing the harness does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Creates the object, or updates it if it exists, with `v` = `value`.
    Write {
        /// Which type.
        kind: Kind,
        /// Index into [`NAMESPACES`].
        namespace: usize,
        /// The object is `cm{name}` or `s{name}`.
        name: u8,
        /// Its `v` value.
        value: u32,
    },
    /// Deletes the object (nothing if it does not exist).
    Delete {
        /// Which type.
        kind: Kind,
        /// Index into [`NAMESPACES`].
        namespace: usize,
        /// The object is `cm{name}` or `s{name}`.
        name: u8,
    },
    /// Ends every open watch.
    DropWatches,
    /// Forgets the server's history: resuming a watch from any earlier version is 410.
    Compact,
    /// The next `count` watch requests fail with 500.
    WatchErrors {
        /// How many.
        count: usize,
    },
    /// The next `count` list requests fail with 429 and `Retry-After: 1`.
    ListThrottled {
        /// How many.
        count: usize,
    },
    /// A server restart: every watch ends and the next list and watch fail with 503.
    Restart,
    /// Every open watch goes silent (half-dead) for `millis`.
    StallWatches {
        /// How long.
        millis: u64,
    },
    /// Watch events arrive `millis` late (`None`: on time again).
    DeliveryDelay {
        /// The delay.
        millis: Option<u64>,
    },
    /// The slow handler stops handling for the next `steps` steps (its buffer fills).
    SlowHandler {
        /// For how many steps.
        steps: u8,
    },
    /// Adds a handler to the running ConfigMap informer (it is replayed the cache).
    AddLateHandler,
    /// Lets `millis` of virtual time pass.
    Sleep {
        /// How long.
        millis: u64,
    },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let object = |kind: &Kind, namespace: &usize, name: &u8| {
            let ns = NAMESPACES.get(*namespace).copied().unwrap_or("?");
            match kind {
                Kind::ConfigMap => format!("configmap {ns}/cm{name}"),
                Kind::Secret => format!("secret {ns}/s{name}"),
            }
        };
        match self {
            Step::Write {
                kind,
                namespace,
                name,
                value,
            } => write!(f, "write {} v={value}", object(kind, namespace, name)),
            Step::Delete {
                kind,
                namespace,
                name,
            } => write!(f, "delete {}", object(kind, namespace, name)),
            Step::DropWatches => f.write_str("drop watches"),
            Step::Compact => f.write_str("compact"),
            Step::WatchErrors { count } => write!(f, "next {count} watches fail 500"),
            Step::ListThrottled { count } => write!(f, "next {count} lists fail 429"),
            Step::Restart => f.write_str("restart"),
            Step::StallWatches { millis } => write!(f, "stall watches {millis} ms"),
            Step::DeliveryDelay { millis: Some(ms) } => write!(f, "watch delivery delay {ms} ms"),
            Step::DeliveryDelay { millis: None } => f.write_str("watch delivery on time"),
            Step::SlowHandler { steps } => write!(f, "slow handler for {steps} steps"),
            Step::AddLateHandler => f.write_str("add late handler"),
            Step::Sleep { millis } => write!(f, "sleep {millis} ms"),
        }
    }
}

/// The steps one seed fixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// The seed it was generated from.
    pub seed: u64,
    /// What the harness does, in order.
    pub steps: Vec<Step>,
}

/// Steps per generated schedule.
pub const STEPS: u32 = 70;

impl Schedule {
    /// The schedule of `seed`: [`STEPS`] steps, about half writes and deletes over both
    /// types and three namespaces, the rest faults and pauses.
    pub fn generate(seed: u64) -> Schedule {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut steps = Vec::new();
        for value in 1..=STEPS {
            let namespace = rng.random_range(0..NAMESPACES.len());
            let name = rng.random_range(0..NAMES);
            let step = match rng.random_range(0..100) {
                0..28 => Step::Write {
                    kind: Kind::ConfigMap,
                    namespace,
                    name,
                    value,
                },
                28..40 => Step::Write {
                    kind: Kind::Secret,
                    namespace,
                    name,
                    value,
                },
                40..50 => Step::Delete {
                    kind: Kind::ConfigMap,
                    namespace,
                    name,
                },
                50..56 => Step::Delete {
                    kind: Kind::Secret,
                    namespace,
                    name,
                },
                56..62 => Step::DropWatches,
                62..67 => Step::Compact,
                67..72 => Step::WatchErrors {
                    count: rng.random_range(1..4),
                },
                72..75 => Step::ListThrottled {
                    count: rng.random_range(1..3),
                },
                75..78 => Step::Restart,
                78..81 => Step::StallWatches {
                    millis: rng.random_range(200..4000),
                },
                81..84 => Step::DeliveryDelay {
                    millis: Some(rng.random_range(0..300)).filter(|_| rng.random_bool(0.7)),
                },
                84..88 => Step::SlowHandler {
                    steps: rng.random_range(3..15),
                },
                88..90 => Step::AddLateHandler,
                _ => Step::Sleep {
                    millis: rng.random_range(0..1500),
                },
            };
            steps.push(step);
        }
        Schedule { seed, steps }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "schedule of seed {} ({} steps):",
            self.seed,
            self.steps.len()
        )?;
        for (i, step) in self.steps.iter().enumerate() {
            writeln!(f, "  {i:>3}: {step}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_fixes_its_schedule_and_seeds_differ() {
        assert_eq!(Schedule::generate(7), Schedule::generate(7));
        assert_ne!(Schedule::generate(7).steps, Schedule::generate(8).steps);
        assert_eq!(Schedule::generate(7).steps.len(), 70);
    }
}
