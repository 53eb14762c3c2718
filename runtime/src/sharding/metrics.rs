//! The ring's metrics, set by the replica running the sharder at each count:
//! `kubegen_shard_ring_members{ring}`, `kubegen_shard_ring_objects{ring,member}`,
//! `kubegen_shard_ring_unassigned_objects{ring}`, `kubegen_shard_ring_drains_in_flight{ring}`,
//! `kubegen_shard_ring_moves_total{ring}` and `kubegen_shard_ring_sharder{ring}` (1 on the
//! replica that shards).

use std::sync::atomic::AtomicU64;

use prometheus_client::{
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

use super::RingStatus;

type Labels = Vec<(String, String)>;

/// The ring's metric families.
#[derive(Clone, Debug, Default)]
pub struct RingMetrics {
    members: Family<Labels, Gauge>,
    objects: Family<Labels, Gauge>,
    unassigned: Family<Labels, Gauge>,
    drains: Family<Labels, Gauge>,
    moves: Family<Labels, Counter<u64, AtomicU64>>,
    sharder: Family<Labels, Gauge>,
}

impl RingMetrics {
    /// The families, registered in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "kubegen_shard_ring_members",
            "Live members of the shard ring",
            metrics.members.clone(),
        );
        registry.register(
            "kubegen_shard_ring_objects",
            "Objects of the ring's primary kinds assigned to each member",
            metrics.objects.clone(),
        );
        registry.register(
            "kubegen_shard_ring_unassigned_objects",
            "Objects of the ring's primary kinds assigned to no member",
            metrics.unassigned.clone(),
        );
        registry.register(
            "kubegen_shard_ring_drains_in_flight",
            "Objects asked to drain and not yet acknowledged by their member",
            metrics.drains.clone(),
        );
        registry.register(
            "kubegen_shard_ring_moves",
            "Objects moved from one member to another",
            metrics.moves.clone(),
        );
        registry.register(
            "kubegen_shard_ring_sharder",
            "1 while this replica runs the ring's sharder",
            metrics.sharder.clone(),
        );
        metrics
    }

    /// Sets the gauges of `ring` from `status`; `new_moves` more moves happened.
    pub(crate) fn record(&self, ring: &str, status: &RingStatus, new_moves: u64) {
        let ring_label = || vec![("ring".to_owned(), ring.to_owned())];
        self.members
            .get_or_create(&ring_label())
            .set(i64::try_from(status.members.len()).unwrap_or(i64::MAX));
        self.objects.clear();
        for (member, count) in &status.objects {
            let mut labels = ring_label();
            labels.push(("member".to_owned(), member.clone()));
            self.objects
                .get_or_create(&labels)
                .set(i64::try_from(*count).unwrap_or(i64::MAX));
        }
        self.unassigned
            .get_or_create(&ring_label())
            .set(i64::try_from(status.unassigned).unwrap_or(i64::MAX));
        self.drains
            .get_or_create(&ring_label())
            .set(i64::try_from(status.drains_in_flight).unwrap_or(i64::MAX));
        self.moves.get_or_create(&ring_label()).inc_by(new_moves);
        self.sharder
            .get_or_create(&ring_label())
            .set(i64::from(status.sharding));
    }
}
