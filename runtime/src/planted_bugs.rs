//! Known bugs, planted on purpose, for the fault simulation (`sim/`, crate `kubegen-sim`)
//! to prove that its invariants catch them. Compiled only with the test-only
//! `planted-bugs` feature; every switch is off until a test turns it on (features unify
//! across a workspace build, so being compiled in must change nothing). Each site checks
//! its switch with one relaxed load.

use std::sync::atomic::AtomicBool;

/// A relist does not record the list's resourceVersion: the reflector watches on from the
/// version it had before the relist, so the watch replays changes the list already
/// contained (client-go's reflector sets `lastSyncResourceVersion` from every list).
pub static RELIST_KEEPS_STALE_RESOURCE_VERSION: AtomicBool = AtomicBool::new(false);

/// The [`DeltaFifo`](crate::cache::DeltaFifo)'s `Replace` drops the `Deleted`
/// (`DeletedFinalStateUnknown`) it owes after its `Replaced`/`Sync` deltas for every known
/// key the list lacks (client-go's `DeltaFIFO.Replace` queues one for each).
pub static REPLACE_DROPS_DELETIONS: AtomicBool = AtomicBool::new(false);

/// A handler's buffer (the processor listener) drops a notification whenever
/// [`LOAD`] or more wait behind it (client-go's `processorListener` buffers without
/// bound and never drops).
pub static LISTENER_DROPS_UNDER_LOAD: AtomicBool = AtomicBool::new(false);

/// The backlog at which [`LISTENER_DROPS_UNDER_LOAD`] drops.
pub const LOAD: usize = 4;

/// Deleting an object from the indexed store leaves its key in every index (client-go's
/// `threadSafeMap.Delete` calls `deleteKeyFromIndex` for each index).
pub static INDEX_KEEPS_DELETED_KEYS: AtomicBool = AtomicBool::new(false);

/// The [`ConsistencyStore`](crate::controller::ConsistencyStore) forgets the controller's
/// own writes: a reconcile or cached read right after a write acts on whatever the cache
/// holds, older than the write (kube-controller-manager's `ConsistencyStore`, KEP-5647,
/// waits until the informer has seen it).
pub static CONSISTENCY_FORGETS_WRITES: AtomicBool = AtomicBool::new(false);

/// The sharder counts a member alive as long as its Lease names a holder, however long
/// ago it was renewed: a crashed member's objects are never reassigned (client-go's
/// leader election, whose rule the ring follows, expires a Lease `leaseDurationSeconds`
/// after it last changed).
pub static SHARDER_IGNORES_EXPIRED_LEASES: AtomicBool = AtomicBool::new(false);

/// The sharder moves an object from one live member to another without asking the holder
/// to drain it first: both may reconcile it at once (the ring's handover protocol drains
/// first).
pub static HANDOVER_WITHOUT_DRAIN: AtomicBool = AtomicBool::new(false);
