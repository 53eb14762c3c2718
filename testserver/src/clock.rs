//! The server's clock and its source of names: every timestamp the server writes
//! (`creationTimestamp`, `deletionTimestamp`, a managed-fields entry's `time`, a pod's
//! `startTime`, a condition's `lastTransitionTime`) and every delay its controllers wait
//! run on one clock, tokio's.
//!
//! Wall time is anchored once per process (the wall clock and tokio's instant read
//! together); after that, "now" is the anchor plus the tokio time elapsed since. With
//! tokio's clock running normally that is the wall clock. With it paused
//! (`tokio::time::pause`, `#[tokio::test(start_paused = true)]`, or
//! `TestServer::builder().paused_clock()`), time moves only when the test advances it, or
//! when every task is idle and tokio jumps to the next timer: a CronJob ten minutes out or a
//! Deployment's progress deadline passes in milliseconds, and timestamps agree with the
//! delays the controllers waited.
//!
//! Names are the other source of difference between two runs: generated name suffixes and
//! uids are random unless the engine is seeded ([`Entropy::seeded`]), so that two runs
//! with the same inputs write the same objects.

use std::sync::OnceLock;

use parking_lot::Mutex;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// The wall time and the instant that were read together when the clock was first used.
static ANCHOR: OnceLock<(jiff::Timestamp, std::time::Instant)> = OnceLock::new();

fn anchor() -> (jiff::Timestamp, std::time::Instant) {
    *ANCHOR.get_or_init(|| (jiff::Timestamp::now(), std::time::Instant::now()))
}

/// Reads the anchor, so that later readings (including a paused runtime's, which starts at
/// the instant it was paused) are measured from a point before them.
pub(crate) fn init() {
    anchor();
}

/// The server's now.
pub(crate) fn now() -> jiff::Timestamp {
    let (wall, at) = anchor();
    let elapsed = tokio::time::Instant::now()
        .into_std()
        .saturating_duration_since(at);
    wall.checked_add(elapsed).unwrap_or(wall)
}

/// Now as `metav1.Time` writes it: RFC 3339, second precision, UTC.
pub(crate) fn now_rfc3339() -> String {
    rfc3339(now())
}

/// `t` as `metav1.Time` writes it.
pub(crate) fn rfc3339(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Where generated names and uids come from: the thread's random generator, or a
/// generator seeded once so that a run can be replayed.
#[derive(Debug, Default)]
pub(crate) struct Entropy {
    seeded: Option<Mutex<StdRng>>,
}

/// The characters kube-apiserver's `generateName` suffixes are made of
/// (`k8s.io/apimachinery/pkg/util/rand.SafeEncodeString`'s alphabet).
pub(crate) const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

impl Entropy {
    /// Names and uids from a generator seeded with `seed`.
    pub(crate) fn seeded(seed: u64) -> Self {
        Entropy {
            seeded: Some(Mutex::new(StdRng::seed_from_u64(seed))),
        }
    }

    fn fill(&self, bytes: &mut [u8]) {
        match &self.seeded {
            Some(rng) => rng.lock().fill(bytes),
            None => rand::rng().fill(bytes),
        }
    }

    /// A fresh uid (a version 4 UUID).
    pub(crate) fn uid(&self) -> String {
        let mut bytes = [0u8; 16];
        self.fill(&mut bytes);
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }

    /// The five random characters kube-apiserver appends to `generateName`.
    pub(crate) fn name_suffix(&self) -> String {
        let mut bytes = [0u8; 5];
        self.fill(&mut bytes);
        bytes
            .iter()
            .map(|b| SUFFIX_ALPHABET[usize::from(*b) % SUFFIX_ALPHABET.len()] as char)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_paused_clock_moves_only_when_tokio_time_moves() {
        init();
        let before = now();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            now(),
            before,
            "wall time passing does not move a paused clock"
        );
        tokio::time::sleep(Duration::from_secs(600)).await;
        // The timer wheel rounds to the millisecond.
        let moved = now().duration_since(before).as_millis();
        assert!((599_990..=600_010).contains(&moved), "{moved} ms");
    }

    #[test]
    fn seeded_entropy_replays_and_random_does_not() {
        let (a, b) = (Entropy::seeded(7), Entropy::seeded(7));
        assert_eq!(a.uid(), b.uid());
        assert_eq!(a.name_suffix(), b.name_suffix());
        let random = Entropy::default();
        assert_ne!(random.uid(), random.uid());
        let suffix = random.name_suffix();
        assert_eq!(suffix.len(), 5);
        assert!(crate::validation::is_dns1123_label(&suffix));
        assert!(uuid::Uuid::parse_str(&a.uid()).is_ok());
    }
}
