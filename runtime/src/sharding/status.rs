//! [`RingStatus`]: the ring as the replica running the sharder last counted it (what
//! `/readyz` and the `kubegen_shard_ring_*` metrics report).

use std::collections::BTreeMap;

/// The ring as the sharder sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RingStatus {
    /// Whether this replica runs the ring's sharder now.
    pub sharding: bool,
    /// The live members (valid Leases), by identity.
    pub members: Vec<String>,
    /// Objects of the primary kinds per assigned member (dead members included, until
    /// their objects move).
    pub objects: BTreeMap<String, usize>,
    /// Objects of the primary kinds assigned to nobody.
    pub unassigned: usize,
    /// Objects asked to drain and not yet acknowledged.
    pub drains_in_flight: usize,
    /// Objects moved from one member to another since this replica started sharding.
    pub moves: u64,
}
