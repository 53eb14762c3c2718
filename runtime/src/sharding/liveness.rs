//! Which members of a ring are alive, as the sharder sees their Leases: leader election's
//! rule (client-go `leaderelection.go`, `observedTime`), applied to every member. A Lease
//! is valid for `leaseDurationSeconds` after the sharder **observed it change** on its own
//! monotonic clock; the holder's `renewTime` is never compared with the local clock, so
//! skew between replicas does not matter. A member stops reconciling when it has not
//! renewed for its renew deadline, which is shorter than the lease duration, so by the time
//! the sharder counts it dead it has stopped.
//!
//! A Lease first seen counts as just changed: a sharder that starts (or takes over) waits
//! a whole lease duration before it declares anyone dead.

use std::{
    collections::{BTreeSet, HashMap},
    time::Duration,
};

use tokio::time::Instant;

/// One member Lease as last observed.
#[derive(Debug, Clone)]
struct Observed {
    holder: String,
    resource_version: String,
    duration: Duration,
    /// When the sharder saw the Lease change (local monotonic clock).
    at: Instant,
}

/// The live members of a ring, from observations of their Leases.
#[derive(Debug, Default)]
pub struct Liveness {
    leases: HashMap<String, Observed>,
}

impl Liveness {
    /// Notes the Lease `name` as read at `now`: held by `holder` (empty: released) for
    /// `duration`, at `resource_version`. Only a changed resourceVersion (a renewal, a
    /// release, a new holder) restarts its clock.
    pub fn observe(
        &mut self,
        name: &str,
        holder: &str,
        duration: Duration,
        resource_version: &str,
        now: Instant,
    ) {
        match self.leases.get_mut(name) {
            Some(seen) if seen.resource_version == resource_version => {}
            Some(seen) => {
                seen.holder = holder.to_owned();
                seen.resource_version = resource_version.to_owned();
                seen.duration = duration;
                seen.at = now;
            }
            None => {
                self.leases.insert(
                    name.to_owned(),
                    Observed {
                        holder: holder.to_owned(),
                        resource_version: resource_version.to_owned(),
                        duration,
                        at: now,
                    },
                );
            }
        }
    }

    /// Forgets the Lease `name` (deleted): its member is gone.
    pub fn forget(&mut self, name: &str) {
        self.leases.remove(name);
    }

    /// The names of the Leases observed.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.leases.keys()
    }

    /// The holders of Leases valid at `now`.
    pub fn live(&self, now: Instant) -> BTreeSet<String> {
        self.leases
            .values()
            .filter(|seen| !seen.holder.is_empty() && self.valid(seen, now))
            .map(|seen| seen.holder.clone())
            .collect()
    }

    /// The next instant a held Lease expires, if none is renewed before (when to look
    /// again).
    pub fn next_expiry(&self, now: Instant) -> Option<Instant> {
        self.leases
            .values()
            .filter(|seen| !seen.holder.is_empty())
            .map(|seen| seen.at + seen.duration)
            .filter(|at| *at > now)
            .min()
    }

    fn valid(&self, seen: &Observed, now: Instant) -> bool {
        #[cfg(feature = "planted-bugs")]
        if crate::planted_bugs::SHARDER_IGNORES_EXPIRED_LEASES
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return true;
        }
        now < seen.at + seen.duration
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Duration = Duration::from_secs(15);

    #[tokio::test(start_paused = true)]
    async fn a_lease_lives_for_its_duration_after_each_observed_change() {
        let mut l = Liveness::default();
        let t0 = Instant::now();
        l.observe("r-a", "a", D, "1", t0);
        l.observe("r-b", "b", D, "1", t0);
        assert_eq!(l.live(t0), BTreeSet::from(["a".into(), "b".into()]));
        // b renews at 10 s; a's resourceVersion never changes again.
        l.observe("r-a", "a", D, "1", t0 + Duration::from_secs(10));
        l.observe("r-b", "b", D, "2", t0 + Duration::from_secs(10));
        assert_eq!(l.next_expiry(t0 + Duration::from_secs(10)), Some(t0 + D));
        assert_eq!(
            l.live(t0 + Duration::from_secs(16)),
            BTreeSet::from(["b".into()])
        );
        assert!(l.live(t0 + Duration::from_secs(26)).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_released_or_deleted_lease_is_dead_at_once() {
        let mut l = Liveness::default();
        let t0 = Instant::now();
        l.observe("r-a", "a", D, "1", t0);
        l.observe("r-b", "b", D, "1", t0);
        l.observe("r-a", "", Duration::from_secs(1), "2", t0);
        l.forget("r-b");
        assert!(l.live(t0).is_empty());
    }
}
