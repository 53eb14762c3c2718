//! Stress test: 8 workers, 10k keys, random re-adds (plain and delayed) while items are being
//! processed. Detects any key processed by two workers at once and any lost add.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use kubegen::workqueue::RateLimitingQueue;
use parking_lot::RwLock;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const KEYS: usize = 10_000;
const WORKERS: usize = 8;

struct Tracker {
    /// Set before every add; cleared when a worker gets the key. A key still pending after
    /// the queue drained is a lost add.
    pending: Vec<AtomicBool>,
    /// Set while a worker processes the key.
    busy: Vec<AtomicBool>,
    processed: Vec<AtomicU32>,
    concurrent: AtomicUsize,
    /// Closed (true) once the test stops re-adding; workers re-add under the read lock so
    /// no re-add can race with shutdown.
    readds_closed: RwLock<bool>,
}

impl Tracker {
    fn new() -> Self {
        Self {
            pending: (0..KEYS).map(|_| AtomicBool::new(false)).collect(),
            busy: (0..KEYS).map(|_| AtomicBool::new(false)).collect(),
            processed: (0..KEYS).map(|_| AtomicU32::new(0)).collect(),
            concurrent: AtomicUsize::new(0),
            readds_closed: RwLock::new(false),
        }
    }
}

async fn worker(queue: RateLimitingQueue<u32>, tracker: Arc<Tracker>, seed: u64) -> usize {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut handled = 0;
    while let Some(key) = queue.get().await {
        let k = key as usize;
        tracker.pending[k].store(false, SeqCst);
        if tracker.busy[k].swap(true, SeqCst) {
            tracker.concurrent.fetch_add(1, SeqCst);
        }
        tracker.processed[k].fetch_add(1, SeqCst);
        if rng.random_bool(0.2) {
            let closed = tracker.readds_closed.read();
            if !*closed {
                tracker.pending[k].store(true, SeqCst);
                if rng.random_bool(0.5) {
                    queue.add(key);
                } else {
                    queue.add_after(key, Duration::from_micros(rng.random_range(1..500)));
                }
            }
        }
        if rng.random_bool(0.5) {
            tokio::task::yield_now().await;
        }
        tracker.busy[k].store(false, SeqCst);
        queue.done(&key);
        handled += 1;
    }
    handled
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_never_share_a_key_and_lose_no_add() {
    let queue: RateLimitingQueue<u32> = RateLimitingQueue::default();
    let tracker = Arc::new(Tracker::new());

    let workers: Vec<_> = (0..WORKERS)
        .map(|i| tokio::spawn(worker(queue.clone(), Arc::clone(&tracker), i as u64)))
        .collect();

    // One adder walks every key in order; another re-adds random keys concurrently.
    let ordered = tokio::spawn({
        let (queue, tracker) = (queue.clone(), Arc::clone(&tracker));
        async move {
            for key in 0..KEYS as u32 {
                tracker.pending[key as usize].store(true, SeqCst);
                queue.add(key);
                if key % 64 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }
    });
    let random = tokio::spawn({
        let (queue, tracker) = (queue.clone(), Arc::clone(&tracker));
        async move {
            let mut rng = StdRng::seed_from_u64(99);
            for i in 0..2 * KEYS {
                let key = rng.random_range(0..KEYS as u32);
                tracker.pending[key as usize].store(true, SeqCst);
                queue.add(key);
                if i % 64 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }
    });
    ordered.await.unwrap();
    random.await.unwrap();

    *tracker.readds_closed.write() = true;
    // Let the delayed re-adds land before shutting down (shutdown drops waiting items).
    tokio::time::timeout(Duration::from_secs(60), async {
        while queue.waiting_len() > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("delayed re-adds never became ready");
    let drained = tokio::time::timeout(Duration::from_secs(20), queue.shut_down_with_drain()).await;
    assert_eq!(
        tracker.concurrent.load(SeqCst),
        0,
        "a key was processed concurrently"
    );
    drained.expect("drain did not finish");

    let mut handled = 0;
    for worker in workers {
        handled += worker.await.unwrap();
    }

    let lost: Vec<usize> = (0..KEYS)
        .filter(|&k| tracker.pending[k].load(SeqCst))
        .collect();
    assert!(lost.is_empty(), "adds never processed for keys {lost:?}");
    let never: Vec<usize> = (0..KEYS)
        .filter(|&k| tracker.processed[k].load(SeqCst) == 0)
        .collect();
    assert!(never.is_empty(), "keys never processed: {never:?}");
    assert!(handled >= KEYS);
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.get().await, None);
}
