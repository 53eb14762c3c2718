//! Workqueue throughput: add + get + done over 10k distinct keys with 1, 2 and 8 worker
//! tasks, against an unbounded tokio mpsc channel carrying the same keys (the floor).
//!
//! `cargo bench -p kubegen --bench workqueue` (add `-- --quick` for fewer rounds). Prints
//! the median time per round, items per second and the ratio to the channel.

use std::time::{Duration, Instant};

use kubegen::workqueue::{Queue, RateLimitingQueue};

const KEYS: usize = 10_000;

fn keys() -> Vec<String> {
    (0..KEYS).map(|i| format!("default/object-{i}")).collect()
}

/// One round through an unbounded channel with a single consumer.
async fn channel_round(items: Vec<String>) -> Duration {
    let start = Instant::now();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let consumer = tokio::spawn(async move {
        let mut n = 0usize;
        while let Some(item) = rx.recv().await {
            std::hint::black_box(&item);
            n += 1;
        }
        n
    });
    for item in items {
        let _ = tx.send(item);
    }
    drop(tx);
    let n = consumer.await.unwrap_or(0);
    assert_eq!(n, KEYS);
    start.elapsed()
}

/// One round through a queue: `workers` tasks get + done until shutdown.
async fn queue_round(queue: Queue<String>, workers: usize, items: Vec<String>) -> Duration {
    let start = Instant::now();
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let queue = queue.clone();
            tokio::spawn(async move {
                let mut n = 0usize;
                while let Some(item) = queue.get().await {
                    std::hint::black_box(&item);
                    queue.done(&item);
                    n += 1;
                }
                n
            })
        })
        .collect();
    for item in items {
        queue.add(item);
    }
    queue.shut_down();
    let mut n = 0;
    for handle in handles {
        n += handle.await.unwrap_or(0);
    }
    assert_eq!(n, KEYS);
    start.elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let rounds = if quick { 5 } else { 30 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let keys = keys();

    let measure = |f: &dyn Fn(Vec<String>) -> Duration| {
        // One warm-up round, then the median of `rounds`.
        f(keys.clone());
        median((0..rounds).map(|_| f(keys.clone())).collect())
    };

    let floor = measure(&|items| runtime.block_on(channel_round(items)));
    let mut rows = vec![("mpsc unbounded, 1 consumer".to_owned(), floor)];
    for workers in [1, 2, 8] {
        let t = measure(&|items| runtime.block_on(queue_round(Queue::new(), workers, items)));
        rows.push((format!("Queue, {workers} worker(s)"), t));
    }
    for workers in [1, 8] {
        let t = measure(&|items| {
            runtime.block_on(async {
                let queue: RateLimitingQueue<String> = RateLimitingQueue::default();
                queue_round(queue.as_queue().clone(), workers, items).await
            })
        });
        rows.push((format!("RateLimitingQueue, {workers} worker(s)"), t));
    }

    println!();
    println!(
        "workqueue: add+get+done of {KEYS} distinct keys, median of {rounds} rounds, \
         2 runtime threads"
    );
    println!(
        "{:<36} {:>12} {:>14} {:>10}",
        "configuration", "round", "items/s", "vs mpsc"
    );
    let per_sec = |d: Duration| KEYS as f64 / d.as_secs_f64();
    for (name, t) in &rows {
        println!(
            "{:<36} {:>9.3} ms {:>14.0} {:>9.2}x",
            name,
            t.as_secs_f64() * 1e3,
            per_sec(*t),
            per_sec(*t) / per_sec(floor),
        );
    }
}
