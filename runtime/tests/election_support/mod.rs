//! What the leader election tests share: every term a candidate led, the check that no two
//! overlap, and a candidate's config recording its terms.
#![allow(dead_code)]

use std::sync::Arc;

use kubegen::leaderelection::{Callbacks, LeaderElectionConfig};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One term as leader: (identity, started, stopped).
pub type Term = (String, Instant, Option<Instant>);

/// When each candidate led.
#[derive(Default, Clone)]
pub struct Terms(pub Arc<Mutex<Vec<Term>>>);

impl Terms {
    /// Who led, in order.
    pub fn leaders(&self) -> Vec<String> {
        self.0.lock().iter().map(|t| t.0.clone()).collect()
    }

    /// Who leads now.
    pub fn leading(&self) -> Option<String> {
        self.0
            .lock()
            .iter()
            .find(|t| t.2.is_none())
            .map(|t| t.0.clone())
    }

    /// When `who` first started leading.
    pub fn started(&self, who: &str) -> Option<Instant> {
        self.0.lock().iter().find(|t| t.0 == who).map(|t| t.1)
    }

    /// `who` starts a term at `at`.
    pub fn start(&self, who: &str, at: Instant) {
        self.0.lock().push((who.to_owned(), at, None));
    }

    /// `who`'s open term ends at `at`.
    pub fn end(&self, who: &str, at: Instant) {
        if let Some(term) = self
            .0
            .lock()
            .iter_mut()
            .find(|t| t.0 == who && t.2.is_none())
        {
            term.2 = Some(at);
        }
    }

    /// A default config for candidate `identity` whose callbacks record its terms here;
    /// `release`: release the Lease when it stops leading.
    pub fn config(&self, identity: &str, release: bool) -> LeaderElectionConfig {
        let (started, stopped, id) = (self.clone(), self.clone(), identity.to_owned());
        LeaderElectionConfig {
            release_on_cancel: release,
            callbacks: Callbacks::new().on_started_leading(move |leading: CancellationToken| {
                started.start(&id, Instant::now());
                let (terms, id) = (stopped.clone(), id.clone());
                tokio::spawn(async move {
                    leading.cancelled().await;
                    terms.end(&id, Instant::now());
                });
            }),
            ..LeaderElectionConfig::default()
        }
    }

    /// No two terms overlap.
    pub fn assert_disjoint(&self) {
        let terms = self.0.lock().clone();
        for (i, a) in terms.iter().enumerate() {
            for b in &terms[i + 1..] {
                let a_end = a.2.unwrap_or_else(Instant::now);
                let b_end = b.2.unwrap_or_else(Instant::now);
                assert!(
                    a_end <= b.1 || b_end <= a.1,
                    "overlapping terms: {a:?} and {b:?}"
                );
            }
        }
    }
}
