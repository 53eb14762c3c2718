//! Workqueue throughput: add + get + done over 10k distinct keys with 1, 2 and 8 worker
//! tasks, against an unbounded tokio mpsc channel carrying the same keys (the floor).
//!
//! `cargo bench -p kubegen --bench workqueue` (add `-- --quick` for fewer rounds). Prints,
//! per configuration, the median time per round of 10k keys, items per second and the
//! median ratio to the channel.
//!
//! Like a controller's queue, each queue (and the channel) is long-lived: workers are
//! spawned once and every round pushes the 10k keys through the same queue, so the figures
//! are steady-state throughput, not allocation warm-up.
//!
//! The machine may be busy, so the channel and the queue are interleaved: every queue round
//! runs next to a channel round (the two take turns going first), and the ratio is taken
//! within that pair. The reported
//! ratio is the median of the per-pair ratios, so a slow patch of time hurts the channel and
//! the queue alike instead of skewing one of them. The channel row shows the median over all
//! its rounds.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kubegen::workqueue::{Queue, RateLimitingQueue};
use tokio::runtime::Runtime;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

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

/// Where a round's keys go.
enum Sink {
    Channel(tokio::sync::mpsc::UnboundedSender<String>),
    Queue(Queue<String>),
}

/// One configuration under test: a sink with its consumers already running.
struct Subject {
    name: String,
    sink: Sink,
    progress: Arc<Progress>,
    consumers: Vec<JoinHandle<()>>,
    samples: Vec<Duration>,
}

impl Subject {
    /// The channel floor: one consumer task.
    fn channel() -> Self {
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
        Self {
            name: "mpsc unbounded, 1 consumer".to_owned(),
            sink: Sink::Channel(tx),
            progress,
            consumers: vec![consumer],
            samples: Vec::new(),
        }
    }

    /// A queue with `workers` tasks doing get + done.
    fn queue(name: String, queue: Queue<String>, workers: usize) -> Self {
        let progress = Arc::new(Progress::default());
        let consumers = (0..workers)
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
        Self {
            name,
            sink: Sink::Queue(queue),
            progress,
            consumers,
            samples: Vec::new(),
        }
    }

    /// Pushes the keys through once and returns the elapsed time.
    async fn round(&self, items: Vec<String>) -> Duration {
        self.progress
            .run_round(|| match &self.sink {
                Sink::Channel(tx) => {
                    for item in items {
                        let _ = tx.send(item);
                    }
                }
                Sink::Queue(queue) => {
                    for item in items {
                        queue.add(item);
                    }
                }
            })
            .await
    }

    async fn stop(self) {
        match self.sink {
            Sink::Channel(tx) => drop(tx),
            Sink::Queue(queue) => queue.shut_down(),
        }
        for consumer in self.consumers {
            let _ = consumer.await;
        }
    }
}

fn median<T: Copy + PartialOrd>(mut samples: Vec<T>) -> T {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    samples[samples.len() / 2]
}

/// One result row: median round time, median time of the channel rounds it was paired
/// with, and median per-pair ratio to the channel.
struct Row {
    name: String,
    round: Duration,
    floor: Duration,
    ratio: f64,
}

/// Runs each queue built by `queues` for `rounds` rounds (after one warm-up round), each
/// round paired with a channel round just before it, and returns the channel's row first.
fn run(
    runtime: &Runtime,
    rounds: usize,
    queues: impl FnOnce() -> Vec<(String, Queue<String>, usize)>,
) -> Vec<Row> {
    let keys = keys();
    runtime.block_on(async {
        let mut channel = Subject::channel();
        let mut rows = Vec::new();
        for (name, queue, workers) in queues() {
            let mut subject = Subject::queue(name, queue, workers);
            let mut ratios = Vec::with_capacity(rounds);
            let mut floors = Vec::with_capacity(rounds);
            for round in 0..=rounds {
                // Alternate which side goes first, so neither always runs in the wake of
                // the other.
                let (floor, t) = if round % 2 == 0 {
                    let floor = channel.round(keys.clone()).await;
                    (floor, subject.round(keys.clone()).await)
                } else {
                    let t = subject.round(keys.clone()).await;
                    (channel.round(keys.clone()).await, t)
                };
                if round > 0 {
                    // Round 0 warms up.
                    channel.samples.push(floor);
                    floors.push(floor);
                    subject.samples.push(t);
                    ratios.push(floor.as_secs_f64() / t.as_secs_f64());
                }
            }
            rows.push(Row {
                name: subject.name.clone(),
                round: median(subject.samples.clone()),
                floor: median(floors),
                ratio: median(ratios),
            });
            subject.stop().await;
        }
        rows.insert(
            0,
            Row {
                name: channel.name.clone(),
                round: median(channel.samples.clone()),
                floor: median(channel.samples.clone()),
                ratio: 1.0,
            },
        );
        channel.stop().await;
        rows
    })
}

fn print_table(title: &str, rows: &[Row]) {
    let per_sec = |d: Duration| KEYS as f64 / d.as_secs_f64();
    println!("{title}");
    println!(
        "{:<38} {:>11} {:>12} {:>15} {:>9}",
        "configuration", "round", "items/s", "paired mpsc", "vs mpsc"
    );
    for row in rows {
        println!(
            "{:<38} {:>8.3} ms {:>12.0} {:>12.3} ms {:>8.2}x",
            row.name,
            row.round.as_secs_f64() * 1e3,
            per_sec(row.round),
            row.floor.as_secs_f64() * 1e3,
            row.ratio,
        );
    }
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let rounds = if quick { 15 } else { 101 };
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let rows = run(&multi, rounds, || {
        let mut queues: Vec<_> = [1, 2, 8]
            .into_iter()
            .map(|workers| (format!("Queue, {workers} worker(s)"), Queue::new(), workers))
            .collect();
        for workers in [1, 8] {
            let queue: RateLimitingQueue<String> = RateLimitingQueue::default();
            queues.push((
                format!("RateLimitingQueue, {workers} worker(s)"),
                queue.as_queue().clone(),
                workers,
            ));
        }
        queues
    });

    // The same on a single-threaded runtime: no lock contention, the raw cost per item.
    let single = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let single_rows = run(&single, rounds, || {
        vec![("Queue, 1 worker".to_owned(), Queue::new(), 1)]
    });

    println!();
    print_table(
        &format!(
            "workqueue: add+get+done of {KEYS} distinct keys, medians of {rounds} interleaved \
             rounds, multi-thread runtime (2 threads)"
        ),
        &rows,
    );
    println!();
    print_table("single-thread runtime (no contention)", &single_rows);
}
