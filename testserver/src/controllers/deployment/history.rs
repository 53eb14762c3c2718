//! Revision history cleanup (kubernetes `pkg/controller/deployment/sync.go`
//! `cleanupDeployment`): a Deployment keeps at most `revisionHistoryLimit` (default 10)
//! old ReplicaSets for `kubectl rollout undo`; beyond that the ones with the lowest
//! revisions go, but only those fully scaled down (0 `spec.replicas`, 0 `status.replicas`,
//! their status describing their current generation) and not already being deleted.

use k8s_openapi::api::apps::v1::ReplicaSet;

use super::replicasets as rs;

/// Orders ReplicaSets by revision, then by creation (`ReplicaSetsByRevision`); a revision
/// that does not parse counts as 0.
fn by_revision(a: &ReplicaSet, b: &ReplicaSet) -> std::cmp::Ordering {
    let revision = |r: &ReplicaSet| rs::revision(r).unwrap_or(0);
    revision(a)
        .cmp(&revision(b))
        .then_with(|| rs::by_creation(a, b))
}

/// Whether a ReplicaSet may be deleted: nothing left to run, nothing running, observed.
fn drained(r: &ReplicaSet) -> bool {
    let generation = r.metadata.generation.unwrap_or(0);
    let observed = r
        .status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .unwrap_or(0);
    rs::spec_replicas(r) == 0 && rs::status_replicas(r) == 0 && generation <= observed
}

/// The old ReplicaSets to delete so that at most `limit` are kept: indexes into `old`,
/// lowest revision first.
pub(crate) fn to_delete(old: &[&ReplicaSet], limit: i32) -> Vec<usize> {
    let mut alive: Vec<usize> = (0..old.len())
        .filter(|&i| old[i].metadata.deletion_timestamp.is_none())
        .collect();
    let limit = usize::try_from(limit.max(0)).unwrap_or(0);
    let Some(excess) = alive.len().checked_sub(limit).filter(|&n| n > 0) else {
        return Vec::new();
    };
    alive.sort_by(|&a, &b| by_revision(old[a], old[b]));
    alive
        .into_iter()
        .take(excess)
        .filter(|&i| drained(old[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::{
        api::apps::v1::{ReplicaSetSpec, ReplicaSetStatus},
        apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
    };

    use super::*;
    use crate::controllers::compat;

    fn old(revision: &str, spec: i32, status: i32) -> ReplicaSet {
        ReplicaSet {
            metadata: ObjectMeta {
                name: Some(format!("rs-{revision}")),
                generation: Some(1),
                annotations: Some(BTreeMap::from([(
                    rs::REVISION.to_owned(),
                    revision.to_owned(),
                )])),
                ..ObjectMeta::default()
            },
            spec: compat::field(ReplicaSetSpec {
                replicas: Some(spec),
                ..ReplicaSetSpec::default()
            }),
            status: Some(ReplicaSetStatus {
                replicas: status,
                observed_generation: Some(1),
                ..ReplicaSetStatus::default()
            }),
        }
    }

    #[test]
    fn the_lowest_revisions_beyond_the_limit_go() {
        let sets = [
            old("3", 0, 0),
            old("1", 0, 0),
            old("2", 0, 0),
            old("4", 0, 0),
        ];
        let refs: Vec<&ReplicaSet> = sets.iter().collect();
        assert_eq!(to_delete(&refs, 2), vec![1, 2]);
        assert!(to_delete(&refs, 4).is_empty());
        assert_eq!(to_delete(&refs, 0).len(), 4);
        assert_eq!(to_delete(&refs, -5).len(), 4);
    }

    #[test]
    fn replica_sets_with_pods_or_unobserved_or_deleting_are_kept() {
        let mut unobserved = old("2", 0, 0);
        unobserved.metadata.generation = Some(2);
        let mut deleting = old("0", 0, 0);
        deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        let sets = [
            old("1", 0, 1),
            unobserved,
            old("3", 1, 0),
            deleting,
            old("4", 0, 0),
        ];
        let refs: Vec<&ReplicaSet> = sets.iter().collect();
        // Four alive, limit 1: the three lowest revisions are candidates; none is drained.
        assert!(to_delete(&refs, 1).is_empty());
        assert_eq!(to_delete(&refs, 0), vec![4]);
    }
}
