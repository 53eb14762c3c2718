//! The sharding scenario's schedule: a workload of ConfigMap writes and deletes
//! interleaved with membership events (joins, clean leaves, crashes, restarts, partitions
//! of a replica or of the sharder, a member that never renews) and hand-edited labels, as
//! a list of steps the harness performs in order (each followed by a fixed gap of virtual
//! time).

use std::fmt;

use rand::{Rng, SeedableRng, rngs::StdRng};

/// How many ConfigMap names the workload picks from (`cm0`..): few, so that writes
/// collide and every replica holds several.
pub const NAMES: u8 = 10;

/// At most this many replicas run at once (a `Join` beyond it does nothing).
pub const MAX_RUNNING: usize = 5;

/// At most this many replicas (identities) per run.
pub const MAX_REPLICAS: usize = 8;

/// The longest partition a schedule holds (virtual time).
pub const MAX_PARTITION_MS: u64 = 5000;

/// What a hand edit does to a ConfigMap's ring labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelEdit {
    /// The shard label names a member that does not exist.
    Stranger,
    /// The drain label is added.
    Drain,
    /// The shard and drain labels are removed.
    Unlabel,
}

/// One thing the harness does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardStep {
    /// Creates `cm{name}`, or updates it, with `v` = `value` (the step's counter: every
    /// write of a run has its own value, increasing).
    Write {
        /// The object is `cm{name}`.
        name: u8,
        /// Its `v`.
        value: u32,
    },
    /// Deletes `cm{name}` (nothing if it does not exist); the garbage collector removes
    /// its owned Secret.
    Delete {
        /// The object is `cm{name}`.
        name: u8,
    },
    /// A replica with a new identity joins the ring.
    Join,
    /// The stopped replica `replica` (an index into the replicas that joined, modulo
    /// their number) starts again under its old identity (a new incarnation).
    Restart {
        /// Which replica.
        replica: u8,
    },
    /// The running replica `replica` stops cleanly: its controllers finish, then it
    /// releases its Leases.
    Leave {
        /// Which replica.
        replica: u8,
    },
    /// The running replica `replica` crashes: its requests and reconciles end at once,
    /// nothing is released.
    Crash {
        /// Which replica.
        replica: u8,
    },
    /// The running replica `replica` is cut off from the server for `millis` (its
    /// requests fail, its watches stall); past its renew deadline it stops, and it is
    /// restarted (a new incarnation, same identity) when the partition heals.
    Partition {
        /// Which replica.
        replica: u8,
        /// For how long.
        millis: u64,
    },
    /// The replica holding the sharder Lease is cut off for `millis` (two sharders when it
    /// heals after another took over).
    PartitionSharder {
        /// For how long.
        millis: u64,
    },
    /// A member Lease of the ring is created by hand for a holder that never renews it.
    Ghost,
    /// A ConfigMap's ring labels are edited by hand.
    EditLabel {
        /// The object is `cm{name}`.
        name: u8,
        /// How.
        edit: LabelEdit,
    },
    /// Lets `millis` of virtual time pass.
    Sleep {
        /// How long.
        millis: u64,
    },
}

impl fmt::Display for ShardStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardStep::Write { name, value } => write!(f, "write configmap cm{name} v={value}"),
            ShardStep::Delete { name } => write!(f, "delete configmap cm{name}"),
            ShardStep::Join => f.write_str("a new replica joins"),
            ShardStep::Restart { replica } => write!(f, "replica #{replica} restarts"),
            ShardStep::Leave { replica } => write!(f, "replica #{replica} leaves"),
            ShardStep::Crash { replica } => write!(f, "replica #{replica} crashes"),
            ShardStep::Partition { replica, millis } => {
                write!(f, "replica #{replica} partitioned {millis} ms")
            }
            ShardStep::PartitionSharder { millis } => {
                write!(f, "the sharder's replica partitioned {millis} ms")
            }
            ShardStep::Ghost => f.write_str("a member Lease that is never renewed"),
            ShardStep::EditLabel { name, edit } => {
                let what = match edit {
                    LabelEdit::Stranger => "shard label set to a stranger",
                    LabelEdit::Drain => "drain label added",
                    LabelEdit::Unlabel => "ring labels removed",
                };
                write!(f, "configmap cm{name}: {what} by hand")
            }
            ShardStep::Sleep { millis } => write!(f, "sleep {millis} ms"),
        }
    }
}

/// The steps one seed fixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardSchedule {
    /// The seed it was generated from.
    pub seed: u64,
    /// What the harness does, in order.
    pub steps: Vec<ShardStep>,
}

/// Steps per generated schedule.
pub const STEPS: u32 = 60;

impl ShardSchedule {
    /// The schedule of `seed`: two replicas join, then [`STEPS`] steps, about half
    /// writes and deletes, the rest membership events, label edits and pauses.
    pub fn generate(seed: u64) -> ShardSchedule {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut steps = vec![ShardStep::Join, ShardStep::Join];
        for value in 1..=STEPS {
            let name = rng.random_range(0..NAMES);
            let replica = rng.random_range(0..u8::try_from(MAX_REPLICAS).unwrap_or(8));
            let step = match rng.random_range(0..100) {
                0..36 => ShardStep::Write { name, value },
                36..44 => ShardStep::Delete { name },
                44..53 => ShardStep::Join,
                53..58 => ShardStep::Restart { replica },
                58..62 => ShardStep::Leave { replica },
                62..68 => ShardStep::Crash { replica },
                68..74 => ShardStep::Partition {
                    replica,
                    millis: rng.random_range(200..=MAX_PARTITION_MS),
                },
                74..78 => ShardStep::PartitionSharder {
                    millis: rng.random_range(200..=MAX_PARTITION_MS),
                },
                78..80 => ShardStep::Ghost,
                80..88 => ShardStep::EditLabel {
                    name,
                    edit: match rng.random_range(0..3) {
                        0 => LabelEdit::Stranger,
                        1 => LabelEdit::Drain,
                        _ => LabelEdit::Unlabel,
                    },
                },
                _ => ShardStep::Sleep {
                    millis: rng.random_range(0..2000),
                },
            };
            steps.push(step);
        }
        ShardSchedule { seed, steps }
    }
}

impl fmt::Display for ShardSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "sharding schedule of seed {} ({} steps):",
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
        assert_eq!(ShardSchedule::generate(7), ShardSchedule::generate(7));
        assert_ne!(
            ShardSchedule::generate(7).steps,
            ShardSchedule::generate(8).steps
        );
        assert_eq!(ShardSchedule::generate(7).steps.len(), 62);
    }
}
