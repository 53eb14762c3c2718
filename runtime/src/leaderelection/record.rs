//! [`LeaderElectionRecord`]: what a lock stores (client-go's `resourcelock.LeaderElectionRecord`)
//! and its mapping onto a `coordination.k8s.io/v1` Lease's spec.

use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;

/// Who holds a lock, since when, and for how long.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LeaderElectionRecord {
    /// The holder's identity; empty when released.
    pub holder_identity: String,
    /// How long the holder's claim lasts after `renew_time` (whole seconds).
    pub lease_duration_seconds: i32,
    /// When the holder acquired the lock.
    pub acquire_time: Option<Timestamp>,
    /// When the holder last renewed it (the holder's clock: candidates do not trust it,
    /// they time the lease from when they observed a change).
    pub renew_time: Option<Timestamp>,
    /// How many times the lock changed hands.
    pub leader_transitions: i32,
    /// The strategy of a coordinated election (`OldestEmulationVersion`), as the
    /// coordinated leader election controller set it; empty for a plain election.
    pub strategy: String,
    /// The candidate the coordinated leader election controller would rather have lead
    /// (empty: none): a coordinated holder that is not it steps down.
    pub preferred_holder: String,
}

impl LeaderElectionRecord {
    /// The record a Lease's spec holds.
    pub fn from_lease_spec(spec: &LeaseSpec) -> Self {
        Self {
            holder_identity: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or(0),
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            leader_transitions: spec.lease_transitions.unwrap_or(0),
            strategy: spec.strategy.clone().unwrap_or_default(),
            preferred_holder: spec.preferred_holder.clone().unwrap_or_default(),
        }
    }

    /// The Lease spec holding this record (client-go's `LeaderElectionRecordToLeaseSpec`:
    /// an empty strategy or preferred holder is left out).
    pub fn to_lease_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder_identity.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.map(MicroTime),
            renew_time: self.renew_time.map(MicroTime),
            lease_transitions: Some(self.leader_transitions),
            strategy: (!self.strategy.is_empty()).then(|| self.strategy.clone()),
            preferred_holder: (!self.preferred_holder.is_empty())
                .then(|| self.preferred_holder.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_the_round_trip_through_a_lease_spec() {
        let record = LeaderElectionRecord {
            holder_identity: "a".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(Timestamp::UNIX_EPOCH),
            renew_time: Some(Timestamp::UNIX_EPOCH),
            leader_transitions: 3,
            strategy: "OldestEmulationVersion".into(),
            preferred_holder: "b".into(),
        };
        assert_eq!(
            LeaderElectionRecord::from_lease_spec(&record.to_lease_spec()),
            record
        );
        assert_eq!(
            LeaderElectionRecord::from_lease_spec(&LeaseSpec::default()),
            LeaderElectionRecord::default()
        );
    }
}
