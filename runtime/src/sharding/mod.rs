//! Sharded controllers: the objects of one controller spread over several replicas, each
//! caching and reconciling only its share, on Kubernetes' own primitives — Leases for
//! membership, labels for assignment, label-selected watches for the caches (the design
//! of kubernetes-controller-sharding; Argo CD and Flux shard the same way by hand).
//!
//! * **Membership** ([`ShardRing::member`]): every replica holds its own Lease
//!   (`<ring>-<identity>`, labelled `shard.kubegen.io/ring: <ring>`) with leader election's
//!   acquire / renew / release: a replica is a member while it renews; one that cannot renew
//!   within its renew deadline stops reconciling; a clean stop releases the Lease.
//! * **Assignment** ([`Sharder`], on the replica elected on `<ring>-sharder`): each object
//!   of a primary kind goes to a live member by rendezvous hashing of its key
//!   ([`rendezvous`]), written as `shard.kubegen.io/<ring>: <member>`; owned objects follow
//!   their controller owner. Each replica's informers list and watch with
//!   `shard.kubegen.io/<ring>=<identity>` ([`ShardRing::member_tweak`]), so it caches only
//!   its share.
//! * **Handover** (the drain protocol below), so that no object is ever reconciled by two
//!   replicas at once.
//!
//! # The handover protocol, per object
//!
//! 1. **Unassigned** (new, or handed back). The sharder labels it for its rendezvous pick
//!    among the live members (rule 2 of [`decision::primary`]).
//! 2. **Assigned to a live member M**, the pick. M's informer sees it (the label matches M's
//!    selector); M reconciles it whenever it changes.
//! 3. **Membership changes; the pick is now D ≠ M.** The sharder does not relabel: it sets
//!    `drain.shard.kubegen.io/<ring>: "true"` (rule 6).
//! 4. **M drains.** The drain label reaches M's informer (it passes every predicate) and
//!    queues the object. M's work queue never hands one key to two workers, so the worker
//!    that takes it runs after any reconcile of it in flight has returned; instead of
//!    reconciling, it removes the shard and drain labels (a merge patch guarded by the
//!    resourceVersion it saw). The object leaves M's cache (the watch sends DELETED: it no
//!    longer matches M's selector); no reconcile of it starts on M again.
//! 5. **Unassigned again**: back to 1, now for D. D reconciles it once its informer sees it.
//! 6. **M dies** (crash or partition): M's Lease stops changing. M itself stopped
//!    reconciling at its renew deadline; the sharder declares M dead a lease duration after
//!    it last saw M's Lease change (renew deadline < lease duration), and relabels M's
//!    objects at once, without a drain (rule 3).
//!
//! Every sharder write carries the resourceVersion it was decided on, so a decision made on
//! a stale cache (a lagging informer, two sharders after a partition heals) fails with 409
//! Conflict and is made again on the fresh object; a label edited by hand is just another
//! state the rules repair. A controller without a ring behaves exactly as before.
//!
//! The [`Manager`](crate::manager::Manager) wires all of it with
//! [`ManagerBuilder::shard_ring`](crate::manager::ManagerBuilder::shard_ring).

pub mod decision;
mod kinds;
mod labels;
pub mod liveness;
mod metrics;
pub mod rendezvous;
mod ring;
mod sharder;
mod status;
mod view;

pub use labels::{
    DRAIN_LABEL_PREFIX, RING_LABEL, RingLabels, SHARD_LABEL_PREFIX, member_lease_name,
};
pub use metrics::RingMetrics;
pub use ring::{ShardRing, ShardRingBuilder};
pub use sharder::Sharder;
pub use status::RingStatus;
