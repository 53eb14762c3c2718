//! Workqueue throughput: add + get + done over 10k distinct keys with 1, 2 and 8 worker
//! tasks, against an unbounded tokio mpsc channel carrying the same keys (the floor).
//!
//! `cargo bench -p kubegen --bench workqueue` (add `-- --quick` for fewer rounds). Prints
//! the median time per round of 10k keys, items per second and the ratio to the channel.
//!
//! Like a controller's queue, each queue (and the channel) is long-lived: workers are
//! spawned once and every round pushes the 10k keys through the same queue, so the figures
//! are steady-state throughput, not allocation warm-up.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kubegen::workqueue::{Queue, RateLimitingQueue};
use tokio::runtime::Runtime;
use tokio::sync::Notify;

const KEYS: usize = 10_000;

fn keys() -> Vec<String> {
    (0..KEYS).map(|i| format!("default/object-{i}")).collect()
}

/// Counts processed items and wakes the producer when a round's target is reached.
#[derive(Default)]
struct Progress {
    processed: AtomicUsize,
    target: AtomicUsize,
    round_done: Notify,
}

impl Progress {
    fn item_done(&self) {
        let n = self.processed.fetch_add(1, Ordering::AcqRel) + 1;
        if n == self.target.load(Ordering::Acquire) {
            self.round_done.notify_one();
        }
    }

    async fn run_round(&self, produce: impl FnOnce()) -> Duration {
        let start = Instant::now();
        let target = self.processed.load(Ordering::Acquire) + KEYS;
        self.target.store(target, Ordering::Release);
        produce();
        while self.processed.load(Ordering::Acquire) < target {
            self.round_done.notified().await;
        }
        start.elapsed()
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The channel floor: one consumer.
fn bench_channel(runtime: &Runtime, rounds: usize) -> Duration {
    let keys = keys();
    runtime.block_on(async {
        let progress = Arc::new(Progress::default());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let consumer = tokio::spawn({
            let progress = Arc::clone(&progress);
            async move {
                while let Some(item) = rx.recv().await {
                    std::hint::black_box(&item);
                    progress.item_done();
                }
            }
        });
        let mut samples = Vec::new();
        for round in 0..=rounds {
            let items = keys.clone();
            let t = progress
                .run_round(|| {
                    for item in items {
                        let _ = tx.send(item);
                    }
                })
                .await;
            if round > 0 {
                samples.push(t); // round 0 warms up
            }
        }
        drop(tx);
        let _ = consumer.await;
        median(samples)
    })
}

/// A queue with `workers` tasks doing get + done.
fn bench_queue(runtime: &Runtime, queue: Queue<String>, workers: usize, rounds: usize) -> Duration {
    let keys = keys();
    runtime.block_on(async {
        let progress = Arc::new(Progress::default());
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (queue, progress) = (queue.clone(), Arc::clone(&progress));
                tokio::spawn(async move {
                    while let Some(item) = queue.get().await {
                        std::hint::black_box(&item);
                        queue.done(&item);
                        progress.item_done();
                    }
                })
            })
            .collect();
        let mut samples = Vec::new();
        for round in 0..=rounds {
            let items = keys.clone();
            let t = progress
                .run_round(|| {
                    for item in items {
                        queue.add(item);
                    }
                })
                .await;
            if round > 0 {
                samples.push(t);
            }
        }
        queue.shut_down();
        for handle in handles {
            let _ = handle.await;
        }
        median(samples)
    })
}

fn print_table(title: &str, floor: Duration, rows: &[(String, Duration)]) {
    let per_sec = |d: Duration| KEYS as f64 / d.as_secs_f64();
    println!("{title}");
    println!(
        "{:<38} {:>11} {:>12} {:>9}",
        "configuration", "round", "items/s", "vs mpsc"
    );
    for (name, t) in rows {
        println!(
            "{:<38} {:>8.3} ms {:>12.0} {:>8.2}x",
            name,
            t.as_secs_f64() * 1e3,
            per_sec(*t),
            per_sec(*t) / per_sec(floor),
        );
    }
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let rounds = if quick { 5 } else { 31 };
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");

    let floor = bench_channel(&multi, rounds);
    let mut rows = vec![("mpsc unbounded, 1 consumer".to_owned(), floor)];
    for workers in [1, 2, 8] {
        let t = bench_queue(&multi, Queue::new(), workers, rounds);
        rows.push((format!("Queue, {workers} worker(s)"), t));
    }
    for workers in [1, 8] {
        let queue: RateLimitingQueue<String> = RateLimitingQueue::default();
        let t = bench_queue(&multi, queue.as_queue().clone(), workers, rounds);
        rows.push((format!("RateLimitingQueue, {workers} worker(s)"), t));
    }

    // The same on a single-threaded runtime: no lock contention, the raw cost per item.
    let single = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let single_floor = bench_channel(&single, rounds);
    let single_rows = vec![
        ("mpsc unbounded, 1 consumer".to_owned(), single_floor),
        (
            "Queue, 1 worker".to_owned(),
            bench_queue(&single, Queue::new(), 1, rounds),
        ),
    ];

    println!();
    print_table(
        &format!(
            "workqueue: add+get+done of {KEYS} distinct keys, median of {rounds} rounds, \
             multi-thread runtime (2 threads)"
        ),
        floor,
        &rows,
    );
    println!();
    print_table(
        "single-thread runtime (no contention)",
        single_floor,
        &single_rows,
    );
}
